// Binding a grant to the exact VM: the forward-rule parser on XML text fixtures
// (tests/data/vm, including the QEMU hostfwd form the test driver drops), the listener
// scanner, and DomainBinder against libvirt's test driver with node XML generated per test.
#include "vm/DomainBinder.h"
#include "vm/ForwardRuleParser.h"
#include "vm/LibvirtConnection.h"
#include "vm/ListenerScanner.h"

#include <QDir>
#include <QFile>
#include <QSet>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

using namespace gc;

Q_DECLARE_METATYPE(gc::Refusal)

namespace {

const QString kUuid = QStringLiteral("6d8f2a3e-9c41-4b7a-8f0e-2b1c3d4e5f60");
const QString kOtherUuid = QStringLiteral("0b7c1e22-5a6d-4f3e-9b8a-7c6d5e4f3a21");

QString readFixture(const QString& name) {
  QFile file(QStringLiteral(GC_VM_TEST_DATA "/") + name);
  if (!file.open(QIODevice::ReadOnly))
    return {};
  return QString::fromUtf8(file.readAll());
}

QStringList described(const QList<ForwardRule>& rules) {
  QStringList out;
  for (const ForwardRule& rule : rules)
    out.append(rule.describe());
  return out;
}

// <interface type='user'> with one portForward range; a null address omits the attribute.
QString portForward(const QString& address, const QString& rangeAttrs, const QString& extraAttrs = {}) {
  const QString addressAttr = address.isNull() ? QString() : QStringLiteral(" address='%1'").arg(address);
  return QStringLiteral(
             "<interface type='user'><portForward proto='tcp'%1%2><range %3/></portForward></interface>")
      .arg(addressAttr, extraAttrs, rangeAttrs);
}

QString range(quint16 start, quint16 to) {
  return QStringLiteral("start='%1' to='%2'").arg(start).arg(to);
}

// runstate: 1 running, 3 paused, 5 shut off (libvirt's test-driver namespace).
QString domain(const QString& name, const QString& uuid, const QString& devices, int runstate = 1) {
  const QString state =
      runstate == 1 ? QString() : QStringLiteral("<test:runstate>%1</test:runstate>").arg(runstate);
  return QStringLiteral("<domain type='test' xmlns:test='http://libvirt.org/schemas/domain/test/1.0'>"
                        "<name>%1</name><uuid>%2</uuid><memory>1024</memory><os><type>hvm</type></os>"
                        "<devices>%3</devices>%4</domain>")
      .arg(name, uuid, devices, state);
}

// Inodes of the listening sockets this process owns (so other processes' listeners on the
// shared machine do not disturb the "opens nothing" check).
QSet<quint64> ownListeningInodes() {
  QSet<quint64> owned;
  const QDir fds(QStringLiteral("/proc/self/fd"));
  for (const QString& entry : fds.entryList(QDir::System | QDir::NoDotAndDotDot)) {
    const QString target = QFile::symLinkTarget(fds.filePath(entry));
    const qsizetype open = target.indexOf(QStringLiteral("socket:["));
    if (open >= 0)
      owned.insert(target.mid(open + 8).chopped(1).toULongLong());
  }
  QSet<quint64> listening;
  const auto all = ListenerScanner::listeners();
  if (all)
    for (const auto& listener : all.value())
      if (owned.contains(listener.inode))
        listening.insert(listener.inode);
  return listening;
}

} // namespace

class tst_VmBinding : public QObject {
  Q_OBJECT

private:
  quint16 m_port = 0;  // the grant's host port
  quint16 m_other = 0; // another free port
  QTemporaryDir m_dir;
  int m_nodeCount = 0;

  // Writes a node XML file and returns its test-driver URI (each open gets a fresh state).
  QString nodeUri(const QString& domains) {
    const QString path = m_dir.filePath(QStringLiteral("node%1.xml").arg(++m_nodeCount));
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
      return {};
    file.write((QStringLiteral("<node>") + domains + QStringLiteral("</node>")).toUtf8());
    return QStringLiteral("test://") + path;
  }

  VmTarget target(const QString& uri) const {
    VmTarget t;
    t.uri = uri;
    t.uuid = kUuid;
    t.name = QStringLiteral("win");
    t.hostPort = m_port;
    return t;
  }

  QString happyDomain() const {
    return domain(QStringLiteral("win"), kUuid, portForward("127.0.0.1", range(m_port, 3389)));
  }

private slots:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    QTcpServer a;
    QTcpServer b;
    QVERIFY(a.listen(QHostAddress::LocalHost, 0));
    QVERIFY(b.listen(QHostAddress::LocalHost, 0));
    m_port = a.serverPort();
    m_other = b.serverPort();
  }

  // --- ForwardRuleParser on XML text -------------------------------------------------

  void parsesForwardsFromDomainXmlText_data() {
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<bool>("readable");
    QTest::addColumn<QStringList>("rules"); // rules reaching guest port 3389
    QTest::addColumn<QString>("policy");    // selectRule's verdict for host port 4000

    const auto row = [](const char* name, const char* fixture, bool readable, QStringList rules,
                        const char* policy) {
      QTest::newRow(name) << QString::fromLatin1(fixture) << readable << rules << QString::fromLatin1(policy);
    };
    row("hostfwd single", "hostfwd-single.xml", true, {"hostfwd 127.0.0.1:4000 -> guest 3389"}, "OK");
    row("hostfwd none", "hostfwd-none.xml", true, {}, "RDP_RULE_NONE");
    row("hostfwd without address", "hostfwd-no-address.xml", true, {"hostfwd *:4000 -> guest 3389"},
        "RDP_RULE_NOT_LOOPBACK");
    row("hostfwd empty protocol is tcp", "hostfwd-empty-protocol.xml", true,
        {"hostfwd 127.0.0.1:4000 -> guest 3389"}, "OK");
    row("hostfwd 0.0.0.0", "hostfwd-any-address.xml", true, {"hostfwd 0.0.0.0:4000 -> guest 3389"},
        "RDP_RULE_NOT_LOOPBACK");
    row("hostfwd two in one arg", "hostfwd-two.xml", true,
        {"hostfwd 127.0.0.1:4000 -> guest 3389", "hostfwd 127.0.0.1:4001 -> guest 3389"},
        "RDP_RULE_AMBIGUOUS");
    row("-nic with guest address, other guest port ignored", "hostfwd-nic-guest-address.xml", true,
        {"hostfwd 127.0.0.1:4000 -> guest 3389"}, "OK");
    row("hostfwd udp ignored", "hostfwd-udp.xml", true, {}, "RDP_RULE_NONE");
    row("-set netdev.ID.hostfwd", "hostfwd-set.xml", true, {"hostfwd *:4000 -> guest 3389"},
        "RDP_RULE_NOT_LOOPBACK");
    row("mixed portForward and hostfwd", "mixed-portforward-hostfwd.xml", true,
        {"portForward 127.0.0.1:4000 -> guest 3389", "hostfwd 127.0.0.1:4001 -> guest 3389"},
        "RDP_RULE_AMBIGUOUS");
    row("portForward range reaching 3389", "portforward-range.xml", true,
        {"portForward 127.0.0.1:4000-4010 -> guest 3386-3396"}, "RDP_RULE_RANGE");
    row("portForward to another guest port ignored", "portforward-other-guest-port.xml", true, {},
        "RDP_RULE_NONE");
    // QEMU has no hostfwd ranges; a range-looking spec is unparseable, so refused, not skipped.
    row("hostfwd range syntax refused", "hostfwd-range.xml", false, {}, "");
    row("hostfwd JSON form refused", "hostfwd-json.xml", false, {}, "");
    row("hostfwd host name refused", "hostfwd-hostname.xml", false, {}, "");
    row("portForward port out of range", "portforward-bad-port.xml", false, {}, "");
    row("external entity", "hostile-external-entity.xml", false, {}, "");
    row("entity expansion", "hostile-entity-expansion.xml", false, {}, "");
    row("not XML", "garbage.xml", false, {}, "");
    row("wrong root", "wrong-root.xml", false, {}, "");
    row("truncated", "truncated.xml", false, {}, "");
  }

  void parsesForwardsFromDomainXmlText() {
    QFETCH(QString, fixture);
    QFETCH(bool, readable);
    QFETCH(QStringList, rules);
    QFETCH(QString, policy);
    const QString xml = readFixture(fixture);
    QVERIFY2(!xml.isEmpty(), qPrintable(fixture));
    const auto parsed = ForwardRuleParser::parse(xml, 3389);
    if (!readable) {
      QVERIFY(!parsed.ok());
      QCOMPARE(refusalName(parsed.code()), QStringLiteral("RDP_RULE_AMBIGUOUS"));
      QVERIFY(
          parsed.failure().message.startsWith(QStringLiteral("the domain's forwards cannot be determined")));
      return;
    }
    QVERIFY2(parsed.ok(), qPrintable(parsed.ok() ? QString() : parsed.failure().message));
    QCOMPARE(described(parsed.value()), rules);
    VmTarget t;
    t.name = QStringLiteral("win");
    t.hostPort = 4000;
    const auto verdict = DomainBinder::selectRule(parsed.value(), t);
    QCOMPARE(verdict.ok() ? QStringLiteral("OK") : refusalName(verdict.code()), policy);
  }

  void parseAllKeepsEveryGuestPort() {
    const auto all =
        ForwardRuleParser::parseAll(readFixture(QStringLiteral("hostfwd-nic-guest-address.xml")));
    QVERIFY(all.ok());
    QCOMPARE(described(all.value()),
             QStringList({"hostfwd 127.0.0.1:4000 -> guest 3389", "hostfwd 127.0.0.1:4022 -> guest 22"}));
  }

  void refusesOversizeAndDeeplyNestedXml_data() {
    QTest::addColumn<QString>("xml");
    QString deep = QStringLiteral("<domain>");
    for (int i = 0; i < 100; ++i)
      deep += QStringLiteral("<x>");
    QTest::newRow("nesting") << deep;
    QTest::newRow("oversize") << (QStringLiteral("<domain><description>") +
                                  QString(ForwardRuleParser::kMaxXmlChars, QLatin1Char('a')) +
                                  QStringLiteral("</description></domain>"));
    QTest::newRow("empty") << QString();
  }

  void refusesOversizeAndDeeplyNestedXml() {
    QFETCH(QString, xml);
    const auto parsed = ForwardRuleParser::parse(xml, 3389);
    QVERIFY(!parsed.ok());
    QCOMPARE(parsed.code(), Refusal::RdpRuleAmbiguous);
  }

  void parsesOneHostFwdSpec_data() {
    QTest::addColumn<QString>("spec");
    QTest::addColumn<bool>("readable");
    QTest::addColumn<QStringList>("rules");
    QTest::newRow("full") << "tcp:127.0.0.1:4000-10.0.2.15:3389" << true
                          << QStringList{"hostfwd 127.0.0.1:4000 -> guest 3389"};
    QTest::newRow("no addresses") << "tcp::4000-:3389" << true << QStringList{"hostfwd *:4000 -> guest 3389"};
    QTest::newRow("ipv6 host") << "tcp:[::1]:4000-:3389" << true
                               << QStringList{"hostfwd [::1]:4000 -> guest 3389"};
    QTest::newRow("udp") << "udp::4000-:3389" << true << QStringList{};
    QTest::newRow("sctp") << "sctp::4000-:3389" << false << QStringList{};
    QTest::newRow("port too big") << "tcp::65536-:3389" << false << QStringList{};
    QTest::newRow("signed port") << "tcp::+4000-:3389" << false << QStringList{};
    QTest::newRow("no guest port") << "tcp::4000-" << false << QStringList{};
    QTest::newRow("empty") << "" << false << QStringList{};
  }

  void parsesOneHostFwdSpec() {
    QFETCH(QString, spec);
    QFETCH(bool, readable);
    QFETCH(QStringList, rules);
    const auto parsed = ForwardRuleParser::parseHostFwd(spec);
    QCOMPARE(parsed.ok(), readable);
    if (readable)
      QCOMPARE(described(parsed.value()), rules);
  }

  // --- ListenerScanner -----------------------------------------------------------------

  void parsesProcNetListeners_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QStringList>("listeners"); // "address port loopback|public"
    const QByteArray header =
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
    QTest::newRow("ipv4 loopback")
        << header + "   0: 0100007F:0FA0 00000000:0000 0A 00000000:00000000 00:00000000 "
                    "00000000     0        0 12345 1 0000000000000000 100 0 0 10 0\n"
        << QStringList{"127.0.0.1 4000 loopback"};
    QTest::newRow("ipv4 any, other 127/8") << header + "0: 00000000:0FA0 00000000:0000 0A x x x 0 0 1\n"
                                                       "1: 0200007F:0FA1 00000000:0000 0A x x x 0 0 2\n"
                                           << QStringList{"0.0.0.0 4000 public", "127.0.0.2 4001 loopback"};
    QTest::newRow("ipv4 lan, lowercase hex")
        << QByteArray("0: 0501a8c0:0fa0 00000000:0000 0a\n") << QStringList{"192.168.1.5 4000 public"};
    QTest::newRow("ipv6 forms")
        << header + "0: 00000000000000000000000000000000:0FA0 00000000000000000000000000000000:0000 0A\n"
                    "1: 00000000000000000000000001000000:0FA1 00000000000000000000000000000000:0000 0A\n"
                    "2: 0000000000000000FFFF000000000000:0FA2 00000000000000000000000000000000:0000 0A\n"
                    "3: 0000000000000000FFFF00000100007F:0FA3 00000000000000000000000000000000:0000 0A\n"
        << QStringList{"0:0:0:0:0:0:0:0 4000 public", "0:0:0:0:0:0:0:1 4001 loopback",
                       "0:0:0:0:0:ffff:0:0 4002 public", "0:0:0:0:0:ffff:7f00:1 4003 loopback"};
    QTest::newRow("not listening, garbage, odd spacing")
        << QByteArray("0: 0100007F:0FA0 0100007F:D431 01 x\n"
                      "garbage line\n"
                      "\t 7:\t0100007F:0FA4   00000000:0000\t0A  \n"
                      "8: 0100007F:ZZZZ 00000000:0000 0A\n"
                      "9: 0100007F 00000000:0000 0A\n"
                      "10: 0100007F:0FA5\n")
        << QStringList{"127.0.0.1 4004 loopback"};
  }

  void parsesProcNetListeners() {
    QFETCH(QByteArray, text);
    QFETCH(QStringList, listeners);
    QStringList got;
    for (const auto& listener : ListenerScanner::parse(text))
      got.append(QStringLiteral("%1 %2 %3")
                     .arg(listener.addressText(), QString::number(listener.port),
                          listener.isLoopback() ? QStringLiteral("loopback") : QStringLiteral("public")));
    QCOMPARE(got, listeners);
  }

  void seesRealListenersOnThePort() {
    QTcpServer server;
    QVERIFY(server.listen(QHostAddress::LocalHost, 0));
    const auto on = ListenerScanner::listenersOn(server.serverPort());
    QVERIFY(on.ok());
    QCOMPARE(on.value().size(), 1);
    QCOMPARE(on.value().first().addressText(), QStringLiteral("127.0.0.1"));
    QVERIFY(!ListenerScanner::hasPublicListener(server.serverPort()));
    QVERIFY(ownListeningInodes().contains(on.value().first().inode));
  }

  // --- DomainBinder against the test driver --------------------------------------------

  void bindsOnlyTheExactRunningVm_data() {
    QTest::addColumn<QString>("domains"); // node content
    QTest::addColumn<QString>("uuid");
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("code"); // "" = bound
    QTest::addColumn<QString>("message");

    const QString win = QStringLiteral("win");
    const QString good = portForward("127.0.0.1", range(m_port, 3389));
    const QString winGood = domain(win, kUuid, good);
    const auto row = [&](const char* name, const QString& domains, const QString& code,
                         const QString& message, const QString& uuid = kUuid,
                         const QString& grantName = QStringLiteral("win")) {
      QTest::newRow(name) << domains << uuid << grantName << code << message;
    };
    const QString port = QString::number(m_port);

    row("bound", winGood, {}, {});
    row("uppercase uuid", winGood, {}, {}, kUuid.toUpper());
    row("forward to another guest port ignored",
        domain(win, kUuid, portForward("127.0.0.1", range(m_other, 22)) + good), {}, {});
    row("another domain on another port",
        winGood + domain("other", kOtherUuid, portForward("127.0.0.1", range(m_other, 3389))), {}, {});

    row("unknown uuid", winGood, "VM_NOT_FOUND", "no domain with UUID " + kOtherUuid, kOtherUuid);
    row("not a uuid", winGood, "VM_NOT_FOUND", "is not a UUID", "win");
    row("name differs", winGood, "VM_NAME_MISMATCH", "is named 'win', the grant names 'win2'", kUuid, "win2");
    row("name checked before state", domain(win, kUuid, good, 5), "VM_NAME_MISMATCH", "named", kUuid, "Win");
    row("shut off", domain(win, kUuid, good, 5), "VM_NOT_RUNNING", "is shut off, not running");
    row("paused", domain(win, kUuid, good, 3), "VM_NOT_RUNNING", "is paused, not running");

    row("no interface", domain(win, kUuid, {}), "RDP_RULE_NONE", "no TCP forward to guest port 3389");
    row("only another guest port", domain(win, kUuid, portForward("127.0.0.1", range(m_port, 22))),
        "RDP_RULE_NONE", "no TCP forward to guest port 3389");
    row("udp forward only",
        domain(win, kUuid,
               QStringLiteral("<interface type='user'><portForward proto='udp' address='127.0.0.1'><range "
                              "start='%1' to='3389'/></portForward></interface>")
                   .arg(port)),
        "RDP_RULE_NONE", "no TCP forward");
    row("two portForwards in one interface",
        domain(win, kUuid,
               QStringLiteral("<interface type='user'><portForward proto='tcp' address='127.0.0.1'><range "
                              "start='%1' to='3389'/></portForward><portForward proto='tcp' "
                              "address='127.0.0.1'><range start='%2' to='3389'/></portForward></interface>")
                   .arg(port, QString::number(m_other))),
        "RDP_RULE_AMBIGUOUS", "has 2 TCP forwards to guest port 3389");
    row("two interfaces", domain(win, kUuid, good + portForward("127.0.0.1", range(m_other, 3389))),
        "RDP_RULE_AMBIGUOUS", "has 2 TCP forwards");
    row("ambiguity before loopback", domain(win, kUuid, portForward({}, range(m_port, 3389)) + good),
        "RDP_RULE_AMBIGUOUS", "has 2 TCP forwards");
    row("no address", domain(win, kUuid, portForward({}, range(m_port, 3389))), "RDP_RULE_NOT_LOOPBACK",
        "binds all interfaces");
    row("0.0.0.0", domain(win, kUuid, portForward("0.0.0.0", range(m_port, 3389))), "RDP_RULE_NOT_LOOPBACK",
        "binds address 0.0.0.0");
    row("::1", domain(win, kUuid, portForward("::1", range(m_port, 3389))), "RDP_RULE_NOT_LOOPBACK",
        "binds address ::1");
    row("127.0.0.2", domain(win, kUuid, portForward("127.0.0.2", range(m_port, 3389))),
        "RDP_RULE_NOT_LOOPBACK", "binds address 127.0.0.2");
    row("device other than lo",
        domain(win, kUuid, portForward("127.0.0.1", range(m_port, 3389), QStringLiteral(" dev='eth0'"))),
        "RDP_RULE_NOT_LOOPBACK", "on device eth0");
    row("range",
        domain(win, kUuid,
               portForward(
                   "127.0.0.1",
                   QStringLiteral("start='%1' end='%2' to='3389'").arg(port, QString::number(m_port + 1)))),
        "RDP_RULE_RANGE", "host port range " + port + "-" + QString::number(m_port + 1));
    row("other host port", domain(win, kUuid, portForward("127.0.0.1", range(m_other, 3389))),
        "RDP_PORT_MISMATCH",
        QStringLiteral("uses host port %1, the grant names %2").arg(QString::number(m_other), port));

    row("running domain claims the port",
        winGood + domain("other", kOtherUuid, portForward("127.0.0.1", range(m_port, 22))),
        "RDP_PORT_CONFLICT", "domain 'other' (running) also claims host port " + port);
    row("shut-off domain claims the port",
        winGood + domain("other", kOtherUuid, portForward("127.0.0.1", range(m_port, 3389)), 5),
        "RDP_PORT_CONFLICT", "domain 'other' (shut off) also claims host port " + port);
    row("another domain's range covers the port",
        winGood + domain("other", kOtherUuid,
                         portForward({}, QStringLiteral("start='%1' end='%2'")
                                             .arg(QString::number(m_port - 1), QString::number(m_port + 1)))),
        "RDP_PORT_CONFLICT", "also claims host port " + port);
    row("same domain forwards the port twice",
        domain(win, kUuid, good + portForward("0.0.0.0", range(m_port, 22))), "RDP_PORT_CONFLICT",
        "domain 'win' also forwards host port " + port);
  }

  void bindsOnlyTheExactRunningVm() {
    QFETCH(QString, domains);
    QFETCH(QString, uuid);
    QFETCH(QString, name);
    QFETCH(QString, code);
    QFETCH(QString, message);
    const QString uri = nodeUri(domains);
    QVERIFY(!uri.isEmpty());
    VmTarget t = target(uri);
    t.uuid = uuid;
    t.name = name;

    const QSet<quint64> before = ownListeningInodes();
    const auto bound = DomainBinder::bind(t);
    QCOMPARE(ownListeningInodes(), before); // binding never opens a socket
    QCOMPARE(ListenerScanner::listenersOn(m_port).value().size(), 0);

    if (code.isEmpty()) {
      QVERIFY2(bound.ok(), qPrintable(bound.ok() ? QString() : bound.failure().toString()));
      QCOMPARE(bound->uri, uri);
      QCOMPARE(bound->uuid, kUuid);
      QCOMPARE(bound->name, QStringLiteral("win"));
      QCOMPARE(bound->hostPort, m_port);
      QCOMPARE(bound->hostAddress, QStringLiteral("127.0.0.1"));
      QCOMPARE(bound->ruleSource, QStringLiteral("portForward"));
      return;
    }
    QVERIFY2(!bound.ok(), "bound although a refusal was expected");
    QCOMPARE(refusalName(bound.code()), code);
    QVERIFY2(bound.failure().message.contains(message), qPrintable(bound.failure().message));
  }

  void refusesWhenLibvirtIsUnavailable_data() {
    QTest::addColumn<QString>("uri");
    QTest::addColumn<Refusal>("code");
    QTest::newRow("missing node file")
        << QStringLiteral("test:///nonexistent/file.xml") << Refusal::LibvirtUnavailable;
    QTest::newRow("empty") << QString() << Refusal::LibvirtUnavailable;
    // Defence in depth: LibvirtConnection refuses these itself, before libvirt is called,
    // whoever hands them in (issue 15 point 1; the grant loader refuses them first).
    QTest::newRow("unknown scheme") << QStringLiteral("nosuchdriver:///x") << Refusal::LibvirtUriForbidden;
    QTest::newRow("+ext transport") << QStringLiteral("test+ext:///default?command=/bin/false")
                                    << Refusal::LibvirtUriForbidden;
    QTest::newRow("remote host") << QStringLiteral("qemu+tcp://127.0.0.2/system")
                                 << Refusal::LibvirtUriForbidden;
  }

  void refusesWhenLibvirtIsUnavailable() {
    QFETCH(QString, uri);
    QFETCH(Refusal, code);
    const auto bound = DomainBinder::bind(target(uri));
    QVERIFY(!bound.ok());
    QCOMPARE(refusalName(bound.code()), refusalName(code));
    QVERIFY(!bound.failure().message.isEmpty());
  }

  void bindsThroughAnOpenReadWriteConnection() {
    auto connection = LibvirtConnection::openReadWrite(nodeUri(happyDomain()));
    QVERIFY(connection.ok());
    QVERIFY(!connection->isReadOnly());
    QVERIFY(connection->isAlive());
    const auto bound = DomainBinder::bind(connection.value(), target(connection->uri()));
    QVERIFY2(bound.ok(), qPrintable(bound.ok() ? QString() : bound.failure().toString()));
    // A moved-from wrapper is empty and refuses cleanly.
    LibvirtConnection moved = std::move(connection).value();
    QVERIFY(moved.isAlive());
  }

  void refusesAPublicListenerOnTheGrantsPort_data() {
    QTest::addColumn<QString>("address");
    QTest::addColumn<QString>("code");
    QTest::newRow("0.0.0.0") << QStringLiteral("0.0.0.0") << QStringLiteral("PUBLIC_LISTENER");
    QTest::newRow("::") << QStringLiteral("::") << QStringLiteral("PUBLIC_LISTENER");
    QTest::newRow("loopback only is accepted") << QStringLiteral("127.0.0.1") << QString();
  }

  void refusesAPublicListenerOnTheGrantsPort() {
    QFETCH(QString, address);
    QFETCH(QString, code);
    // A real listener on the grant's port, as a misconfigured guest forward would leave.
    QTcpServer listener;
    if (!listener.listen(QHostAddress(address), m_port)) {
      if (address == QLatin1String("::"))
        QSKIP("IPv6 is not available");
      QFAIL(qPrintable(listener.errorString()));
    }
    const auto bound = DomainBinder::bind(target(nodeUri(happyDomain())));
    if (code.isEmpty()) {
      QVERIFY2(bound.ok(), qPrintable(bound.ok() ? QString() : bound.failure().toString()));
      return;
    }
    QVERIFY(!bound.ok());
    QCOMPARE(refusalName(bound.code()), code);
    QVERIFY2(bound.failure().message.contains(QStringLiteral("host port %1 is also listened on").arg(m_port)),
             qPrintable(bound.failure().message));
  }
};

QTEST_GUILESS_MAIN(tst_VmBinding)
#include "tst_vmbinding.moc"
