#include "app/AppPaths.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>

#include <sys/stat.h>
#include <unistd.h>

namespace gc {

void addGlobalOptions(QCommandLineParser& parser) {
  parser.addOptions({
      {QStringLiteral("state-dir"), QStringLiteral("Evidence and the consumed-grants ledger."),
       QStringLiteral("dir")},
      {QStringLiteral("runtime-dir"), QStringLiteral("Root of the private run directories."),
       QStringLiteral("dir")},
      {QStringLiteral("issuer-key"), QStringLiteral("Ed25519 public key (PEM): grants must be signed by it."),
       QStringLiteral("file")},
      {QStringLiteral("max-grant-lifetime"), QStringLiteral("Longest accepted grant lifetime (e.g. 8h)."),
       QStringLiteral("duration")},
      {QStringLiteral("grant-freshness"), QStringLiteral("Oldest accepted issued_at (e.g. 15m)."),
       QStringLiteral("duration")},
  });
}

std::optional<std::chrono::seconds> parseDuration(const QString& text) {
  static const QRegularExpression shape(QStringLiteral("^([0-9]{1,7})([smh]?)$"));
  const auto m = shape.match(text);
  if (!m.hasMatch())
    return std::nullopt;
  const qint64 n = m.captured(1).toLongLong();
  const QString unit = m.captured(2);
  const qint64 factor = unit == QLatin1String("h") ? 3600 : unit == QLatin1String("m") ? 60 : 1;
  return std::chrono::seconds(n * factor);
}

Outcome<AppPaths> resolvePaths(const QCommandLineParser& parser) {
  AppPaths paths;
  const QString home = QDir::homePath();
  const QByteArray xdgState = qgetenv("XDG_STATE_HOME");
  paths.stateDir = parser.isSet(QStringLiteral("state-dir")) ? parser.value(QStringLiteral("state-dir"))
                   : !xdgState.isEmpty() ? QFile::decodeName(xdgState) + QStringLiteral("/guest-console")
                                         : home + QStringLiteral("/.local/state/guest-console");
  const QByteArray xdgRuntime = qgetenv("XDG_RUNTIME_DIR");
  if (parser.isSet(QStringLiteral("runtime-dir"))) {
    paths.runtimeDir = parser.value(QStringLiteral("runtime-dir"));
  } else if (!xdgRuntime.isEmpty()) {
    paths.runtimeDir = QFile::decodeName(xdgRuntime);
  } else {
    // No XDG runtime dir (e.g. a root shell without a session): a private one in /tmp.
    paths.runtimeDir = QStringLiteral("/tmp/guest-console-%1").arg(::geteuid());
    if (::mkdir(QFile::encodeName(paths.runtimeDir).constData(), 0700) != 0 && errno != EEXIST)
      return Failure{Refusal::PrivacyViolation, QStringLiteral("cannot create %1").arg(paths.runtimeDir)};
  }
  for (QString* dir : {&paths.stateDir, &paths.runtimeDir}) {
    if (!QDir::isAbsolutePath(*dir))
      *dir = QDir::current().absoluteFilePath(*dir);
    *dir = QDir::cleanPath(*dir);
  }
  struct stat st {};
  if (::lstat(QFile::encodeName(paths.runtimeDir).constData(), &st) != 0 || !S_ISDIR(st.st_mode) ||
      st.st_uid != ::geteuid() || (st.st_mode & 0077) != 0)
    return Failure{
        Refusal::PrivacyViolation,
        QStringLiteral("runtime dir %1 must be a directory of ours with mode 0700").arg(paths.runtimeDir)};
  return paths;
}

Outcome<GrantPolicy> resolvePolicy(const QCommandLineParser& parser) {
  GrantPolicy policy;
  for (const auto& [name, field] : {std::pair{QStringLiteral("max-grant-lifetime"), &policy.maxLifetime},
                                    std::pair{QStringLiteral("grant-freshness"), &policy.freshness}}) {
    if (!parser.isSet(name))
      continue;
    const auto value = parseDuration(parser.value(name));
    if (!value || value->count() == 0)
      return Failure{Refusal::Internal,
                     QStringLiteral("--%1: expected a duration like 90s, 15m or 8h").arg(name)};
    *field = *value;
  }
  if (parser.isSet(QStringLiteral("issuer-key"))) {
    QFile key(parser.value(QStringLiteral("issuer-key")));
    if (!key.open(QIODevice::ReadOnly) || key.size() > 16 * 1024)
      return Failure{Refusal::GrantSignature, QStringLiteral("cannot read the issuer key")};
    policy.issuerPublicKeyPem = key.readAll();
    if (policy.issuerPublicKeyPem.isEmpty())
      return Failure{Refusal::GrantSignature, QStringLiteral("the issuer key file is empty")};
  }
  return policy;
}

} // namespace gc
