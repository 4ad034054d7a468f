// DemoNodeXml: a libvirt test-driver node (a "test:///ABS/PATH.xml" connection) holding a
// demo VM that DomainBinder accepts: one running domain with the given UUID and name and a
// user-mode interface whose single portForward binds 127.0.0.1:PORT to guest port 3389 —
// the shape a real per-run VM has. Optionally decoys: other running domains, with other
// names, UUIDs and host ports, so a demo shows that binding picks exactly one VM.
//
// libvirt 9.0's test driver parses <portForward> with the ordinary domain parser and
// returns it unchanged from virDomainGetXMLDesc (tst_demovm checks the round trip); it
// runs nothing, so the forward is declarative: the demo runs gc-test-guest on PORT itself.
//
// Thread: a value type; use from any thread.
#pragma once

#include "common/Outcome.h"

#include <QByteArray>
#include <QList>
#include <QString>

class QXmlStreamWriter;

namespace gc::tools {

class DemoNodeXml {
public:
  struct Domain {
    QString uuid;
    QString name;
    quint16 hostPort = 0;
  };

  explicit DemoNodeXml(Domain primary);

  // Adds a running decoy domain. Decoys must differ from every domain already present in
  // UUID, name and host port (addDecoy refuses otherwise and returns false).
  bool addDecoy(const Domain& decoy);
  // A decoy derived from the primary: name "<name>-decoy", a fresh UUID, and the next free
  // host port above the primary's (wrapping below it at 65535).
  Domain suggestedDecoy() const;

  const Domain& primary() const { return m_domains.first(); }
  const QList<Domain>& domains() const { return m_domains; }

  // The node document (UTF-8, names XML-escaped).
  QByteArray toXml() const;
  // One <domain> element alone, as virDomainDefineXML or ForwardRuleParser take it.
  static QByteArray domainXml(const Domain& domain);
  // Writes toXml() to `path` (atomically replacing it; nothing in it is secret) and returns
  // the connection URI "test://" + absolute path. Failure code: INTERNAL.
  Outcome<QString> writeTo(const QString& path) const;

  static QString uriFor(const QString& path);

private:
  static void writeDomain(QXmlStreamWriter& xml, const Domain& domain);

  QList<Domain> m_domains;
};

} // namespace gc::tools
