// gc-demo-vm: writes a libvirt test-driver node with a demo VM (see DemoNodeXml.h) and prints
// its connection URI, e.g. test:///tmp/demo/node.xml.
#include "tools/demovm/DemoNodeXml.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QTextStream>
#include <QUuid>

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  QCoreApplication::setApplicationName(QStringLiteral("gc-demo-vm"));
  QTextStream out(stdout);
  QTextStream err(stderr);

  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("Writes a libvirt test-driver node XML with one running demo domain whose single\n"
                     "portForward binds 127.0.0.1:PORT to guest port 3389, and prints its test:/// URI."));
  parser.addHelpOption();
  parser.addOption(
      {QStringLiteral("out"), QStringLiteral("The node XML file to write."), QStringLiteral("FILE")});
  parser.addOption({QStringLiteral("uuid"), QStringLiteral("The domain's UUID (default: random)."),
                    QStringLiteral("UUID")});
  parser.addOption({QStringLiteral("name"), QStringLiteral("The domain's name."), QStringLiteral("NAME"),
                    QStringLiteral("gc-demo")});
  parser.addOption({QStringLiteral("port"), QStringLiteral("The host port forwarded to guest port 3389."),
                    QStringLiteral("PORT")});
  parser.addOption({QStringLiteral("decoy"),
                    QStringLiteral("Add a second running domain (<name>-decoy) on another host port.")});
  parser.process(app);

  const auto usage = [&](const QString& message) {
    err << "gc-demo-vm: " << message << Qt::endl;
    return 2;
  };
  if (!parser.positionalArguments().isEmpty())
    return usage(QStringLiteral("unexpected argument %1").arg(parser.positionalArguments().first()));
  const QString outPath = parser.value(QStringLiteral("out"));
  if (outPath.isEmpty())
    return usage(QStringLiteral("--out FILE is required"));
  bool ok = false;
  const uint port = parser.value(QStringLiteral("port")).toUInt(&ok);
  if (!ok || port == 0 || port > 65535)
    return usage(QStringLiteral("--port must be 1..65535"));
  QString uuid = parser.value(QStringLiteral("uuid"));
  if (uuid.isEmpty())
    uuid = QUuid::createUuid().toString(QUuid::WithoutBraces);
  if (QUuid::fromString(uuid).isNull())
    return usage(QStringLiteral("--uuid is not a UUID"));
  const QString name = parser.value(QStringLiteral("name"));
  if (name.isEmpty())
    return usage(QStringLiteral("--name must not be empty"));

  gc::tools::DemoNodeXml node({uuid.toLower(), name, quint16(port)});
  if (parser.isSet(QStringLiteral("decoy")))
    node.addDecoy(node.suggestedDecoy());
  const auto uri = node.writeTo(outPath);
  if (!uri) {
    err << "gc-demo-vm: " << uri.failure().message << Qt::endl;
    return 1;
  }
  out << uri.value() << Qt::endl;
  return 0;
}
