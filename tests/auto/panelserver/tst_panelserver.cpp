#include "bridge/panel/LoopbackPeer.h"
#include "bridge/panel/PanelServer.h"
#include "session/Phase.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRandomGenerator>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>
#include <QWebSocket>

#include <algorithm>
#include <arpa/inet.h>
#include <csignal>
#include <grp.h>
#include <memory>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

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

// A local process that connects and never says hello; when closed it reconnects at once.
struct Squatter {
  explicit Squatter(quint16 serverPort) : port(serverPort) {
    QObject::connect(&socket, &QWebSocket::textMessageReceived, [this](const QString& m) {
      const QJsonObject o = QJsonDocument::fromJson(m.toUtf8()).object();
      if (o.value(QStringLiteral("type")) == QLatin1String("error"))
        codes << o.value(QStringLiteral("code")).toString();
    });
    QObject::connect(&socket, &QWebSocket::connected, [this] { ++connects; });
    QObject::connect(&socket, &QWebSocket::disconnected, [this] {
      if (!stopped)
        QMetaObject::invokeMethod(
            &socket, [this] { open(); }, Qt::QueuedConnection);
    });
    open();
  }
  void open() { socket.open(QUrl(QStringLiteral("ws://127.0.0.1:%1").arg(port))); }
  void stop() {
    stopped = true;
    socket.abort();
  }
  quint16 port;
  QWebSocket socket;
  bool stopped = false;
  int connects = 0;
  QStringList codes;
};

bool becomeNobody() {
  return ::setgroups(0, nullptr) == 0 && ::setresgid(65534, 65534, 65534) == 0 &&
         ::setresuid(65534, 65534, 65534) == 0;
}

// A blocking connect to 127.0.0.1:port with plain syscalls (for forked children).
int connectTo(quint16 port) {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (s < 0 || ::connect(s, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0)
    return -1;
  return s;
}

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

  // The panel's messages are small and come in runs (drained, then two phase changes): with
  // Nagle each waits for the ACK of the one before, which the peer delays by up to 40 ms. The
  // console's end of the panel's connection has TCP_NODELAY set.
  void thePanelConnectionSendsWithoutNagle() {
    Rig rig;
    QVERIFY(rig.start());
    auto client = rig.authorizedClient();
    QVERIFY(client);
    const quint16 serverPort = rig.server->port();
    int accepted = 0, noDelay = 0;
    for (int fd = 0; fd < 4096; ++fd) {
      sockaddr_in local{}, peer{};
      socklen_t len = sizeof local, peerLen = sizeof peer;
      if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0 || local.sin_family != AF_INET ||
          ntohs(local.sin_port) != serverPort ||
          ::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peerLen) != 0)
        continue; // not a connection the server accepted (the listener has no peer)
      ++accepted;
      int value = 0;
      socklen_t valueLen = sizeof value;
      if (::getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &value, &valueLen) == 0 && value)
        ++noDelay;
    }
    QCOMPARE(accepted, 1);
    QCOMPARE(noDelay, 1);
  }

  void authorizesTheRightHello() {
    Rig rig;
    QVERIFY(rig.start());
    auto client = rig.authorizedClient();
    QVERIFY(client);
    QVERIFY(rig.server->hasPanel());
  }

  // Issue 27.5: the hello says which frame features the panel applies; the shape is strict,
  // names the console does not know are ignored (a newer panel, an older console).
  void readsHelloFeatures_data() {
    QTest::addColumn<QString>("features"); // the JSON after "features":, or empty for none
    QTest::addColumn<bool>("ok");
    QTest::addColumn<bool>("copyRect");
    QTest::newRow("absent") << QString() << true << false;
    QTest::newRow("copy_rect") << QStringLiteral("[\"copy_rect\"]") << true << true;
    QTest::newRow("empty") << QStringLiteral("[]") << true << false;
    QTest::newRow("unknown names ignored") << QStringLiteral("[\"zoom\",\"copy_rect\"]") << true << true;
    QTest::newRow("not an array") << QStringLiteral("\"copy_rect\"") << false << false;
    QTest::newRow("a number") << QStringLiteral("[1]") << false << false;
    QTest::newRow("uppercase") << QStringLiteral("[\"COPY_RECT\"]") << false << false;
    QTest::newRow("too long a name") << QStringLiteral("[\"%1\"]").arg(QString(33, QLatin1Char('a'))) << false
                                     << false;
    QTest::newRow("too many") << QStringLiteral("[%1\"a\"]").arg(QStringLiteral("\"a\",").repeated(16))
                              << false << false;
  }
  void readsHelloFeatures() {
    QFETCH(QString, features);
    QFETCH(bool, ok);
    QFETCH(bool, copyRect);
    const PanelPolicy p = makePolicy();
    const QString text =
        helloFor(p, {}, {}, features.isEmpty() ? QString() : QStringLiteral(",\"features\":") + features);
    const Outcome<panel::Message> m = panel::parse(text.toUtf8());
    QCOMPARE(m.ok(), ok);
    if (!ok) {
      QCOMPARE(m.code(), Refusal::ProtocolMalformed);
      return;
    }
    QCOMPARE(std::get<panel::Hello>(m.value()).copyRect, copyRect);
    // What the C++ panels write parses back to the same.
    panel::HelloFields fields{
        p.run, p.task, p.capability.toHex(), QStringLiteral("test"), QStringLiteral("1"), {}, {}};
    if (copyRect)
      fields.features = {QString::fromLatin1(panel::kFeatureCopyRect)};
    const Outcome<panel::Message> written = panel::parse(panel::hello(fields));
    QVERIFY(written.ok());
    QCOMPARE(std::get<panel::Hello>(written.value()).copyRect, copyRect);
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

  // Connecting claims nothing: a silent first connection does not keep a later valid hello out.
  void aSilentConnectionDoesNotHoldTheSlot() {
    Rig rig;
    QVERIFY(rig.start());
    Client silent;
    QVERIFY(silent.open(rig.server->port()));
    auto genuine = rig.authorizedClient();
    QVERIFY(genuine);
    QVERIFY(rig.server->hasPanel());
    QVERIFY(silent.waitClosed()); // turned away once the slot was taken
    QCOMPARE(silent.errorCodes(), QStringList{QStringLiteral("PANEL_BUSY")});
    QVERIFY(genuine->socket.state() == QAbstractSocket::ConnectedState);
  }

  void evictsTheOldestPendingConnectionBeyondTheBound() {
    PanelPolicy p = makePolicy();
    p.maxPendingPanels = 2;
    Rig rig(p);
    QVERIFY(rig.start());
    Client a, b, c;
    QVERIFY(a.open(rig.server->port()));
    QVERIFY(b.open(rig.server->port()));
    QVERIFY(c.open(rig.server->port()));
    QVERIFY(a.waitClosed()); // the oldest goes when the third arrives
    QCOMPARE(a.errorCodes(), QStringList{QStringLiteral("PANEL_BUSY")});
    QCOMPARE(rig.server->refusals().value(Refusal::PanelBusy), quint64(1));
    QVERIFY(b.socket.state() == QAbstractSocket::ConnectedState);
    // The newest pending one can still claim the slot; the other is then turned away.
    QSignalSpy authorized(rig.server.get(), &PanelServer::panelAuthorized);
    c.socket.sendTextMessage(helloFor(rig.policy));
    QVERIFY(authorized.wait(3000));
    QVERIFY(b.waitClosed());
    QCOMPARE(b.errorCodes(), QStringList{QStringLiteral("PANEL_BUSY")});
    QCOMPARE(rig.server->refusals().value(Refusal::PanelBusy), quint64(2));
  }

  void aWrongHelloClosesOnlyItsOwnConnection() {
    Rig rig;
    QVERIFY(rig.start());
    Client waiting, wrong;
    QVERIFY(waiting.open(rig.server->port()));
    QVERIFY(wrong.open(rig.server->port()));
    wrong.socket.sendTextMessage(helloFor(rig.policy, QString(64, u'0')));
    QVERIFY(wrong.waitClosed());
    QCOMPARE(wrong.errorCodes(), QStringList{QStringLiteral("PANEL_UNAUTHORIZED")});
    QVERIFY(waiting.socket.state() == QAbstractSocket::ConnectedState);
    QSignalSpy authorized(rig.server.get(), &PanelServer::panelAuthorized);
    waiting.socket.sendTextMessage(helloFor(rig.policy));
    QVERIFY(authorized.wait(3000));
  }

  // Squatters of this user that connect, never say hello and reconnect the moment they are
  // closed: the genuine panel still gets in. The time to authorization is reported, not
  // asserted. (Another user's squatters, past the bound: squattersOfAnotherUser….)
  void squattersCannotKeepTheGenuinePanelOut_data() {
    QTest::addColumn<int>("squatters");
    QTest::newRow("1 squatter") << 1;
    QTest::newRow("7 squatters (the genuine panel is the 8th pending)") << 7;
  }
  void squattersCannotKeepTheGenuinePanelOut() {
    QFETCH(int, squatters);
    Rig rig;
    QVERIFY(rig.start());
    std::vector<std::unique_ptr<Squatter>> crowd;
    for (int i = 0; i < squatters; ++i)
      crowd.push_back(std::make_unique<Squatter>(rig.server->port()));
    // Every squatter has connected at least once (past the bound they evict each other).
    QTRY_VERIFY_WITH_TIMEOUT(
        std::all_of(crowd.cbegin(), crowd.cend(), [](const auto& s) { return s->connects > 0; }), 10000);
    QElapsedTimer clock;
    clock.start();
    auto genuine = rig.authorizedClient();
    const qint64 ms = clock.elapsed();
    QVERIFY(genuine);
    QVERIFY(rig.server->hasPanel());
    qInfo("%d squatters: the genuine panel was authorized %lld ms after it started connecting", squatters,
          ms);
    // Every squatter still waiting was turned away with PANEL_BUSY, and keeps being refused.
    QTRY_VERIFY_WITH_TIMEOUT(
        std::all_of(crowd.cbegin(), crowd.cend(),
                    [](const auto& s) { return s->codes.contains(QStringLiteral("PANEL_BUSY")); }),
        10000);
    QVERIFY(rig.server->refusals().value(Refusal::PanelBusy) >= quint64(squatters));
    for (auto& s : crowd)
      s->stop();
    QVERIFY(genuine->socket.state() == QAbstractSocket::ConnectedState);
  }

  // The handshake does not announce the product: no Server: header with a value.
  void handshakeNamesNoProduct() {
    Rig rig;
    QVERIFY(rig.start());
    QTcpSocket raw;
    QByteArray response;
    QObject::connect(&raw, &QTcpSocket::readyRead, [&] { response += raw.readAll(); });
    QObject::connect(&raw, &QTcpSocket::connected, [&] {
      raw.write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
    });
    raw.connectToHost(QHostAddress::LocalHost, rig.server->port()); // the server runs on this loop
    QTRY_VERIFY_WITH_TIMEOUT(response.contains("\r\n\r\n"), 10000);
    const QByteArray head = response.left(response.indexOf("\r\n\r\n"));
    QVERIFY2(head.startsWith("HTTP/1.1 101"), head.constData());
    for (const QByteArray& line : head.split('\n')) {
      const QByteArray header = line.trimmed();
      if (header.toLower().startsWith("server:"))
        QVERIFY2(header.mid(7).trimmed().isEmpty(), header.constData());
    }
    QVERIFY2(!head.toLower().contains("guest"), head.constData());
    QVERIFY2(!head.toLower().contains("console"), head.constData());
  }

  void evictionNeverLetsAnotherUserPushOutOurs_data() {
    QTest::addColumn<QList<bool>>("pendingForeign"); // oldest first; true: another uid
    QTest::addColumn<bool>("newcomerForeign");
    QTest::addColumn<int>("victim");
    const QList<bool> ours(8, false), theirs(8, true);
    QList<bool> mixed(8, false);
    mixed[5] = true;
    QTest::newRow("ours full, ours arrives: the oldest goes") << ours << false << 0;
    QTest::newRow("ours full, theirs arrives: turned away") << ours << true << -1;
    QTest::newRow("theirs full, ours arrives: their oldest goes") << theirs << false << 0;
    QTest::newRow("theirs full, theirs arrives: their oldest goes") << theirs << true << 0;
    QTest::newRow("one of theirs among ours, ours arrives: that one goes") << mixed << false << 5;
    QTest::newRow("one of theirs among ours, theirs arrives: that one goes") << mixed << true << 5;
  }
  void evictionNeverLetsAnotherUserPushOutOurs() {
    QFETCH(QList<bool>, pendingForeign);
    QFETCH(bool, newcomerForeign);
    QFETCH(int, victim);
    QCOMPARE(PanelServer::pickEviction(pendingForeign, newcomerForeign), victim);
  }

  // Issue 26: the peer's uid comes from one sock_diag query for its exact socket.
  void findsTheUidOfALoopbackPeer() {
    QTcpServer server;
    QVERIFY(server.listen(QHostAddress::LocalHost, 0));
    QTcpSocket client;
    client.connectToHost(QHostAddress::LocalHost, server.serverPort());
    QVERIFY(client.waitForConnected(3000));
    QVERIFY(server.waitForNewConnection(3000));
    QTcpSocket* accepted = server.nextPendingConnection();
    QVERIFY(accepted);
    const Outcome<uid_t> uid = LoopbackPeer::uidOf(accepted->peerAddress(), accepted->peerPort(),
                                                   accepted->localAddress(), accepted->localPort());
    QVERIFY2(uid.ok(), uid.ok() ? "" : qPrintable(uid.failure().message));
    QCOMPARE(*uid, ::geteuid());
    // A tuple no socket has: a typed refusal, not a guess.
    const Outcome<uid_t> none =
        LoopbackPeer::uidOf(accepted->peerAddress(), quint16(accepted->peerPort() ^ 1),
                            accepted->localAddress(), accepted->localPort());
    QVERIFY(!none.ok());
    QCOMPARE(none.code(), Refusal::PanelPeerUnknown);
  }

  void findsTheUidOfAnotherUsersPeer() {
    if (::geteuid() != 0)
      QSKIP("needs root to connect as another uid");
    QTcpServer server;
    QVERIFY(server.listen(QHostAddress::LocalHost, 0));
    int hold[2];
    QCOMPARE(::pipe(hold), 0);
    const quint16 port = server.serverPort();
    const pid_t child = ::fork();
    if (child == 0) {
      ::close(hold[1]);
      if (!becomeNobody())
        ::_exit(10);
      const int s = connectTo(port);
      char c;
      (void)::read(hold[0], &c, 1); // held open until the parent is done
      ::_exit(s >= 0 ? 0 : 11);
    }
    ::close(hold[0]);
    const auto reap = qScopeGuard([&] {
      ::close(hold[1]);
      ::waitpid(child, nullptr, 0);
    });
    QVERIFY(server.waitForNewConnection(10000));
    QTcpSocket* accepted = server.nextPendingConnection();
    const Outcome<uid_t> uid = LoopbackPeer::uidOf(accepted->peerAddress(), accepted->peerPort(),
                                                   accepted->localAddress(), accepted->localPort());
    QVERIFY2(uid.ok(), uid.ok() ? "" : qPrintable(uid.failure().message));
    QCOMPARE(*uid, uid_t(65534));
  }

  // Issue 26: another uid's idle TCP connections (no handshake, no hello) beyond the bound are
  // closed at once, so they cannot pile up descriptors in the console; the genuine panel
  // still gets in.
  void anotherUsersIdleConnectionsAreBoundedBeforeTheHandshake() {
    if (::geteuid() != 0)
      QSKIP("needs root to connect as another uid");
    PanelPolicy p = makePolicy();
    p.helloDeadlineMs = 60000; // none of the idle ones leaves by its deadline during the test
    Rig rig(p);
    QVERIFY(rig.start());
    constexpr int kIdle = 200;
    int hold[2];
    QCOMPARE(::pipe(hold), 0);
    const quint16 port = rig.server->port();
    const pid_t child = ::fork();
    if (child == 0) {
      ::close(hold[1]);
      if (!becomeNobody())
        ::_exit(10);
      for (int i = 0; i < kIdle; ++i)
        if (connectTo(port) < 0)
          ::_exit(11);
      char c;
      (void)::read(hold[0], &c, 1);
      ::_exit(0);
    }
    ::close(hold[0]);
    const auto reap = qScopeGuard([&] {
      ::close(hold[1]);
      ::waitpid(child, nullptr, 0);
    });
    QTRY_VERIFY_WITH_TIMEOUT(rig.server->refusals().value(Refusal::PanelBusy) >=
                                 quint64(kIdle - PanelServer::kMaxHandshaking),
                             60000);
    QVERIFY(rig.server->handshakingCount() <= PanelServer::kMaxHandshaking);
    QElapsedTimer clock;
    clock.start();
    auto genuine = rig.authorizedClient();
    QVERIFY(genuine);
    qInfo("%d idle connections of uid 65534: the genuine panel was authorized %lld ms after it started "
          "connecting",
          kIdle, clock.elapsed());
  }

  // Issue 26: the genuine panel's authorization does not depend on what another uid does with
  // the TCP table. gc_panel_twbench inflates it with TIME_WAIT entries in a private network
  // namespace and times the old path (a /proc/net/tcp scan) and the new one; figures are
  // printed, only "every panel was authorized" is asserted.
  void genuinePanelIsAuthorizedWhateverTheTcpTable() {
    if (::geteuid() != 0)
      QSKIP("needs root for a private network namespace");
    QProcess bench;
    bench.start(QStringLiteral(GC_PANEL_TWBENCH),
                {QStringLiteral("--levels"), QStringLiteral("0,50000,120000"), QStringLiteral("--trials"),
                 QStringLiteral("10")});
    QVERIFY(bench.waitForStarted(10000));
    QVERIFY(bench.waitForFinished(240000));
    const QByteArray out = bench.readAllStandardOutput();
    if (bench.exitCode() == 77)
      QSKIP(qPrintable(QStringLiteral("no private network namespace: %1")
                           .arg(QString::fromLocal8Bit(bench.readAllStandardError()))));
    qInfo().noquote() << QString::fromUtf8(out);
    QVERIFY2(bench.exitStatus() == QProcess::NormalExit && bench.exitCode() == 0,
             bench.readAllStandardError().constData());
    const QList<QByteArray> lines = out.trimmed().split('\n');
    QCOMPARE(lines.size(), 4);
    const QJsonObject top = QJsonDocument::fromJson(lines.last()).object();
    QVERIFY2(top.value(QStringLiteral("time_wait")).toInteger() >= 100000, lines.last().constData());
    QCOMPARE(top.value(QStringLiteral("welcomed")).toInt(), 10);
  }

  // Squatters of another local user (nobody), 32 silent connections reconnecting at once,
  // far past the bound: they only ever evict each other; the genuine panel gets in.
  void squattersOfAnotherUserCannotEvictTheGenuinePanel() {
    if (::geteuid() != 0)
      QSKIP("needs root to run the squatter as another uid");
    Rig rig;
    QVERIFY(rig.start());
    QProcess squatter;
    squatter.setChildProcessModifier([] {
      // Its own process group (so it can be killed whole), then uid/gid nobody.
      if (::setsid() < 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0)
        ::_exit(97);
    });
    // bash's /dev/tcp: a WebSocket handshake, then silence until the server closes; again.
    const QString loop =
        QStringLiteral(
            "for i in $(seq 32); do (while :; do exec 3<>/dev/tcp/127.0.0.1/%1 || exit 1; "
            "printf 'GET / HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nUpgrade: websocket\\r\\nConnection: "
            "Upgrade\\r\\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\\r\\nSec-WebSocket-Version: 13\\r\\n\\r\\n' >&3; "
            "cat <&3 >/dev/null; exec 3<&-; done) & done; wait")
            .arg(rig.server->port());
    squatter.setWorkingDirectory(QStringLiteral("/"));
    squatter.start(QStringLiteral("/bin/bash"), {QStringLiteral("-c"), loop});
    QVERIFY(squatter.waitForStarted(5000));
    const auto killSquatter = qScopeGuard([&] {
      ::kill(-pid_t(squatter.processId()), SIGKILL);
      squatter.waitForFinished(5000);
    });
    // The pending set is full of the squatter's sockets and they are evicting each other.
    QTRY_VERIFY_WITH_TIMEOUT(
        rig.server->pendingCount() == 8 && rig.server->refusals().value(Refusal::PanelBusy) >= 32, 20000);
    const quint64 evictedBefore = rig.server->refusals().value(Refusal::PanelBusy);
    QElapsedTimer clock;
    clock.start();
    auto genuine = rig.authorizedClient();
    const qint64 ms = clock.elapsed();
    QVERIFY(genuine);
    QVERIFY(rig.server->hasPanel());
    qInfo("32 squatters of uid 65534 (%llu evictions before): the genuine panel was authorized %lld ms after "
          "it "
          "started connecting",
          evictedBefore, ms);
    QCOMPARE(rig.server->pendingCount(), 0); // the rest were turned away
    QVERIFY(genuine->socket.state() == QAbstractSocket::ConnectedState);
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
