// The demo VM kit writes a libvirt test-driver node that DomainBinder binds to exactly: the
// primary domain through its single loopback portForward, undisturbed by a decoy domain on
// another port, and refused whenever the grant names anything else.
#include "tools/demovm/DemoNodeXml.h"
#include "vm/DomainBinder.h"
#include "vm/ForwardRuleParser.h"

#include <QProcess>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

using namespace gc;
using namespace gc::tools;

namespace {

const QString kUuid = QStringLiteral("6d8f2a3e-9c41-4b7a-8f0e-2b1c3d4e5f60");
const QString kDecoyUuid = QStringLiteral("0b7c1e22-5a6d-4f3e-9b8a-7c6d5e4f3a21");

} // namespace

class tst_DemoVm : public QObject {
  Q_OBJECT

private:
  QTemporaryDir m_dir;
  quint16 m_port = 0;  // the demo's host port
  quint16 m_other = 0; // another free port
  int m_nodes = 0;

  QString write(const DemoNodeXml& node) {
    const auto uri = node.writeTo(m_dir.filePath(QStringLiteral("node%1.xml").arg(++m_nodes)));
    return uri ? uri.value() : QString();
  }

  static VmTarget target(const QString& uri, const DemoNodeXml::Domain& d) {
    VmTarget t;
    t.uri = uri;
    t.uuid = d.uuid;
    t.name = d.name;
    t.hostPort = d.hostPort;
    return t;
  }

private slots:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    // Free ports (nothing listens on them afterwards), so the listener check has nothing to see.
    QTcpServer a;
    QTcpServer b;
    QVERIFY(a.listen(QHostAddress::LocalHost, 0));
    QVERIFY(b.listen(QHostAddress::LocalHost, 0));
    m_port = a.serverPort();
    m_other = b.serverPort();
  }

  void bindsTheGeneratedDemoVm_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("plain") << QStringLiteral("gc-demo");
    QTest::newRow("needs XML escaping") << QStringLiteral("win & <11> \"demo\"");
    QTest::newRow("non-ASCII") << QStringLiteral("Démo-VM");
  }

  void bindsTheGeneratedDemoVm() {
    QFETCH(QString, name);
    const DemoNodeXml node({kUuid, name, m_port});
    const QString uri = write(node);
    QVERIFY(uri.startsWith(QStringLiteral("test:///")));
    const auto bound = DomainBinder::bind(target(uri, node.primary()));
    QVERIFY2(bound.ok(), qPrintable(bound.ok() ? QString() : bound.failure().toString()));
    QCOMPARE(bound->uuid, kUuid);
    QCOMPARE(bound->name, name);
    QCOMPARE(bound->hostPort, m_port);
    QCOMPARE(bound->hostAddress, QStringLiteral("127.0.0.1"));
    QCOMPARE(bound->ruleSource, QStringLiteral("portForward"));
  }

  void declaresExactlyOneLoopbackForwardPerDomain() {
    DemoNodeXml node({kUuid, QStringLiteral("gc-demo"), m_port});
    QVERIFY(node.addDecoy({kDecoyUuid, QStringLiteral("decoy"), m_other}));
    for (const DemoNodeXml::Domain& d : node.domains()) {
      const auto rules = ForwardRuleParser::parse(QString::fromUtf8(DemoNodeXml::domainXml(d)), 3389);
      QVERIFY2(rules.ok(), qPrintable(rules.ok() ? QString() : rules.failure().toString()));
      QCOMPARE(rules->size(), 1);
      QVERIFY(rules->first().isLoopbackOnly());
      QVERIFY(!rules->first().isRange());
      QCOMPARE(rules->first().hostPortFirst, d.hostPort);
    }
  }

  void bindsEachDomainBesideADecoy_data() {
    QTest::addColumn<bool>("bindDecoy");
    QTest::newRow("primary") << false;
    QTest::newRow("decoy") << true;
  }

  void bindsEachDomainBesideADecoy() {
    QFETCH(bool, bindDecoy);
    DemoNodeXml node({kUuid, QStringLiteral("gc-demo"), m_port});
    QVERIFY(node.addDecoy({kDecoyUuid, QStringLiteral("gc-demo-decoy"), m_other}));
    const QString uri = write(node);
    const DemoNodeXml::Domain& which = node.domains().at(bindDecoy ? 1 : 0);
    const auto bound = DomainBinder::bind(target(uri, which));
    QVERIFY2(bound.ok(), qPrintable(bound.ok() ? QString() : bound.failure().toString()));
    QCOMPARE(bound->uuid, which.uuid);
    QCOMPARE(bound->hostPort, which.hostPort);
  }

  void refusesGrantsThatNameSomethingElse_data() {
    QTest::addColumn<QString>("uuid");
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("portChoice"); // 0: the demo's port, 1: the decoy's
    QTest::addColumn<QString>("code");
    QTest::newRow("decoy's port") << kUuid << QStringLiteral("gc-demo") << 1
                                  << QStringLiteral("RDP_PORT_MISMATCH");
    QTest::newRow("decoy's name") << kUuid << QStringLiteral("gc-demo-decoy") << 0
                                  << QStringLiteral("VM_NAME_MISMATCH");
    QTest::newRow("unknown uuid") << QStringLiteral("11111111-2222-4333-8444-555555555555")
                                  << QStringLiteral("gc-demo") << 0 << QStringLiteral("VM_NOT_FOUND");
  }

  void refusesGrantsThatNameSomethingElse() {
    QFETCH(QString, uuid);
    QFETCH(QString, name);
    QFETCH(int, portChoice);
    QFETCH(QString, code);
    DemoNodeXml node({kUuid, QStringLiteral("gc-demo"), m_port});
    QVERIFY(node.addDecoy({kDecoyUuid, QStringLiteral("gc-demo-decoy"), m_other}));
    const auto bound =
        DomainBinder::bind(target(write(node), {uuid, name, portChoice == 0 ? m_port : m_other}));
    QVERIFY(!bound.ok());
    QCOMPARE(refusalName(bound.code()), code);
  }

  void refusesDecoysThatWouldCollide_data() {
    QTest::addColumn<QString>("uuid");
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("port");
    QTest::newRow("same uuid") << kUuid.toUpper() << QStringLiteral("d") << 2;
    QTest::newRow("same name") << kDecoyUuid << QStringLiteral("gc-demo") << 2;
    QTest::newRow("same port") << kDecoyUuid << QStringLiteral("d") << 1;
    QTest::newRow("no uuid") << QStringLiteral("x") << QStringLiteral("d") << 2;
    QTest::newRow("no name") << kDecoyUuid << QString() << 2;
    QTest::newRow("port 0") << kDecoyUuid << QStringLiteral("d") << 0;
  }

  void refusesDecoysThatWouldCollide() {
    QFETCH(QString, uuid);
    QFETCH(QString, name);
    QFETCH(int, port);
    DemoNodeXml node({kUuid, QStringLiteral("gc-demo"), 1});
    QVERIFY(!node.addDecoy({uuid, name, quint16(port)}));
    QCOMPARE(node.domains().size(), 1);
  }

  void suggestsADecoyThatDiffersEverywhere_data() {
    QTest::addColumn<int>("port");
    QTest::addColumn<int>("decoyPort");
    QTest::newRow("next port") << 43389 << 43390;
    QTest::newRow("wraps at 65535") << 65535 << 1024;
  }

  void suggestsADecoyThatDiffersEverywhere() {
    QFETCH(int, port);
    QFETCH(int, decoyPort);
    DemoNodeXml node({kUuid, QStringLiteral("gc-demo"), quint16(port)});
    const DemoNodeXml::Domain decoy = node.suggestedDecoy();
    QCOMPARE(int(decoy.hostPort), decoyPort);
    QCOMPARE(decoy.name, QStringLiteral("gc-demo-decoy"));
    QVERIFY(node.addDecoy(decoy));
    QVERIFY(node.addDecoy(node.suggestedDecoy())); // a second one differs from both
    QCOMPARE(node.domains().at(2).name, QStringLiteral("gc-demo-decoy2"));
  }

  void theExecutableWritesABindableNode() {
    const QString path = m_dir.filePath(QStringLiteral("cli-node.xml"));
    QProcess process;
    process.start(QStringLiteral(GC_BIN_DIR "/gc-demo-vm"),
                  {QStringLiteral("--out"), path, QStringLiteral("--uuid"), kUuid.toUpper(),
                   QStringLiteral("--name"), QStringLiteral("cli-demo"), QStringLiteral("--port"),
                   QString::number(m_port), QStringLiteral("--decoy")});
    QVERIFY(process.waitForFinished(30000));
    QCOMPARE(process.exitCode(), 0);
    const QString uri = QString::fromUtf8(process.readAllStandardOutput()).trimmed();
    QCOMPARE(uri, DemoNodeXml::uriFor(path));
    const auto bound = DomainBinder::bind(target(uri, {kUuid, QStringLiteral("cli-demo"), m_port}));
    QVERIFY2(bound.ok(), qPrintable(bound.ok() ? QString() : bound.failure().toString()));
    const auto decoy =
        DomainBinder::bind(target(uri, {kUuid, QStringLiteral("cli-demo-decoy"), quint16(m_port + 1)}));
    QCOMPARE(decoy.ok() ? QStringLiteral("ok") : refusalName(decoy.code()),
             QStringLiteral("VM_NAME_MISMATCH"));
  }

  void theExecutableRefusesBadUsage_data() {
    QTest::addColumn<QStringList>("args");
    QTest::newRow("no out") << QStringList{"--port", "5"};
    QTest::newRow("no port") << QStringList{"--out", "x.xml"};
    QTest::newRow("port 0") << QStringList{"--out", "x.xml", "--port", "0"};
    QTest::newRow("bad uuid") << QStringList{"--out", "x.xml", "--port", "5", "--uuid", "nope"};
  }

  void theExecutableRefusesBadUsage() {
    QFETCH(QStringList, args);
    QProcess process;
    process.setWorkingDirectory(m_dir.path());
    process.start(QStringLiteral(GC_BIN_DIR "/gc-demo-vm"), args);
    QVERIFY(process.waitForFinished(30000));
    QCOMPARE(process.exitCode(), 2);
    QVERIFY(!QFile::exists(m_dir.filePath(QStringLiteral("x.xml"))));
  }
};

QTEST_GUILESS_MAIN(tst_DemoVm)
#include "tst_demovm.moc"
