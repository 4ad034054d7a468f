#include "common/LibvirtUriRule.h"

#include <QRegularExpression>

namespace gc {

namespace {

Status forbidden(const QString& why) {
  return Status(Refusal::LibvirtUriForbidden,
                QStringLiteral("vm.libvirt_uri: %1; accepted: qemu:///system, qemu:///session, "
                               "test:///default, test:///ABSOLUTE/PATH")
                    .arg(why));
}

} // namespace

Status LibvirtUriRule::check(const QString& uri) {
  if (uri == u"qemu:///system" || uri == u"qemu:///session" || uri == u"test:///default")
    return success();
  // Reasons are named for the common attacks; the URI itself is not echoed (it may be long
  // or carry a command line).
  const qsizetype scheme = uri.indexOf(QStringLiteral("://"));
  if (scheme < 0)
    return forbidden(QStringLiteral("not a URI of the form driver:///…"));
  const QString driver = uri.left(scheme);
  if (driver.contains(u'+'))
    return forbidden(QStringLiteral("a transport (\"+…\") is not allowed"));
  if (driver != u"test" && driver != u"qemu")
    return forbidden(QStringLiteral("only the qemu and test drivers are allowed"));
  const QString rest = uri.mid(scheme + 3);
  if (!rest.startsWith(u'/'))
    return forbidden(QStringLiteral("a host, user or port is not allowed"));
  if (rest.contains(u'?'))
    return forbidden(QStringLiteral("a query string is not allowed"));
  if (rest.contains(u'#'))
    return forbidden(QStringLiteral("a fragment is not allowed"));
  if (rest.contains(u'%'))
    return forbidden(QStringLiteral("%-escapes are not allowed"));
  if (driver == u"qemu")
    return forbidden(QStringLiteral("qemu allows only /system and /session"));
  if (rest.size() > 1024)
    return forbidden(QStringLiteral("the path is longer than 1024 characters"));
  static const QRegularExpression segment(QStringLiteral("\\A[A-Za-z0-9._~+=,@-]+\\z"));
  const QStringList parts = rest.mid(1).split(u'/');
  for (const QString& part : parts) {
    if (part.isEmpty())
      return forbidden(QStringLiteral("the path has an empty segment (\"//\" or a trailing \"/\")"));
    if (part == u"." || part == u"..")
      return forbidden(QStringLiteral("the path is not normalised (\".\" or \"..\")"));
    if (!segment.match(part).hasMatch())
      return forbidden(QStringLiteral("the path has a character outside [A-Za-z0-9._~+=,@-/]"));
  }
  return success();
}

} // namespace gc
