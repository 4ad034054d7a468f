#include "bridge/panel/PanelServer.h"
#include "session/Phase.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTest>
#include <QWebSocket>

#include <memory>

using namespace gc;

namespace {

QByteArray randomCapability() {
  QByteArray cap(32, '\0');
  QRandomGenerator::system()->fillRange(reinterpret_cast<quint32*>(cap.data()), 8);
  return cap;
}

PanelPolicy makePolicy() {
  PanelPolicy p;
  p.run = QStringLiteral("run-7");
  p.task = QStringLiteral("task-3");
  p.capability = randomCapability();
  p.panelMetadata = QJsonObject{{QStringLiteral("title"), QStringLiteral("Prepare Notepad")}};
  p.extraOrigins = {QStringLiteral("http://127.0.0.1:8080")};
  return p;
}

QString helloFor(const PanelPolicy& p, const QString& capHex = {}, const QString& run = {},
                 const QString& extra = {}) {
  return QStringLiteral("{\"type\":\"hello\",\"run\":\"%1\",\"task\":\"%2\",\"capability\":\"%3\","
                        "\"client\":{\"kind\":\"test\",\"version\":\"1\"}%4}")
      .arg(run.isEmpty() ? p.run : run, p.task,
           capHex.isEmpty() ? QString::fromLatin1(p.capability.toHex()) : capHex, extra);
}

// A real WebSocket client on loopback that remembers what the console told it.
struct Client {
  explicit Client(const QString& origin = {}) : socket(origin) {
    QObject::connect(&socket, &QWebSocket::textMessageReceived, [this](const QString& m) {
      received.append(QJsonDocument::fromJson(m.toUtf8()).object());
    });
  }
  bool open(quint16 port) {
    QSignalSpy connected(&socket, &QWebSocket::connected);
    socket.open(QUrl(QStringLiteral("ws://127.0.0.1:%1").arg(port)));
    return connected.wait(3000);
  }
  bool waitClosed() {
    if (socket.state() == QAbstractSocket::UnconnectedState)
      return true;
    QSignalSpy closed(&socket, &QWebSocket::disconnected);
    return closed.wait(5000);
  }
  QStringList errorCodes() const {
    QStringList codes;
    for (const auto& m : received)
      if (m.value(QStringLiteral("type")) == QLatin1String("error"))
        codes << m.value(QStringLiteral("code")).toString();
    return codes;
  }
  QWebSocket socket;
  QList<QJsonObject> received;
};

struct Rig {
  Rig() : policy(makePolicy()), server(std::make_unique<PanelServer>(policy)) {}
  explicit Rig(PanelPolicy p) : policy(std::move(p)), server(std::make_unique<PanelServer>(policy)) {}
  bool start() { return server->listen(); }
  std::unique_ptr<Client> authorizedClient() {
    auto c = std::make_unique<Client>();
    QSignalSpy authorized(server.get(), &PanelServer::panelAuthorized);
    if (!c->open(server->port()))
      return nullptr;
    c->socket.sendTextMessage(helloFor(policy));
    if (!authorized.wait(3000))
      return nullptr;
    return c;
  }
  PanelPolicy policy;
  std::unique_ptr<PanelServer> server;
};

} // namespace

class tst_PanelServer : public QObject {
  Q_OBJECT
private slots:
  // The C++ side follows resources/protocol/panel-protocol.json, the protocol's source of
  // truth (the extension's protocolSync test holds the TypeScript side to the same file).
  void followsTheProtocolSourceOfTruth() {
    QFile file(QStringLiteral(GC_PROTOCOL_JSON));
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QJsonObject spec = QJsonDocument::fromJson(file.readAll()).object();
    QCOMPARE(spec.value(QStringLiteral("version")).toInt(), panel::kProtocolVersion);
    const QJsonObject limits = spec.value(QStringLiteral("limits")).toObject();
    QCOMPARE(limits.value(QStringLiteral("maxTextMessageBytes")).toInt(), int(panel::kMaxTextMessageBytes));
    QCOMPARE(limits.value(QStringLiteral("helloDeadlineMs")).toInt(), panel::kHelloDeadlineMs);
    QCOMPARE(limits.value(QStringLiteral("maxUnackedFrames")).toInt(), panel::kMaxUnackedFrames);
    QCOMPARE(limits.value(QStringLiteral("maxMessagesPerSecond")).toInt(), panel::kMaxMessagesPerSecond);
    const PanelPolicy defaults;
    QCOMPARE(defaults.helloDeadlineMs, panel::kHelloDeadlineMs);
    QCOMPARE(defaults.maxMessagesPerSecond, panel::kMaxMessagesPerSecond);
    // Every panel→console type parses (with its fields), nothing else does.
    const QJsonObject in = spec.value(QStringLiteral("panelToConsole")).toObject();
    QCOMPARE(in.keys(),
             (QStringList{QStringLiteral("close"), QStringLiteral("frame_ack"),
                          QStringLiteral("frame_refresh"), QStringLiteral("hello"), QStringLiteral("key"),
                          QStringLiteral("lock"), QStringLiteral("pointer")}));
    // Every console→panel message the console writes carries a type the spec lists, with its fields.
    const QJsonObject out = spec.value(QStringLiteral("consoleToPanel")).toObject();
    const QList<QByteArray> written{panel::welcome(QStringLiteral("r"), QStringLiteral("t"),
                                                   QStringLiteral("vm"), {}, QStringLiteral("SETUP"), 1, 1),
                                    panel::phase(QStringLiteral("SETUP"), QStringLiteral("x")),
                                    panel::inputAck(1),
                                    panel::inputRefused(1, Refusal::PhaseLocked),
                                    panel::drained(1),
                                    panel::error(Refusal::Flood, QStringLiteral("m")),
                                    panel::bye(QStringLiteral("x"))};
    QCOMPARE(written.size(), out.size());
    for (const QByteArray& message : written) {
      const QJsonObject o = QJsonDocument::fromJson(message).object();
      const QString type = o.value(QStringLiteral("type")).toString();
      QVERIFY2(out.contains(type), qPrintable(type));
      QStringList fields = o.keys();
      fields.removeAll(QStringLiteral("type"));
      QCOMPARE(fields, out.value(type).toObject().keys());
    }
    QStringList phases;
    for (const QJsonValue p : spec.value(QStringLiteral("phases")).toArray())
      phases << p.toString();
    QStringList ours;
    for (Phase p : kAllPhases)
      ours << phaseName(p);
    QCOMPARE(phases, ours);
  }

  void listensOnLoopbackOnly() {
    Rig rig;
    QVERIFY(rig.start());
    QVERIFY(rig.server->port() != 0);
    // Nothing answers on the machine's other addresses: the server bound 127.0.0.1 only.
    QTcpSocket probe;
    probe.connectToHost(QHostAddress(QStringLiteral("127.0.0.2")), rig.server->port());
    QVERIFY(!probe.waitForConnected(1000));
  }

  void authorizesTheRightHello() {
    Rig rig;
    QVERIFY(rig.start());
    auto client = rig.authorizedClient();
    QVERIFY(client);
    QVERIFY(rig.server->hasPanel());
  }

  void refusesBadHello_data() {
    QTest::addColumn<QString>("first");
    QTest::addColumn<QString>("code");
    const PanelPolicy p = makePolicy(); // a different capability than the rig's
    QTest::newRow("wrong capability") << helloFor(p) << "PANEL_UNAUTHORIZED";
    QTest::newRow("capability not hex") << helloFor(p, QStringLiteral("zz")) << "PANEL_UNAUTHORIZED";
    QTest::newRow("key before hello")
        << QStringLiteral("{\"type\":\"key\",\"seq\":1,\"scancode\":30,\"down\":true}")
        << "PANEL_UNAUTHORIZED";
    QTest::newRow("garbage") << QStringLiteral("hello?") << "PANEL_UNAUTHORIZED";
  }
  void refusesBadHello() {
    QFETCH(QString, first);
    QFETCH(QString, code);
    Rig rig;
    QVERIFY(rig.start());
    Client c;
    QVERIFY(c.open(rig.server->port()));
    QSignalSpy authorized(rig.server.get(), &PanelServer::panelAuthorized);
    c.socket.sendTextMessage(first);
    QVERIFY(c.waitClosed());
    QCOMPARE(c.errorCodes(), QStringList{code});
    QCOMPARE(authorized.count(), 0);
    QCOMPARE(rig.server->refusals().value(*refusalFromName(code)), quint64(1));
  }

  void refusesWrongRunTaskOrPanelMetadata_data() {
    QTest::addColumn<QString>("run");
    QTest::addColumn<QString>("extra");
    QTest::newRow("wrong run") << QStringLiteral("run-8") << QString();
    QTest::newRow("wrong panel title") << QString() << QStringLiteral(",\"panel\":{\"title\":\"Other\"}");
    QTest::newRow("extra panel field") << QString() << QStringLiteral(",\"panel\":{\"owner\":\"x\"}");
  }
  void refusesWrongRunTaskOrPanelMetadata() {
    QFETCH(QString, run);
    QFETCH(QString, extra);
    Rig rig;
    QVERIFY(rig.start());
    Client c;
    QVERIFY(c.open(rig.server->port()));
    c.socket.sendTextMessage(helloFor(rig.policy, {}, run, extra));
    QVERIFY(c.waitClosed());
    QCOMPARE(c.errorCodes(), QStringList{QStringLiteral("PANEL_MISMATCH")});
  }

  void refusesLateHello() {
    PanelPolicy p = makePolicy();
    p.helloDeadlineMs = 200;
    Rig rig(p);
    QVERIFY(rig.start());
    Client c;
    QVERIFY(c.open(rig.server->port()));
    QVERIFY(c.waitClosed()); // said nothing: closed at the deadline
    QCOMPARE(c.errorCodes(), QStringList{QStringLiteral("PANEL_TIMEOUT")});
  }

  void refusesSecondPanel() {
    Rig rig;
    QVERIFY(rig.start());
    auto first = rig.authorizedClient();
    QVERIFY(first);
    Client second;
    if (second.open(rig.server->port()))
      QVERIFY(second.waitClosed());
    QCOMPARE(second.errorCodes(), QStringList{QStringLiteral("PANEL_BUSY")});
    QVERIFY(rig.server->hasPanel()); // the first keeps its place
    // And once the first is gone, nobody may take its place.
    QSignalSpy gone(rig.server.get(), &PanelServer::panelGone);
    first->socket.close();
    QVERIFY(gone.wait(3000));
    Client third;
    if (third.open(rig.server->port()))
      QVERIFY(third.waitClosed());
    QCOMPARE(third.errorCodes(), QStringList{QStringLiteral("PANEL_BUSY")});
  }

  void checksOrigin_data() {
    QTest::addColumn<QString>("origin");
    QTest::addColumn<bool>("allowed");
    QTest::newRow("desktop webview") << QStringLiteral("vscode-webview://1a2b3c4d5e") << true;
    QTest::newRow("code-server origin") << QStringLiteral("http://127.0.0.1:8080") << true;
    QTest::newRow("foreign site") << QStringLiteral("http://evil.example") << false;
    QTest::newRow("other loopback port") << QStringLiteral("http://127.0.0.1:8081") << false;
    QTest::newRow("webview lookalike") << QStringLiteral("vscode-webview://x/../evil") << false;
    QTest::newRow("null") << QStringLiteral("null") << false;
  }
  void checksOrigin() {
    QFETCH(QString, origin);
    QFETCH(bool, allowed);
    Rig rig;
    QVERIFY(rig.start());
    QSignalSpy refused(rig.server.get(), &PanelServer::refused);
    Client c(origin);
    QSignalSpy authorized(rig.server.get(), &PanelServer::panelAuthorized);
    const bool opened = c.open(rig.server->port());
    if (allowed) {
      QVERIFY(opened);
      c.socket.sendTextMessage(helloFor(rig.policy)); // a valid capability ...
      QVERIFY(authorized.wait(3000));
    } else {
      QVERIFY(!opened || c.waitClosed()); // ... never even gets to be read
      QCOMPARE(authorized.count(), 0);
      QCOMPARE(rig.server->refusals().value(Refusal::PanelOrigin), quint64(1));
    }
  }

  void routesProtocolMessages() {
    Rig rig;
    QVERIFY(rig.start());
    auto c = rig.authorizedClient();
    QVERIFY(c);
    QSignalSpy keys(rig.server.get(), &PanelServer::keyReceived);
    QSignalSpy pointers(rig.server.get(), &PanelServer::pointerReceived);
    QSignalSpy acks(rig.server.get(), &PanelServer::frameAcked);
    QSignalSpy refreshes(rig.server.get(), &PanelServer::frameRefreshRequested);
    QSignalSpy locks(rig.server.get(), &PanelServer::lockRequested);
    c->socket.sendTextMessage(
        QStringLiteral("{\"type\":\"key\",\"seq\":1,\"scancode\":57373,\"down\":true}"));
    c->socket.sendTextMessage(
        QStringLiteral("{\"type\":\"pointer\",\"seq\":2,\"x\":10,\"y\":20,\"buttons\":1,\"wheel\":-120}"));
    c->socket.sendTextMessage(QStringLiteral("{\"type\":\"frame_ack\",\"frame\":4}"));
    c->socket.sendTextMessage(QStringLiteral("{\"type\":\"frame_refresh\",\"frame\":5}"));
    c->socket.sendTextMessage(QStringLiteral("{\"type\":\"frame_refresh\",\"frame\":-1}"));
    c->socket.sendTextMessage(QStringLiteral("{\"type\":\"lock\"}"));
    QTRY_COMPARE(locks.count(), 1);
    QCOMPARE(keys.count(), 1);
    const auto key = keys.at(0).at(0).value<panel::Key>();
    QCOMPARE(key.scancode, quint16(0xE01D));
    QVERIFY(key.down);
    const auto ptr = pointers.at(0).at(0).value<panel::Pointer>();
    QCOMPARE(ptr.x, quint16(10));
    QCOMPARE(ptr.wheel, qint16(-120));
    QCOMPARE(acks.at(0).at(0).toUInt(), 4u);
    QCOMPARE(refreshes.count(), 1); // the negative frame id is malformed, refused and counted
    QCOMPARE(refreshes.at(0).at(0).toUInt(), 5u);
    QCOMPARE(rig.server->refusals().value(Refusal::ProtocolMalformed), quint64(1));
  }

  void refusesEveryOtherRoute_data() {
    QTest::addColumn<QString>("message");
    QTest::addColumn<QString>("code");
    QTest::newRow("clipboard") << QStringLiteral("{\"type\":\"clipboard\",\"text\":\"secret\"}")
                               << "ROUTE_FORBIDDEN";
    QTest::newRow("file") << QStringLiteral("{\"type\":\"file\",\"name\":\"a.exe\"}") << "ROUTE_FORBIDDEN";
    QTest::newRow("macro") << QStringLiteral("{\"type\":\"macro\",\"steps\":[]}") << "ROUTE_FORBIDDEN";
    QTest::newRow("shortcut") << QStringLiteral("{\"type\":\"shortcut\",\"keys\":\"ctrl+alt+del\"}")
                              << "ROUTE_FORBIDDEN";
    QTest::newRow("action") << QStringLiteral("{\"type\":\"action\",\"candidate_id\":\"a\"}")
                            << "ROUTE_FORBIDDEN";
    QTest::newRow("receipt") << QStringLiteral("{\"type\":\"receipt\"}") << "ROUTE_FORBIDDEN";
    QTest::newRow("unknown") << QStringLiteral("{\"type\":\"teleport\"}") << "PROTOCOL_UNKNOWN_TYPE";
    QTest::newRow("malformed json") << QStringLiteral("{\"type\":\"key\",") << "PROTOCOL_MALFORMED";
    QTest::newRow("duplicate key")
        << QStringLiteral("{\"type\":\"key\",\"seq\":1,\"seq\":2,\"scancode\":30,\"down\":true}")
        << "PROTOCOL_MALFORMED";
    QTest::newRow("type not first") << QStringLiteral(
                                           "{\"seq\":1,\"type\":\"key\",\"scancode\":30,\"down\":true}")
                                    << "PROTOCOL_MALFORMED";
    QTest::newRow("extra field")
        << QStringLiteral("{\"type\":\"key\",\"seq\":1,\"scancode\":30,\"down\":true,\"text\":\"x\"}")
        << "PROTOCOL_MALFORMED";
    QTest::newRow("float seq") << QStringLiteral(
                                      "{\"type\":\"key\",\"seq\":1.5,\"scancode\":30,\"down\":true}")
                               << "PROTOCOL_MALFORMED";
    QTest::newRow("negative x")
        << QStringLiteral("{\"type\":\"pointer\",\"seq\":1,\"x\":-1,\"y\":0,\"buttons\":0,\"wheel\":0}")
        << "PROTOCOL_MALFORMED";
    QTest::newRow("string down") << QStringLiteral(
                                        "{\"type\":\"key\",\"seq\":1,\"scancode\":30,\"down\":\"yes\"}")
                                 << "PROTOCOL_MALFORMED";
    QTest::newRow("array") << QStringLiteral("[{\"type\":\"lock\"}]") << "PROTOCOL_MALFORMED";
    QTest::newRow("second hello") << QString() << "PROTOCOL_MALFORMED";
    QTest::newRow("oversize")
        << QStringLiteral("{\"type\":\"key\",\"pad\":\"%1\"}").arg(QString(5000, QLatin1Char('a')))
        << "PROTOCOL_OVERSIZE";
  }
  void refusesEveryOtherRoute() {
    QFETCH(QString, message);
    QFETCH(QString, code);
    Rig rig;
    QVERIFY(rig.start());
    auto c = rig.authorizedClient();
    QVERIFY(c);
    QSignalSpy keys(rig.server.get(), &PanelServer::keyReceived);
    QSignalSpy locks(rig.server.get(), &PanelServer::lockRequested);
    QSignalSpy refused(rig.server.get(), &PanelServer::refused);
    c->socket.sendTextMessage(message.isEmpty() ? helloFor(rig.policy) : message);
    QVERIFY(refused.wait(3000));
    QCOMPARE(refusalName(refused.at(0).at(0).value<Refusal>()), code);
    QTRY_COMPARE(c->errorCodes(), QStringList{code});
    QCOMPARE(rig.server->refusals().value(*refusalFromName(code)), quint64(1));
    QCOMPARE(keys.count(), 0);
    QCOMPARE(locks.count(), 0);
    QVERIFY(rig.server->hasPanel()); // refused, counted, still connected
  }

  void refusesBinaryFromThePanel() {
    Rig rig;
    QVERIFY(rig.start());
    auto c = rig.authorizedClient();
    QVERIFY(c);
    c->socket.sendBinaryMessage(QByteArray(16, '\x01'));
    QTRY_COMPARE(c->errorCodes(), QStringList{QStringLiteral("PROTOCOL_BINARY")});
  }

  void dropsMessagesBeyondTheTransportCap() {
    Rig rig;
    QVERIFY(rig.start());
    auto c = rig.authorizedClient();
    QVERIFY(c);
    QSignalSpy gone(rig.server.get(), &PanelServer::panelGone);
    c->socket.sendTextMessage(QString(200 * 1024, QLatin1Char('x')));
    QVERIFY(gone.wait(5000));
    QCOMPARE(rig.server->refusals().value(Refusal::ProtocolOversize), quint64(1));
  }

  void floodIsCountedAndBounded() {
    PanelPolicy p = makePolicy();
    p.maxMessagesPerSecond = 500;
    Rig rig(p);
    QVERIFY(rig.start());
    auto c = rig.authorizedClient();
    QVERIFY(c);
    QSignalSpy acks(rig.server.get(), &PanelServer::frameAcked);
    const int sent = 5000;
    for (int i = 0; i < sent; ++i)
      c->socket.sendTextMessage(QStringLiteral("{\"type\":\"frame_ack\",\"frame\":%1}").arg(i));
    c->socket.sendTextMessage(QStringLiteral("{\"type\":\"lock\"}"));
    QTRY_VERIFY_WITH_TIMEOUT(
        quint64(acks.count()) + rig.server->refusals().value(Refusal::Flood) >= quint64(sent), 10000);
    QVERIFY(rig.server->refusals().value(Refusal::Flood) > 0);
    QVERIFY(c->errorCodes().contains(QStringLiteral("FLOOD")));
    QVERIFY(rig.server->hasPanel());
  }

  void closePanelSaysBye() {
    Rig rig;
    QVERIFY(rig.start());
    auto c = rig.authorizedClient();
    QVERIFY(c);
    rig.server->closePanel(QStringLiteral("EXPIRED"));
    QVERIFY(c->waitClosed());
    QVERIFY(!c->received.isEmpty());
    QCOMPARE(c->received.last().value(QStringLiteral("type")).toString(), QStringLiteral("bye"));
    QCOMPARE(c->received.last().value(QStringLiteral("reason")).toString(), QStringLiteral("EXPIRED"));
  }
};

QTEST_GUILESS_MAIN(tst_PanelServer)
#include "tst_panelserver.moc"
