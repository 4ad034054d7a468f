#include "tools/demovm/DemoNodeXml.h"

#include <QFileInfo>
#include <QSaveFile>
#include <QUuid>
#include <QXmlStreamWriter>

#include <algorithm>

namespace gc::tools {

DemoNodeXml::DemoNodeXml(Domain primary) : m_domains{std::move(primary)} {}

bool DemoNodeXml::addDecoy(const Domain& decoy) {
  const QUuid uuid = QUuid::fromString(decoy.uuid);
  if (uuid.isNull() || decoy.name.isEmpty() || decoy.hostPort == 0)
    return false;
  for (const Domain& d : m_domains)
    if (QUuid::fromString(d.uuid) == uuid || d.name == decoy.name || d.hostPort == decoy.hostPort)
      return false;
  m_domains.append(decoy);
  return true;
}

DemoNodeXml::Domain DemoNodeXml::suggestedDecoy() const {
  const auto taken = [&](quint32 port) {
    for (const Domain& d : m_domains)
      if (d.hostPort == port)
        return true;
    return false;
  };
  quint32 port = primary().hostPort;
  do
    port = port >= 65535 ? 1024 : port + 1;
  while (taken(port));
  QString name = primary().name + QStringLiteral("-decoy");
  for (int n = 2;
       std::any_of(m_domains.begin(), m_domains.end(), [&](const Domain& d) { return d.name == name; }); ++n)
    name = primary().name + QStringLiteral("-decoy%1").arg(n);
  return Domain{QUuid::createUuid().toString(QUuid::WithoutBraces), name, quint16(port)};
}

QByteArray DemoNodeXml::toXml() const {
  QByteArray out;
  QXmlStreamWriter xml(&out);
  xml.setAutoFormatting(true);
  xml.setAutoFormattingIndent(2);
  xml.writeStartElement(QStringLiteral("node"));
  for (const Domain& d : m_domains)
    writeDomain(xml, d);
  xml.writeEndElement(); // node
  xml.writeEndDocument();
  return out;
}

QByteArray DemoNodeXml::domainXml(const Domain& domain) {
  QByteArray out;
  QXmlStreamWriter xml(&out);
  xml.setAutoFormatting(true);
  xml.setAutoFormattingIndent(2);
  writeDomain(xml, domain);
  return out;
}

void DemoNodeXml::writeDomain(QXmlStreamWriter& xml, const Domain& d) {
  // Test-driver domains are running unless they carry <test:runstate>.
  xml.writeStartElement(QStringLiteral("domain"));
  xml.writeAttribute(QStringLiteral("type"), QStringLiteral("test"));
  xml.writeTextElement(QStringLiteral("name"), d.name);
  xml.writeTextElement(QStringLiteral("uuid"), d.uuid);
  xml.writeStartElement(QStringLiteral("memory"));
  xml.writeAttribute(QStringLiteral("unit"), QStringLiteral("MiB"));
  xml.writeCharacters(QStringLiteral("2048"));
  xml.writeEndElement();
  xml.writeTextElement(QStringLiteral("vcpu"), QStringLiteral("2"));
  xml.writeStartElement(QStringLiteral("os"));
  xml.writeTextElement(QStringLiteral("type"), QStringLiteral("hvm"));
  xml.writeEndElement();
  xml.writeStartElement(QStringLiteral("devices"));
  xml.writeStartElement(QStringLiteral("interface"));
  xml.writeAttribute(QStringLiteral("type"), QStringLiteral("user"));
  xml.writeStartElement(QStringLiteral("portForward"));
  xml.writeAttribute(QStringLiteral("proto"), QStringLiteral("tcp"));
  xml.writeAttribute(QStringLiteral("address"), QStringLiteral("127.0.0.1"));
  xml.writeEmptyElement(QStringLiteral("range"));
  xml.writeAttribute(QStringLiteral("start"), QString::number(d.hostPort));
  xml.writeAttribute(QStringLiteral("to"), QStringLiteral("3389"));
  xml.writeEndElement(); // portForward
  xml.writeEndElement(); // interface
  xml.writeEndElement(); // devices
  xml.writeEndElement(); // domain
}

Outcome<QString> DemoNodeXml::writeTo(const QString& path) const {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(toXml()) < 0 || !file.commit())
    return Failure{Refusal::Internal, QStringLiteral("cannot write %1: %2").arg(path, file.errorString())};
  return uriFor(path);
}

QString DemoNodeXml::uriFor(const QString& path) {
  // test:// + "/abs/path" gives the driver's "test:///abs/path" form.
  return QStringLiteral("test://") + QFileInfo(path).absoluteFilePath();
}

} // namespace gc::tools
