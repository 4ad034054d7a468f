#include "ActionTestSupport.h"
#include "action/ActionPlan.h"
#include "action/ActionService.h"
#include "action/ActionSocketServer.h"
#include "action/CaptureScaler.h"
#include "audit/EvidenceLog.h"
#include "privacy/RunDirectory.h"
#include "relay/McpRelay.h"
#include "relay/McpServer.h"
#include "session/InputGate.h"
#include "session/LockBarrier.h"
#include "session/PhaseController.h"

#include <QCryptographicHash>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocalSocket>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <fcntl.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace gc;
using namespace gc::test;

namespace {

QJsonObject obj(const char* json) {
  return QJsonDocument::fromJson(QByteArray(json)).object();
}

struct Rig {
  explicit Rig(const GrantOptions& options = {})
      : grant(makeGrant(options)), gate(&phases, &sink), barrier(&phases, &gate),
        service(grant, {grant.vm.uuid, grant.vm.name}, &phases, &barrier, &evidence, &sink,
                [this] { return frame; }) {
    evidenceOpen = evidence.open(dir.filePath(QStringLiteral("evidence")), QStringLiteral("run")).ok();
    gate.setDesktopSize(frame.size());
  }
  bool toReviewing() {
    return barrier.requestLock(QStringLiteral("test")).ok() && service.captureDesktop().ok();
  }
  QByteArray evidenceBytes() const {
    QFile f(evidence.path());
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
  }

  QTemporaryDir dir;
  Grant grant;
  QImage frame = makeFrame();
  PhaseController phases;
  RecordingSink sink;
  EvidenceLog evidence;
  InputGate gate;
  LockBarrier barrier;
  ActionService service;
  bool evidenceOpen = false;
};

// A Rig whose service listens on a real run directory socket.
struct SocketRig : Rig {
  explicit SocketRig(const GrantOptions& options = {}) : Rig(options), server(&service) {
    listening = runDir.create(dir.path(), grant.runId, QString::fromLatin1(grant.digestHex)).ok() &&
                server.listen(runDir.mcpSocketPath());
  }
  RunDirectory runDir;
  ActionSocketServer server;
  bool listening = false;
};

// A raw client of the console socket on the main thread.
struct RawRelay {
  explicit RawRelay(const QString& path) { socket.connectToServer(path); }
  QJsonObject next() {
    QByteArray line;
    (void)QTest::qWaitFor(
        [&] {
          if (socket.canReadLine()) {
            line = socket.readLine();
            return true;
          }
          return socket.state() == QLocalSocket::UnconnectedState && socket.bytesAvailable() == 0;
        },
        5000);
    return QJsonDocument::fromJson(line).object();
  }
  void send(const QJsonObject& message) {
    socket.write(QJsonDocument(message).toJson(QJsonDocument::Compact) + '\n');
    socket.flush();
  }
  bool bind(const Grant& grant) {
    if (next().value(QStringLiteral("type")).toString() != u"hello")
      return false;
    send({{QStringLiteral("type"), QStringLiteral("bind")},
          {QStringLiteral("server"), grant.mcp.server},
          {QStringLiteral("tool"), grant.mcp.tool}});
    return next().value(QStringLiteral("type")).toString() == u"bound";
  }
  QLocalSocket socket;
};

// runMcpRelay on its own thread with pipes for stdin/stdout/stderr, while the test's main
// thread runs the console's event loop.
class RelayHarness {
public:
  RelayHarness(const QString& runtime, const QString& run, McpRelayOptions options = {}) {
    (void)!::pipe2(m_in, O_CLOEXEC);
    (void)!::pipe2(m_out, O_CLOEXEC | O_NONBLOCK);
    (void)!::pipe2(m_err, O_CLOEXEC | O_NONBLOCK);
    options.inFd = m_in[0];
    options.outFd = m_out[1];
    options.errFd = m_err[1];
    options.connectTimeout = std::chrono::milliseconds(3000);
    m_thread = std::thread([this, runtime, run, options] {
      rc = runMcpRelay(runtime, run, options);
      done = true;
    });
  }
  ~RelayHarness() {
    closeInput();
    (void)QTest::qWaitFor([this] { return done.load(); }, 10000);
    m_thread.join();
    for (int fd : {m_in[0], m_out[0], m_out[1], m_err[0], m_err[1]})
      ::close(fd);
  }
  void send(const QByteArray& line) { (void)!::write(m_in[1], line.constData(), size_t(line.size())); }
  void call(int id, const QString& method, const QJsonObject& params = {}) {
    QJsonObject m{{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                  {QStringLiteral("id"), id},
                  {QStringLiteral("method"), method}};
    if (!params.isEmpty())
      m.insert(QStringLiteral("params"), params);
    send(QJsonDocument(m).toJson(QJsonDocument::Compact) + '\n');
  }
  QJsonObject tool(int id, const QString& name, const QJsonObject& arguments = {}) {
    call(id, QStringLiteral("tools/call"),
         {{QStringLiteral("name"), name}, {QStringLiteral("arguments"), arguments}});
    return next().value(QStringLiteral("result")).toObject();
  }
  bool initialize() {
    call(0, QStringLiteral("initialize"),
         {{QStringLiteral("protocolVersion"), QStringLiteral("2025-11-25")},
          {QStringLiteral("capabilities"), QJsonObject{}},
          {QStringLiteral("clientInfo"), QJsonObject{{QStringLiteral("name"), QStringLiteral("t")},
                                                     {QStringLiteral("version"), QStringLiteral("1")}}}});
    const bool ok = next().contains(QStringLiteral("result"));
    send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    return ok;
  }
  // The next line the relay writes, while the console's event loop keeps running.
  QJsonObject next() {
    QByteArray line;
    (void)QTest::qWaitFor(
        [&] {
          char c;
          while (::read(m_out[0], &c, 1) == 1) {
            if (c == '\n')
              return true;
            m_partial.append(c);
          }
          return false;
        },
        10000);
    line.swap(m_partial);
    return QJsonDocument::fromJson(line).object();
  }
  QByteArray stderrText() {
    QByteArray text;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(m_err[0], buf, sizeof(buf))) > 0)
      text.append(buf, n);
    return text;
  }
  void closeInput() {
    if (m_in[1] >= 0)
      ::close(m_in[1]);
    m_in[1] = -1;
  }

  std::atomic<int> rc{-1};
  std::atomic<bool> done{false};

private:
  int m_in[2]{-1, -1};
  int m_out[2]{-1, -1};
  int m_err[2]{-1, -1};
  QByteArray m_partial;
  std::thread m_thread;
};

QString code(const QJsonObject& toolResult) {
  return toolResult.value(QStringLiteral("structuredContent"))
      .toObject()
      .value(QStringLiteral("code"))
      .toString();
}

} // namespace

class tst_Action : public QObject {
  Q_OBJECT
private slots:
  // --- ActionPlan -------------------------------------------------------------------------
  void plansExactInputSequences_data() {
    QTest::addColumn<QString>("action");
    QTest::addColumn<QString>("expected"); // k<scancode hex><+|-> or p<x>,<y>,<buttons>
    QTest::newRow("click") << "{\"type\":\"click\",\"x\":10,\"y\":20}"
                           << "p10,20,0 p10,20,1 p10,20,0";
    QTest::newRow("double_click") << "{\"type\":\"double_click\",\"x\":5,\"y\":6}"
                                  << "p5,6,0 p5,6,1 p5,6,0 p5,6,0 p5,6,1 p5,6,0";
    QTest::newRow("right_click") << "{\"type\":\"right_click\",\"x\":319,\"y\":199}"
                                 << "p319,199,0 p319,199,2 p319,199,0";
    QTest::newRow("ctrl+s") << "{\"type\":\"key_chord\",\"keys\":[\"ctrl\",\"s\"]}"
                            << "k1d+ k1f+ k1f- k1d-";
    QTest::newRow("modifiers reordered") << "{\"type\":\"key_chord\",\"keys\":[\"s\",\"shift\",\"ctrl\"]}"
                                         << "k1d+ k2a+ k1f+ k1f- k2a- k1d-";
    QTest::newRow("ctrl+alt+delete (extended)")
        << "{\"type\":\"key_chord\",\"keys\":[\"delete\",\"alt\",\"ctrl\"]}"
        << "k1d+ k38+ ke053+ ke053- k38- k1d-";
    QTest::newRow("win+e") << "{\"type\":\"key_chord\",\"keys\":[\"win\",\"e\"]}"
                           << "ke05b+ k12+ k12- ke05b-";
    QTest::newRow("enter alone") << "{\"type\":\"key_chord\",\"keys\":[\"enter\"]}"
                                 << "k1c+ k1c-";
    QTest::newRow("f12") << "{\"type\":\"key_chord\",\"keys\":[\"f12\"]}"
                         << "k58+ k58-";
    QTest::newRow("alt+f4") << "{\"type\":\"key_chord\",\"keys\":[\"alt\",\"f4\"]}"
                            << "k38+ k3e+ k3e- k38-";
    QTest::newRow("ctrl+0") << "{\"type\":\"key_chord\",\"keys\":[\"ctrl\",\"0\"]}"
                            << "k1d+ kb+ kb- k1d-";
  }
  void plansExactInputSequences() {
    QFETCH(QString, action);
    QFETCH(QString, expected);
    const Outcome<ActionSpec> spec = ActionSpec::fromJson(QJsonDocument::fromJson(action.toUtf8()).object());
    QVERIFY(spec.ok());
    const Outcome<QList<InputEvent>> plan = ActionPlan::plan(*spec, QSize(320, 200));
    QVERIFY(plan.ok());
    QStringList got;
    quint64 seq = 0;
    for (const InputEvent& e : plan.value()) {
      QCOMPARE(e.seq, ++seq);
      if (e.kind == InputEvent::Kind::Key)
        got << QStringLiteral("k%1%2")
                   .arg(e.scancode, 0, 16)
                   .arg(e.down ? QLatin1Char('+') : QLatin1Char('-'));
      else {
        QCOMPARE(e.wheel, qint16(0));
        got << QStringLiteral("p%1,%2,%3").arg(e.x).arg(e.y).arg(e.buttons);
      }
    }
    QCOMPARE(got.join(u' '), expected);
  }

  void refusesPointerActionsOutsideTheFrame_data() {
    QTest::addColumn<int>("x");
    QTest::addColumn<int>("y");
    QTest::newRow("x at width") << 320 << 10;
    QTest::newRow("y at height") << 10 << 200;
    QTest::newRow("far away") << 16384 << 16384;
  }
  void refusesPointerActionsOutsideTheFrame() {
    QFETCH(int, x);
    QFETCH(int, y);
    ActionSpec spec;
    spec.x = x;
    spec.y = y;
    const auto plan = ActionPlan::plan(spec, QSize(320, 200));
    QVERIFY(!plan.ok());
    QCOMPARE(plan.code(), Refusal::ActionInvalid);
    QVERIFY(!ActionPlan::plan(spec, QSize()).ok());
  }

  void mapsEveryAllowedKeyToADistinctScancode() {
    const QJsonArray tools = McpServer::toolDefinitions(
        {QStringLiteral("s"), QStringLiteral("1"), QStringLiteral("perform_action"), {}});
    const QJsonArray keys = tools.at(2)
                                .toObject()
                                .value(QStringLiteral("inputSchema"))
                                .toObject()
                                .value(QStringLiteral("properties"))
                                .toObject()
                                .value(QStringLiteral("action"))
                                .toObject()
                                .value(QStringLiteral("oneOf"))
                                .toArray()
                                .at(1)
                                .toObject()
                                .value(QStringLiteral("properties"))
                                .toObject()
                                .value(QStringLiteral("keys"))
                                .toObject()
                                .value(QStringLiteral("items"))
                                .toObject()
                                .value(QStringLiteral("enum"))
                                .toArray();
    // 31 named keys, a-z, 0-9, f1-f12, and "win".
    QCOMPARE(keys.size(), 31 + 26 + 10 + 12 + 1);
    QSet<quint16> seen;
    for (const QJsonValue& k : keys) {
      const auto code = ActionPlan::scancode(k.toString());
      QVERIFY2(code.has_value(), qPrintable(k.toString()));
      if (k.toString() != u"win")
        QVERIFY2(!seen.contains(*code), qPrintable(k.toString()));
      seen.insert(*code);
    }
  }

  // --- ActionService ----------------------------------------------------------------------
  void refusesCaptureBeforeTheLock() {
    Rig rig;
    const auto capture = rig.service.captureDesktop();
    QVERIFY(!capture.ok());
    QCOMPARE(capture.code(), Refusal::CaptureNotAllowed);
    QCOMPARE(rig.phases.phase(), Phase::Setup);
  }

  void capturesPngInMemoryAfterTheLockAndStartsReviewing() {
    Rig rig;
    QVERIFY(rig.evidenceOpen);
    QVERIFY(rig.service.requestLock().ok());
    QCOMPARE(rig.phases.phase(), Phase::Capturing);
    const auto capture = rig.service.captureDesktop();
    QVERIFY(capture.ok());
    QCOMPARE(rig.phases.phase(), Phase::Reviewing);
    QVERIFY(capture->png.startsWith("\x89PNG\r\n\x1a\n"));
    QCOMPARE(capture->width, 320);
    QCOMPARE(capture->height, 200);
    QCOMPARE(capture->sha256Hex, QCryptographicHash::hash(capture->png, QCryptographicHash::Sha256).toHex());
    QImage decoded;
    QVERIFY(decoded.loadFromData(capture->png, "PNG"));
    QCOMPARE(decoded.convertToFormat(QImage::Format_RGB32), rig.frame);
    // A second capture is allowed in REVIEWING and stays there.
    QVERIFY(rig.service.captureDesktop().ok());
    QCOMPARE(rig.phases.phase(), Phase::Reviewing);
    QVERIFY(rig.evidenceBytes().contains(capture->sha256Hex));
    QVERIFY(rig.sink.events.empty());
  }

  void refusesPerformOutsideReviewing_data() {
    QTest::addColumn<int>("steps"); // 0 SETUP, 1 CAPTURING (locked, no capture yet)
    QTest::newRow("SETUP") << 0;
    QTest::newRow("CAPTURING") << 1;
  }
  void refusesPerformOutsideReviewing() {
    QFETCH(int, steps);
    Rig rig;
    if (steps >= 1)
      QVERIFY(rig.service.requestLock().ok());
    const auto receipt = rig.service.performAction(obj("{\"action\":{\"type\":\"click\",\"x\":1,\"y\":1}}"));
    QVERIFY(!receipt.ok());
    QCOMPARE(receipt.code(), Refusal::PhaseWrong);
    QVERIFY(rig.sink.events.empty());
    QVERIFY(!rig.service.hasActed());
  }

  void executesExactlyOnceAndRefusesEveryLaterCall() {
    Rig rig;
    QSignalSpy receipts(&rig.service, &ActionService::receiptIssued);
    QVERIFY(rig.toReviewing());
    const auto receipt =
        rig.service.performAction(obj("{\"action\":{\"type\":\"click\",\"x\":100,\"y\":50}}"));
    QVERIFY(receipt.ok());
    QCOMPARE(receipt->result, Receipt::Result::Executed);
    QCOMPARE(rig.sink.events.size(), std::size_t(3));
    QCOMPARE(rig.phases.phase(), Phase::Closed);
    QCOMPARE(rig.phases.closeReason().message, QStringLiteral("action performed"));
    QCOMPARE(receipts.count(), 1);

    const QJsonObject json = receipts.at(0).at(0).toJsonObject();
    QCOMPARE(json, receipt->toJson());
    QCOMPARE(json.value(QStringLiteral("grant_digest")).toString(), QString::fromLatin1(rig.grant.digestHex));
    QCOMPARE(json.value(QStringLiteral("run")).toString(), rig.grant.runId);
    QCOMPARE(json.value(QStringLiteral("task")).toString(), rig.grant.taskId);
    QCOMPARE(json.value(QStringLiteral("vm_uuid")).toString(), rig.grant.vm.uuid);
    QCOMPARE(json.value(QStringLiteral("vm_name")).toString(), rig.grant.vm.name);
    QCOMPARE(json.value(QStringLiteral("mcp_server")).toString(), rig.grant.mcp.server);
    QCOMPARE(json.value(QStringLiteral("mcp_tool")).toString(), QStringLiteral("perform_action"));
    QCOMPARE(json.value(QStringLiteral("action")).toString(), QStringLiteral("click(100,50)"));
    QVERIFY(json.value(QStringLiteral("candidate")).isNull());
    QCOMPARE(json.value(QStringLiteral("outcome")).toString(), QStringLiteral("executed"));
    QVERIFY(!QUuid::fromString(json.value(QStringLiteral("event_id")).toString()).isNull());
    QCOMPARE(json.value(QStringLiteral("evidence_head")).toString().toLatin1(), rig.evidence.headHash());

    // The same call, another action, another route: all refused, nothing sent.
    for (const char* args : {"{\"action\":{\"type\":\"click\",\"x\":100,\"y\":50}}",
                             "{\"action\":{\"type\":\"key_chord\",\"keys\":[\"enter\"]}}", "{}"}) {
      const auto again = rig.service.performAction(obj(args));
      QVERIFY(!again.ok());
      QCOMPARE(again.code(), Refusal::AlreadyActed);
    }
    QCOMPARE(rig.service.requestLock().code(), Refusal::AlreadyActed);
    QCOMPARE(rig.sink.attempts, 3);
    QCOMPARE(receipts.count(), 1);
  }

  void failedSendIsRecordedAndNeverRetried() {
    Rig rig;
    rig.sink.mode = RecordingSink::Mode::FailAt;
    rig.sink.failAt = 1; // the button-down of the click
    QSignalSpy receipts(&rig.service, &ActionService::receiptIssued);
    QVERIFY(rig.toReviewing());
    const auto receipt = rig.service.performAction(obj("{\"action\":{\"type\":\"click\",\"x\":3,\"y\":4}}"));
    QVERIFY(receipt.ok());
    QCOMPARE(receipt->result, Receipt::Result::Failed);
    QCOMPARE(receipt->eventsSent, 1);
    QCOMPARE(receipt->failure->code, Refusal::InputSendFailed);
    QCOMPARE(receipt->toJson().value(QStringLiteral("outcome")).toString(), QStringLiteral("failed"));
    QCOMPARE(rig.sink.attempts, 2);
    QCOMPARE(rig.phases.phase(), Phase::Closed);
    QCOMPARE(rig.phases.closeReason().code, Refusal::InputSendFailed);
    QCOMPARE(receipts.count(), 1);
    QCOMPARE(rig.service.performAction(obj("{\"action\":{\"type\":\"click\",\"x\":3,\"y\":4}}")).code(),
             Refusal::AlreadyActed);
    QCOMPARE(rig.sink.attempts, 2);
  }

  void invalidArgumentsDoNotUseUpTheAction_data() {
    QTest::addColumn<bool>("candidates");
    QTest::addColumn<QString>("arguments");
    QTest::newRow("outside the frame") << false << "{\"action\":{\"type\":\"click\",\"x\":320,\"y\":0}}";
    QTest::newRow("unknown key") << false
                                 << "{\"action\":{\"type\":\"key_chord\",\"keys\":[\"ctrl\",\"§\"]}}";
    QTest::newRow("extra argument")
        << false << "{\"action\":{\"type\":\"click\",\"x\":1,\"y\":1},\"why\":\"because\"}";
    QTest::newRow("no arguments") << false << "{}";
    QTest::newRow("candidate_id without candidates") << false << "{\"candidate_id\":\"save\"}";
    QTest::newRow("free action when candidates")
        << true << "{\"action\":{\"type\":\"click\",\"x\":1,\"y\":1}}";
    QTest::newRow("candidate plus action")
        << true
        << "{\"candidate_id\":\"save\",\"action\":{\"type\":\"click\",\"x\":1,"
           "\"y\":1}}";
    QTest::newRow("unknown candidate") << true << "{\"candidate_id\":\"delete-all\"}";
    QTest::newRow("numeric candidate") << true << "{\"candidate_id\":1}";
  }
  void invalidArgumentsDoNotUseUpTheAction() {
    QFETCH(bool, candidates);
    QFETCH(QString, arguments);
    GrantOptions options;
    options.candidates = candidates;
    Rig rig(options);
    QVERIFY(rig.toReviewing());
    const auto refused = rig.service.performAction(QJsonDocument::fromJson(arguments.toUtf8()).object());
    QVERIFY(!refused.ok());
    QCOMPARE(refused.code(), Refusal::ActionInvalid);
    QVERIFY(rig.sink.events.empty());
    QCOMPARE(rig.phases.phase(), Phase::Reviewing);
    const auto valid =
        rig.service.performAction(candidates ? obj("{\"candidate_id\":\"save\"}")
                                             : obj("{\"action\":{\"type\":\"click\",\"x\":1,\"y\":1}}"));
    QVERIFY(valid.ok());
    QCOMPARE(valid->result, Receipt::Result::Executed);
  }

  // --- The canonical vocabulary (issue 25) -----------------------------------------------
  void plansTheCanonicalVocabulary_data() {
    QTest::addColumn<QString>("action");
    QTest::addColumn<QString>("expected");
    QTest::newRow("middle click with shift")
        << "{\"type\":\"click\",\"x\":10,\"y\":20,\"button\":\"middle\",\"hold_keys\":[\"shift\"]}"
        << "k2a+ p10,20,0 p10,20,4 p10,20,0 k2a-";
    QTest::newRow("triple click") << "{\"type\":\"click\",\"x\":1,\"y\":2,\"count\":3}"
                                  << "p1,2,0 p1,2,1 p1,2,0 p1,2,0 p1,2,1 p1,2,0 p1,2,0 p1,2,1 p1,2,0";
    QTest::newRow("back button") << "{\"type\":\"click\",\"x\":5,\"y\":5,\"button\":\"back\"}"
                                 << "p5,5,0 p5,5,8 p5,5,0";
    QTest::newRow("forward button") << "{\"type\":\"click\",\"x\":5,\"y\":5,\"button\":\"forward\"}"
                                    << "p5,5,0 p5,5,16 p5,5,0";
    QTest::newRow("ctrl+shift click, modifiers ordered")
        << "{\"type\":\"click\",\"x\":3,\"y\":4,\"hold_keys\":[\"shift\",\"ctrl\"]}"
        << "k1d+ k2a+ p3,4,0 p3,4,1 p3,4,0 k2a- k1d-";
    QTest::newRow("move") << "{\"type\":\"move\",\"x\":7,\"y\":8}"
                          << "p7,8,0";
    QTest::newRow("drag in steps of at most 8 px")
        << "{\"type\":\"drag\",\"path\":[{\"x\":10,\"y\":10},{\"x\":30,\"y\":10}]}"
        << "p10,10,0 p10,10,1 p17,10,1 p23,10,1 p30,10,1 p30,10,0";
    QTest::newRow("drag along three points, right button")
        << "{\"type\":\"drag\",\"path\":[{\"x\":0,\"y\":0},{\"x\":0,\"y\":8},{\"x\":6,\"y\":16}],\"button\":"
           "\"right\"}"
        << "p0,0,0 p0,0,2 p0,8,2 p3,12,2 p6,16,2 p6,16,0";
    QTest::newRow("scroll down 3") << "{\"type\":\"scroll\",\"x\":50,\"y\":60,\"dx\":0,\"dy\":3}"
                                   << "p50,60,0 p50,60,0,w-120 p50,60,0,w-120 p50,60,0,w-120";
    QTest::newRow("scroll up 1, right 2, with ctrl")
        << "{\"type\":\"scroll\",\"x\":1,\"y\":1,\"dx\":2,\"dy\":-1,\"hold_keys\":[\"ctrl\"]}"
        << "k1d+ p1,1,0 p1,1,0,w120 p1,1,0,w120h p1,1,0,w120h k1d-";
    QTest::newRow("scroll left") << "{\"type\":\"scroll\",\"x\":1,\"y\":1,\"dx\":-1,\"dy\":0}"
                                 << "p1,1,0 p1,1,0,w-120h";
    QTest::newRow("key chord with punctuation") << "{\"type\":\"key_chord\",\"keys\":[\"ctrl\",\"minus\"]}"
                                                << "k1d+ kc+ kc- k1d-";
    QTest::newRow("hold shift 1.5 s") << "{\"type\":\"hold_key\",\"keys\":[\"shift\"],\"seconds\":1.5}"
                                      << "k2a+ P1500 k2a-";
    QTest::newRow("type ASCII, accents, U+1F600, newline, tab")
        << QString::fromUtf8("{\"type\":\"type_text\",\"text\":\"Hé\\t😀\\r\\nZ\"}")
        << "u48+ u48- ue9+ ue9- kf+ kf- ud83d+ ud83d- ude00+ ude00- k1c+ k1c- u5a+ u5a-";
    QTest::newRow("wait") << "{\"type\":\"wait\",\"seconds\":0.25}"
                          << "P250";
    QTest::newRow("done") << "{\"type\":\"done\"}"
                          << "";
    QTest::newRow("fail") << "{\"type\":\"fail\"}"
                          << "";
  }
  void plansTheCanonicalVocabulary() {
    QFETCH(QString, action);
    QFETCH(QString, expected);
    const Outcome<ActionSpec> spec =
        ActionSpec::fromJson(QJsonDocument::fromJson(action.toUtf8()).object(), everyKind());
    QVERIFY2(spec.ok(), spec.ok() ? "" : qPrintable(spec.failure().message));
    ActionPlan::Context all;
    all.caps = InputCaps{true, true, true};
    const Outcome<QList<InputEvent>> plan = ActionPlan::plan(*spec, QSize(320, 200), all);
    QVERIFY2(plan.ok(), plan.ok() ? "" : qPrintable(plan.failure().message));
    QStringList got;
    quint64 seq = 0;
    for (const InputEvent& e : plan.value()) {
      QCOMPARE(e.seq, ++seq);
      got << eventText(e);
    }
    QCOMPARE(got.join(u' '), expected);
    // The canonical JSON round-trips to the same action.
    const Outcome<ActionSpec> again = ActionSpec::fromJson(spec->toJson(), everyKind());
    QVERIFY(again.ok());
    QCOMPARE(*again, *spec);
  }

  // What the server did not advertise is refused before anything is planned (issue 25).
  void refusesInputTheServerDoesNotAdvertise_data() {
    QTest::addColumn<QString>("action");
    QTest::addColumn<int>("textInput"); // ActionPolicy::TextInput
    QTest::addColumn<int>("code");      // Refusal, or -1: planned as scancodes
    QTest::newRow("type_text without Unicode")
        << "{\"type\":\"type_text\",\"text\":\"a\"}" << 0 << int(Refusal::ActionUnsupported);
    QTest::newRow("horizontal scroll without the wheel")
        << "{\"type\":\"scroll\",\"x\":1,\"y\":1,\"dx\":1,\"dy\":0}" << 0 << int(Refusal::ActionUnsupported);
    QTest::newRow("back button without MOUSEX")
        << "{\"type\":\"click\",\"x\":1,\"y\":1,\"button\":\"back\"}" << 0 << int(Refusal::ActionUnsupported);
    QTest::newRow("scancodes: an accent has no US key")
        << QString::fromUtf8("{\"type\":\"type_text\",\"text\":\"é\"}") << 1
        << int(Refusal::ActionUnsupported);
    QTest::newRow("scancodes: ASCII is typed on the US layout")
        << "{\"type\":\"type_text\",\"text\":\"A b\"}" << 1 << -1;
  }
  void refusesInputTheServerDoesNotAdvertise() {
    QFETCH(QString, action);
    QFETCH(int, textInput);
    QFETCH(int, code);
    const Outcome<ActionSpec> spec =
        ActionSpec::fromJson(QJsonDocument::fromJson(action.toUtf8()).object(), everyKind());
    QVERIFY(spec.ok());
    ActionPlan::Context none;
    none.textInput = ActionPolicy::TextInput(textInput);
    const Outcome<QList<InputEvent>> plan = ActionPlan::plan(*spec, QSize(320, 200), none);
    if (code >= 0) {
      QVERIFY(!plan.ok());
      QCOMPARE(int(plan.code()), code);
      return;
    }
    QVERIFY(plan.ok());
    QStringList got;
    for (const InputEvent& e : plan.value())
      got << eventText(e);
    QCOMPARE(got.join(u' '), QStringLiteral("k2a+ k1e+ k1e- k2a- k39+ k39- k30+ k30-"));
  }

  // text_input "scancodes" types with scancodes even where the server advertises Unicode
  // input (FreeRDP 3.10's shadow server advertises it and drops every Unicode event: the live
  // lane's finding, issue 25): what the US layout has is typed, anything else is refused
  // before a single event is planned, never half-typed.
  void typesScancodesWhenTheGrantSaysSoEvenWithUnicodeInput() {
    ActionPlan::Context unicodeServer;
    unicodeServer.caps = InputCaps{true, true, true};
    unicodeServer.textInput = ActionPolicy::TextInput::Scancodes;
    const Outcome<ActionSpec> ascii = ActionSpec::fromJson(
        QJsonDocument::fromJson("{\"type\":\"type_text\",\"text\":\"A b\"}").object(), everyKind());
    QVERIFY(ascii.ok());
    const Outcome<QList<InputEvent>> typed = ActionPlan::plan(*ascii, QSize(320, 200), unicodeServer);
    QVERIFY(typed.ok());
    QStringList got;
    for (const InputEvent& e : typed.value()) {
      QVERIFY(e.kind != InputEvent::Kind::Unicode);
      got << eventText(e);
    }
    QCOMPARE(got.join(u' '), QStringLiteral("k2a+ k1e+ k1e- k2a- k39+ k39- k30+ k30-"));
    const Outcome<ActionSpec> accented = ActionSpec::fromJson(
        QJsonDocument::fromJson(QString::fromUtf8("{\"type\":\"type_text\",\"text\":\"ab\u00e9\"}").toUtf8())
            .object(),
        everyKind());
    QVERIFY(accented.ok());
    const Outcome<QList<InputEvent>> refused = ActionPlan::plan(*accented, QSize(320, 200), unicodeServer);
    QVERIFY(!refused.ok());
    QCOMPARE(refused.code(), Refusal::ActionUnsupported);
    // With text_input "unicode" the same server gets Unicode events.
    unicodeServer.textInput = ActionPolicy::TextInput::Unicode;
    const Outcome<QList<InputEvent>> unicode = ActionPlan::plan(*accented, QSize(320, 200), unicodeServer);
    QVERIFY(unicode.ok());
    QCOMPARE(unicode.value().size(), 6);
    for (const InputEvent& e : unicode.value())
      QVERIFY(e.kind == InputEvent::Kind::Unicode);
  }

  // The grant limits the vocabulary: outside it is ACTION_INVALID, nothing is sent and the
  // one action is not used up (issue 25 point 2).
  void refusesActionsOutsideTheGrant_data() {
    QTest::addColumn<bool>("legacy");
    QTest::addColumn<QString>("arguments");
    QTest::newRow("no kinds: a middle click")
        << true << "{\"action\":{\"type\":\"click\",\"x\":1,\"y\":1,\"button\":\"middle\"}}";
    QTest::newRow("no kinds: a triple click")
        << true << "{\"action\":{\"type\":\"click\",\"x\":1,\"y\":1,\"count\":3}}";
    QTest::newRow("no kinds: type_text") << true << "{\"action\":{\"type\":\"type_text\",\"text\":\"x\"}}";
    QTest::newRow("no kinds: a dialect's scroll")
        << true
        << "{\"anthropic\":{\"action\":\"scroll\",\"coordinate\":[5,5],\"scroll_direction\":\"down\","
           "\"scroll_amount\":1}}";
    QTest::newRow("no kinds: shift held")
        << true << "{\"action\":{\"type\":\"click\",\"x\":1,\"y\":1,\"hold_keys\":[\"shift\"]}}";
    QTest::newRow("text over text_chars")
        << false << "{\"action\":{\"type\":\"type_text\",\"text\":\"abcdef\"}}";
    QTest::newRow("drag over drag_points") << false
                                           << "{\"action\":{\"type\":\"drag\",\"path\":[{\"x\":1,\"y\":1},{"
                                              "\"x\":2,\"y\":2},{\"x\":3,\"y\":3}]}}";
    QTest::newRow("hold over hold_seconds")
        << false << "{\"action\":{\"type\":\"hold_key\",\"keys\":[\"a\"],\"seconds\":2}}";
    QTest::newRow("wait over wait_seconds") << false << "{\"action\":{\"type\":\"wait\",\"seconds\":3}}";
    QTest::newRow("scroll over scroll_notches")
        << false << "{\"action\":{\"type\":\"scroll\",\"x\":1,\"y\":1,\"dx\":0,\"dy\":4}}";
    QTest::newRow("a kind not listed") << false << "{\"action\":{\"type\":\"move\",\"x\":1,\"y\":1}}";
    QTest::newRow("openai batch")
        << false << "{\"openai\":[{\"type\":\"click\",\"x\":1,\"y\":1},{\"type\":\"type\",\"text\":\"a\"}]}";
    QTest::newRow("two dialects")
        << false << "{\"openai\":{\"type\":\"wait\"},\"osworld\":{\"action_type\":\"WAIT\"}}";
    QTest::newRow("osworld KEY_DOWN")
        << false << "{\"osworld\":{\"action_type\":\"KEY_DOWN\",\"parameters\":{\"key\":\"a\"}}}";
    QTest::newRow("ui_tars two calls")
        << false << "{\"ui_tars\":\"click(start_box='(1,1)')\\nclick(start_box='(2,2)')\"}";
    QTest::newRow("control character in text")
        << false << "{\"action\":{\"type\":\"type_text\",\"text\":\"a\\u0007\"}}";
  }
  void refusesActionsOutsideTheGrant() {
    QFETCH(bool, legacy);
    QFETCH(QString, arguments);
    GrantOptions options;
    if (!legacy) {
      options.policy = everyKind();
      options.policy.kinds &= ~(1u << quint32(ActionSpec::Kind::Move));
      options.policy.limits = ActionLimits{5, 2, 1000, 2000, 3};
    }
    Rig rig(options);
    QVERIFY(rig.toReviewing());
    const auto refused = rig.service.performAction(QJsonDocument::fromJson(arguments.toUtf8()).object());
    QVERIFY(!refused.ok());
    QCOMPARE(refused.code(), Refusal::ActionInvalid);
    QVERIFY(rig.sink.events.empty());
    QCOMPARE(rig.phases.phase(), Phase::Reviewing);
    QVERIFY(!rig.service.hasActed());
    // Still usable: a click the grant allows.
    const auto valid = rig.service.performAction(obj("{\"action\":{\"type\":\"click\",\"x\":1,\"y\":1}}"));
    QVERIFY(valid.ok());
    QCOMPARE(valid->result, Receipt::Result::Executed);
  }

  // ---- coordinates in the space the model saw; zoom (issue 25 item 4) -------------------

  // The filter is area averaging with exact integer weights: 3 pixels into 2 weighs the
  // middle one half into each (thirds of the output's footprint), rounded half up.
  void scalesByExactAreaAverages() {
    QImage frame(3, 1, QImage::Format_RGB32);
    frame.setPixel(0, 0, qRgb(0, 30, 255));
    frame.setPixel(1, 0, qRgb(90, 30, 0));
    frame.setPixel(2, 0, qRgb(180, 30, 1));
    const QImage out = CaptureScaler::scaled(frame, QSize(2, 1));
    QCOMPARE(out.size(), QSize(2, 1));
    QCOMPARE(QColor(out.pixel(0, 0)), QColor(30, 30, 170)); // (0*2 + 90)/3, (255*2 + 0)/3
    QCOMPARE(QColor(out.pixel(1, 0)), QColor(150, 30, 1));  // (90 + 180*2)/3, (0 + 1*2)/3 = 0.67 → 1
    // Halving: each output pixel is the mean of its 2x2 block; the same frame, the same bytes.
    const QImage frame2 = makeFrame(320, 200);
    const QImage half = CaptureScaler::scaled(frame2, QSize(160, 100));
    for (const QPoint p : {QPoint(0, 1), QPoint(17, 33), QPoint(159, 99)}) {
      int r = 0, g = 0, b = 0;
      for (int dy = 0; dy < 2; ++dy)
        for (int dx = 0; dx < 2; ++dx) {
          const QRgb c = frame2.pixel(2 * p.x() + dx, 2 * p.y() + dy);
          r += qRed(c);
          g += qGreen(c);
          b += qBlue(c);
        }
      QCOMPARE(QColor(half.pixel(p)), QColor((r + 2) / 4, (g + 2) / 4, (b + 2) / 4));
    }
    QCOMPARE(CaptureScaler::scaled(frame2, QSize(160, 100)), half);
    // The same size is the frame itself, byte for byte.
    QCOMPARE(CaptureScaler::scaled(frame2, frame2.size()).constBits(), frame2.constBits());
  }

  // The cost of the filter on a real desktop size (docs/mcp.md "Coordinates" quotes it):
  // tst_action scalesAFullHdFrameToWxga -iterations 5.
  void scalesAFullHdFrameToWxga() {
    const QImage frame = makeFrame(1920, 1080);
    QImage out;
    QBENCHMARK {
      out = CaptureScaler::scaled(frame, QSize(1280, 800));
    }
    QCOMPARE(out.size(), QSize(1280, 800));
    QCOMPARE(out.format(), QImage::Format_RGB32);
  }

  // capture_desktop returns the grant's size; the evidence's hash is of the PNG the model got,
  // and the scale says from what to what. Without a capture section nothing changes.
  void capturesAtTheGrantsSize_data() {
    QTest::addColumn<int>("mode");
    QTest::addColumn<QSize>("bound");
    QTest::addColumn<QSize>("expected");
    QTest::newRow("no capture section") << int(CaptureBound::Mode::Desktop) << QSize() << QSize(320, 200);
    QTest::newRow("size 160x100") << int(CaptureBound::Mode::Size) << QSize(160, 100) << QSize(160, 100);
    QTest::newRow("size 200x150 (not a divisor)")
        << int(CaptureBound::Mode::Size) << QSize(200, 150) << QSize(200, 150);
    QTest::newRow("long edge 256") << int(CaptureBound::Mode::LongEdge) << QSize(256, 0) << QSize(256, 160);
    QTest::newRow("long edge beyond the desktop")
        << int(CaptureBound::Mode::LongEdge) << QSize(1024, 0) << QSize(320, 200);
  }
  void capturesAtTheGrantsSize() {
    QFETCH(int, mode);
    QFETCH(QSize, bound);
    QFETCH(QSize, expected);
    GrantOptions options;
    options.capture.mode = CaptureBound::Mode(mode);
    options.capture.size = bound;
    options.capture.longEdge = bound.width();
    Rig rig(options);
    QVERIFY(rig.evidenceOpen);
    QVERIFY(rig.barrier.requestLock(QStringLiteral("test")).ok());
    const auto capture = rig.service.captureDesktop();
    QVERIFY2(capture.ok(), capture.ok() ? "" : qPrintable(capture.failure().toString()));
    QCOMPARE(QSize(capture->width, capture->height), expected);
    QCOMPARE(capture->from, QSize(320, 200));
    QImage decoded;
    QVERIFY(decoded.loadFromData(capture->png, "PNG"));
    QCOMPARE(decoded.size(), expected);
    const QImage reference = CaptureScaler::scaled(makeFrame(), expected);
    QCOMPARE(decoded.convertToFormat(QImage::Format_RGB32), reference);
    rig.evidence.close();
    QJsonObject entry;
    for (const QByteArray& line : rig.evidenceBytes().split('\n'))
      if (QJsonDocument::fromJson(line).object().value(QStringLiteral("event")) == QStringLiteral("capture"))
        entry = QJsonDocument::fromJson(line).object();
    QCOMPARE(entry.value(QStringLiteral("sha256")).toString().toLatin1(),
             QCryptographicHash::hash(capture->png, QCryptographicHash::Sha256).toHex());
    const QJsonObject scale = entry.value(QStringLiteral("scale")).toObject();
    QCOMPARE(scale.value(QStringLiteral("from")).toArray(), (QJsonArray{320, 200}));
    QCOMPARE(scale.value(QStringLiteral("to")).toArray(), (QJsonArray{expected.width(), expected.height()}));
    QCOMPARE(scale.value(QStringLiteral("filter")).toString(), QStringLiteral("area-average"));
  }

  // A fixed size the server's desktop cannot give is refused at capture: OBSERVATION_INVALID,
  // nothing captured, the phase unchanged.
  void refusesACaptureSizeTheDesktopCannotGive() {
    GrantOptions options;
    options.capture.mode = CaptureBound::Mode::Size;
    options.capture.size = QSize(400, 300); // the frame is 320x200
    Rig rig(options);
    QVERIFY(rig.barrier.requestLock(QStringLiteral("test")).ok());
    const auto capture = rig.service.captureDesktop();
    QVERIFY(!capture.ok());
    QCOMPARE(capture.code(), Refusal::ObservationInvalid);
    QCOMPARE(rig.phases.phase(), Phase::Capturing);
  }

  // Every kind's and dialect's coordinates are in the capture's space, mapped to the desktop
  // by X = floor((x + 0.5) * W / w); UI-TARS' normalised ones straight onto the desktop. The
  // sink gets desktop pixels; the receipt records both spaces and each point.
  void mapsCoordinatesFromTheCaptureSpace_data() {
    QTest::addColumn<QSize>("space");
    QTest::addColumn<QString>("arguments");
    QTest::addColumn<QStringList>("expected"); // eventText of what the sink got
    QTest::addColumn<QString>("points");       // the receipt's mapping.points, compact JSON
    const QSize half(160, 100), odd(200, 150); // of the 320x200 frame
    QTest::newRow("click, half size, origin")
        << half << "{\"action\":{\"type\":\"click\",\"x\":0,\"y\":0}}"
        << QStringList{"p1,1,0", "p1,1,1", "p1,1,0"} << "[{\"from\":[0,0],\"to\":[1,1]}]";
    QTest::newRow("click, half size, last pixel")
        << half << "{\"action\":{\"type\":\"click\",\"x\":159,\"y\":99}}"
        << QStringList{"p319,199,0", "p319,199,1", "p319,199,0"} << "[{\"from\":[159,99],\"to\":[319,199]}]";
    QTest::newRow("click, 200x150") << odd << "{\"action\":{\"type\":\"click\",\"x\":100,\"y\":75}}"
                                    << QStringList{"p160,100,0", "p160,100,1", "p160,100,0"}
                                    << "[{\"from\":[100,75],\"to\":[160,100]}]";
    QTest::newRow("move, 200x150") << odd << "{\"action\":{\"type\":\"move\",\"x\":199,\"y\":149}}"
                                   << QStringList{"p319,199,0"} << "[{\"from\":[199,149],\"to\":[319,199]}]";
    QTest::newRow("drag, half size")
        << half << "{\"action\":{\"type\":\"drag\",\"path\":[{\"x\":10,\"y\":10},{\"x\":14,\"y\":10}]}}"
        << QStringList{"p21,21,0", "p21,21,1", "p29,21,1", "p29,21,0"}
        << "[{\"from\":[10,10],\"to\":[21,21]},{\"from\":[14,10],\"to\":[29,21]}]";
    QTest::newRow("scroll, half size")
        << half << "{\"action\":{\"type\":\"scroll\",\"x\":50,\"y\":20,\"dx\":0,\"dy\":1}}"
        << QStringList{"p101,41,0", "p101,41,0,w-120"} << "[{\"from\":[50,20],\"to\":[101,41]}]";
    QTest::newRow("key_chord has no points")
        << half << "{\"action\":{\"type\":\"key_chord\",\"keys\":[\"ctrl\",\"s\"]}}"
        << QStringList{"k1d+", "k1f+", "k1f-", "k1d-"} << "[]";
    QTest::newRow("anthropic left_click")
        << half << "{\"anthropic\":{\"action\":\"left_click\",\"coordinate\":[80,50]}}"
        << QStringList{"p161,101,0", "p161,101,1", "p161,101,0"} << "[{\"from\":[80,50],\"to\":[161,101]}]";
    QTest::newRow("openai click") << odd
                                  << "{\"openai\":{\"type\":\"click\",\"button\":\"left\",\"x\":1,\"y\":1}}"
                                  << QStringList{"p2,2,0", "p2,2,1", "p2,2,0"}
                                  << "[{\"from\":[1,1],\"to\":[2,2]}]";
    QTest::newRow("osworld CLICK")
        << half << "{\"osworld\":{\"action_type\":\"CLICK\",\"parameters\":{\"x\":3,\"y\":4}}}"
        << QStringList{"p7,9,0", "p7,9,1", "p7,9,0"} << "[{\"from\":[3,4],\"to\":[7,9]}]";
    QTest::newRow("ui_tars: normalised, onto the desktop in one step")
        << odd << "{\"ui_tars\":\"click(start_box='(500,300)')\"}"
        << QStringList{"p160,60,0", "p160,60,1", "p160,60,0"} << "[{\"to\":[160,60]}]";
    QTest::newRow("no capture section: the identity")
        << QSize(320, 200) << "{\"action\":{\"type\":\"click\",\"x\":5,\"y\":6}}"
        << QStringList{"p5,6,0", "p5,6,1", "p5,6,0"} << "[{\"from\":[5,6],\"to\":[5,6]}]";
  }
  void mapsCoordinatesFromTheCaptureSpace() {
    QFETCH(QSize, space);
    QFETCH(QString, arguments);
    QFETCH(QStringList, expected);
    QFETCH(QString, points);
    GrantOptions options;
    options.policy = everyKind();
    if (space != QSize(320, 200)) {
      options.capture.mode = CaptureBound::Mode::Size;
      options.capture.size = space;
    }
    Rig rig(options);
    QVERIFY(rig.toReviewing());
    const auto receipt = rig.service.performAction(QJsonDocument::fromJson(arguments.toUtf8()).object());
    QVERIFY2(receipt.ok(), receipt.ok() ? "" : qPrintable(receipt.failure().toString()));
    QCOMPARE(receipt->result, Receipt::Result::Executed);
    QStringList sent;
    for (const InputEvent& e : rig.sink.events)
      sent << eventText(e);
    QCOMPARE(sent, expected);
    const QJsonObject json = receipt->toJson();
    const bool normalised = arguments.contains(QStringLiteral("ui_tars"));
    QJsonObject expectedSpace{{QStringLiteral("width"), normalised ? 1000 : space.width()},
                              {QStringLiteral("height"), normalised ? 1000 : space.height()}};
    if (normalised)
      expectedSpace.insert(QStringLiteral("normalised"), true);
    QCOMPARE(json.value(QStringLiteral("coordinate_space")).toObject(), expectedSpace);
    QCOMPARE(json.value(QStringLiteral("mapped_to")).toObject(),
             (QJsonObject{{QStringLiteral("width"), 320}, {QStringLiteral("height"), 200}}));
    const QJsonObject mapping = json.value(QStringLiteral("mapping")).toObject();
    QCOMPARE(QJsonDocument(mapping.value(QStringLiteral("points")).toArray()).toJson(QJsonDocument::Compact),
             points.toUtf8());
    QVERIFY(!mapping.value(QStringLiteral("rule")).toString().isEmpty());
  }

  // A dialect action "at the pointer" takes the pointer's desktop position into the capture's
  // space (x = floor((X + 0.5) * w / W)) and maps it back like any point: within the capture
  // pixel's footprint, recorded in the receipt.
  void actsAtThePointerThroughTheCaptureSpace_data() {
    QTest::addColumn<QPoint>("pointer");
    QTest::addColumn<QPoint>("space");
    QTest::addColumn<QPoint>("desktop");
    QTest::newRow("on a capture pixel's centre") << QPoint(101, 41) << QPoint(50, 20) << QPoint(101, 41);
    QTest::newRow("off the centre: the footprint's centre pixel")
        << QPoint(100, 40) << QPoint(50, 20) << QPoint(101, 41);
  }
  void actsAtThePointerThroughTheCaptureSpace() {
    QFETCH(QPoint, pointer);
    QFETCH(QPoint, space);
    QFETCH(QPoint, desktop);
    GrantOptions options;
    options.capture.mode = CaptureBound::Mode::Size;
    options.capture.size = QSize(160, 100);
    options.policy = everyKind();
    Rig rig(options);
    rig.service.setPointerPosition([pointer] { return std::optional<QPoint>(pointer); });
    QVERIFY(rig.toReviewing());
    const auto receipt =
        rig.service.performAction(obj("{\"osworld\":{\"action_type\":\"CLICK\",\"parameters\":{}}}"));
    QVERIFY2(receipt.ok(), receipt.ok() ? "" : qPrintable(receipt.failure().toString()));
    QCOMPARE(rig.sink.events.front().x, desktop.x());
    QCOMPARE(rig.sink.events.front().y, desktop.y());
    const QJsonObject point = receipt->toJson()
                                  .value(QStringLiteral("mapping"))
                                  .toObject()
                                  .value(QStringLiteral("points"))
                                  .toArray()
                                  .at(0)
                                  .toObject();
    QCOMPARE(point.value(QStringLiteral("from")).toArray(), (QJsonArray{space.x(), space.y()}));
    QCOMPARE(point.value(QStringLiteral("to")).toArray(), (QJsonArray{desktop.x(), desktop.y()}));
  }

  // Outside the capture's space (though inside the desktop): ACTION_INVALID, nothing sent, the
  // action not used up.
  void refusesCoordinatesOutsideTheCaptureSpace_data() {
    QTest::addColumn<QString>("arguments");
    QTest::newRow("click at x = width") << "{\"action\":{\"type\":\"click\",\"x\":160,\"y\":0}}";
    QTest::newRow("move at y = height") << "{\"action\":{\"type\":\"move\",\"x\":0,\"y\":100}}";
    QTest::newRow("drag ends outside")
        << "{\"action\":{\"type\":\"drag\",\"path\":[{\"x\":1,\"y\":1},{\"x\":300,\"y\":1}]}}";
    QTest::newRow("scroll outside")
        << "{\"action\":{\"type\":\"scroll\",\"x\":200,\"y\":50,\"dx\":0,\"dy\":1}}";
    QTest::newRow("anthropic outside")
        << "{\"anthropic\":{\"action\":\"left_click\",\"coordinate\":[319,199]}}";
    QTest::newRow("openai outside")
        << "{\"openai\":{\"type\":\"click\",\"button\":\"left\",\"x\":170,\"y\":1}}";
    QTest::newRow("osworld outside")
        << "{\"osworld\":{\"action_type\":\"MOVE_TO\",\"parameters\":{\"x\":1,\"y\":150}}}";
    QTest::newRow("ui_tars beyond 1000") << "{\"ui_tars\":\"click(start_box='(1001,5)')\"}";
  }
  void refusesCoordinatesOutsideTheCaptureSpace() {
    QFETCH(QString, arguments);
    GrantOptions options;
    options.policy = everyKind();
    options.capture.mode = CaptureBound::Mode::Size;
    options.capture.size = QSize(160, 100);
    Rig rig(options);
    QVERIFY(rig.toReviewing());
    const auto refused = rig.service.performAction(QJsonDocument::fromJson(arguments.toUtf8()).object());
    QVERIFY(!refused.ok());
    QCOMPARE(refused.code(), Refusal::ActionInvalid);
    QVERIFY(rig.sink.events.empty());
    QVERIFY(!rig.service.hasActed());
    QCOMPARE(rig.phases.phase(), Phase::Reviewing);
    const auto valid = rig.service.performAction(obj("{\"action\":{\"type\":\"click\",\"x\":159,\"y\":99}}"));
    QVERIFY(valid.ok());
    QCOMPARE(valid->result, Receipt::Result::Executed);
  }

  // zoom_desktop: the region of the capture's space at full desktop resolution; an
  // observation (nothing used up, no phase change), its hash in the evidence, never its pixels.
  void zoomReturnsTheRegionAtFullResolution() {
    GrantOptions options;
    options.capture.mode = CaptureBound::Mode::Size;
    options.capture.size = QSize(200, 150);
    Rig rig(options);
    QVERIFY(rig.evidenceOpen);
    QVERIFY(rig.barrier.requestLock(QStringLiteral("test")).ok());
    // Allowed where capture is: already in CAPTURING, and it does not start REVIEWING.
    const auto zoom = rig.service.zoomDesktop(obj("{\"region\":[10,15,61,90]}"));
    QVERIFY2(zoom.ok(), zoom.ok() ? "" : qPrintable(zoom.failure().toString()));
    QCOMPARE(rig.phases.phase(), Phase::Capturing);
    // floor(10*1.6) = 16, floor(15*4/3) = 20; ceil(61*1.6) = 98, ceil(90*4/3) = 120.
    QCOMPARE(zoom->region, QRect(QPoint(16, 20), QPoint(97, 119)));
    QCOMPARE(QSize(zoom->width, zoom->height), QSize(82, 100));
    QImage decoded;
    QVERIFY(decoded.loadFromData(zoom->png, "PNG"));
    QCOMPARE(decoded.convertToFormat(QImage::Format_RGB32), makeFrame().copy(zoom->region));
    QVERIFY(!rig.service.hasActed());
    QVERIFY(rig.service.captureDesktop().ok());
    QVERIFY(rig.service.zoomDesktop(obj("{\"region\":[0,0,1,1]}")).ok());
    QCOMPARE(rig.phases.phase(), Phase::Reviewing);
    QVERIFY(rig.service.performAction(obj("{\"action\":{\"type\":\"click\",\"x\":1,\"y\":1}}")).ok());
    rig.evidence.close();
    const QByteArray bytes = rig.evidenceBytes();
    QStringList events;
    QJsonObject first;
    for (const QByteArray& line : bytes.split('\n')) {
      const QJsonObject o = QJsonDocument::fromJson(line).object();
      if (o.isEmpty())
        continue;
      events << o.value(QStringLiteral("event")).toString();
      if (first.isEmpty() && events.last() == u"zoom")
        first = o;
    }
    QCOMPARE(events, (QStringList{QStringLiteral("zoom"), QStringLiteral("capture"), QStringLiteral("zoom"),
                                  QStringLiteral("receipt")}));
    QCOMPARE(first.value(QStringLiteral("sha256")).toString().toLatin1(), zoom->sha256Hex);
    QCOMPARE(first.value(QStringLiteral("desktop_region")).toArray(), (QJsonArray{16, 20, 98, 120}));
    QVERIFY(!bytes.contains("\x89PNG"));
    QVERIFY(!bytes.contains(zoom->png.toBase64().mid(40, 40)));
  }

  // Outside the capture's space, empty, beyond the grant's bound, or malformed:
  // OBSERVATION_INVALID, nothing returned, nothing used up; where capture is not allowed:
  // CAPTURE_NOT_ALLOWED.
  void refusesZoomOutsideItsBounds_data() {
    QTest::addColumn<QString>("arguments");
    QTest::addColumn<bool>("locked");
    QTest::addColumn<QString>("code");
    const QString invalid = QStringLiteral("OBSERVATION_INVALID");
    QTest::newRow("beyond the capture's width") << "{\"region\":[0,0,161,10]}" << true << invalid;
    QTest::newRow("beyond the capture's height") << "{\"region\":[0,0,10,101]}" << true << invalid;
    QTest::newRow("empty") << "{\"region\":[10,10,10,20]}" << true << invalid;
    QTest::newRow("reversed") << "{\"region\":[20,20,10,10]}" << true << invalid;
    QTest::newRow("negative") << "{\"region\":[-1,0,10,10]}" << true << invalid;
    QTest::newRow("fraction") << "{\"region\":[0.5,0,10,10]}" << true << invalid;
    QTest::newRow("three numbers") << "{\"region\":[0,0,10]}" << true << invalid;
    QTest::newRow("strings") << "{\"region\":[\"0\",\"0\",\"10\",\"10\"]}" << true << invalid;
    QTest::newRow("no region") << "{}" << true << invalid;
    QTest::newRow("another argument") << "{\"region\":[0,0,10,10],\"scale\":2}" << true << invalid;
    // The whole capture at full resolution is 320x200 desktop pixels: more than 160x100.
    QTest::newRow("beyond the grant's bound") << "{\"region\":[0,0,160,100]}" << true << invalid;
    QTest::newRow("in SETUP") << "{\"region\":[0,0,10,10]}" << false << QStringLiteral("CAPTURE_NOT_ALLOWED");
  }
  void refusesZoomOutsideItsBounds() {
    QFETCH(QString, arguments);
    QFETCH(bool, locked);
    QFETCH(QString, code);
    GrantOptions options;
    options.capture.mode = CaptureBound::Mode::Size;
    options.capture.size = QSize(160, 100);
    Rig rig(options);
    QVERIFY(rig.evidenceOpen);
    if (locked)
      QVERIFY(rig.toReviewing());
    const Phase before = rig.phases.phase();
    const auto zoom = rig.service.zoomDesktop(QJsonDocument::fromJson(arguments.toUtf8()).object());
    QVERIFY(!zoom.ok());
    QCOMPARE(refusalName(zoom.code()), code);
    QCOMPARE(rig.phases.phase(), before);
    QVERIFY(!rig.service.hasActed());
    QVERIFY(rig.sink.events.empty());
    rig.evidence.close();
    const QByteArray bytes = rig.evidenceBytes();
    QVERIFY(bytes.contains("\"op\":\"zoom_desktop\""));
    QVERIFY(!bytes.contains("\"event\":\"zoom\""));
  }

  // The Anthropic dialect's zoom is an observation: perform_action refuses it, names
  // zoom_desktop, and keeps the action.
  void anthropicZoomIsRefusedAsAnAction() {
    Rig rig;
    QVERIFY(rig.toReviewing());
    const auto refused =
        rig.service.performAction(obj("{\"anthropic\":{\"action\":\"zoom\",\"region\":[0,0,10,10]}}"));
    QVERIFY(!refused.ok());
    QCOMPARE(refused.code(), Refusal::ActionInvalid);
    QVERIFY2(refused.failure().message.contains(QStringLiteral("zoom_desktop")),
             qPrintable(refused.failure().message));
    QVERIFY(!rig.service.hasActed());
    QVERIFY(rig.sink.events.empty());
  }

  // Each dialect's documented examples become the canonical action (issue 25 point 3).
  void translatesEveryDialect_data() {
    QTest::addColumn<QString>("arguments");
    QTest::addColumn<QString>("canonical");
    // Anthropic computer tool (computer_20250124 docs' examples).
    QTest::newRow("anthropic left_click")
        << "{\"anthropic\":{\"action\":\"left_click\",\"coordinate\":[100,150]}}"
        << "click(100,150)";
    QTest::newRow("anthropic shift+click")
        << "{\"anthropic\":{\"action\":\"left_click\",\"coordinate\":[10,20],\"text\":\"shift\"}}"
        << "click(10,20,hold=shift)";
    QTest::newRow("anthropic right_click")
        << "{\"anthropic\":{\"action\":\"right_click\",\"coordinate\":[3,4]}}"
        << "right_click(3,4)";
    QTest::newRow("anthropic middle_click")
        << "{\"anthropic\":{\"action\":\"middle_click\",\"coordinate\":[3,4]}}"
        << "click(3,4,button=middle)";
    QTest::newRow("anthropic double_click")
        << "{\"anthropic\":{\"action\":\"double_click\",\"coordinate\":[3,4]}}"
        << "double_click(3,4)";
    QTest::newRow("anthropic triple_click")
        << "{\"anthropic\":{\"action\":\"triple_click\",\"coordinate\":[3,4]}}"
        << "click(3,4,count=3)";
    QTest::newRow("anthropic mouse_move")
        << "{\"anthropic\":{\"action\":\"mouse_move\",\"coordinate\":[9,9]}}"
        << "move(9,9)";
    QTest::newRow("anthropic left_click_drag") << "{\"anthropic\":{\"action\":\"left_click_drag\",\"start_"
                                                  "coordinate\":[10,10],\"coordinate\":[50,40]}}"
                                               << "drag(10,10->50,40)";
    QTest::newRow("anthropic key ctrl+s") << "{\"anthropic\":{\"action\":\"key\",\"text\":\"ctrl+s\"}}"
                                          << "key_chord(ctrl+s)";
    QTest::newRow("anthropic key Return") << "{\"anthropic\":{\"action\":\"key\",\"text\":\"Return\"}}"
                                          << "key_chord(enter)";
    QTest::newRow("anthropic key alt+Tab") << "{\"anthropic\":{\"action\":\"key\",\"text\":\"alt+Tab\"}}"
                                           << "key_chord(alt+tab)";
    QTest::newRow("anthropic type") << "{\"anthropic\":{\"action\":\"type\",\"text\":\"Hello, world\"}}"
                                    << "type_text(12 chars)";
    QTest::newRow("anthropic scroll down 3") << "{\"anthropic\":{\"action\":\"scroll\",\"coordinate\":[50,60]"
                                                ",\"scroll_direction\":\"down\",\"scroll_amount\":3}}"
                                             << "scroll(50,60,dx=0,dy=3)";
    QTest::newRow("anthropic scroll left with ctrl")
        << "{\"anthropic\":{\"action\":\"scroll\",\"coordinate\":[5,6],\"scroll_direction\":\"left\","
           "\"scroll_amount\":2,\"text\":\"ctrl\"}}"
        << "scroll(5,6,dx=-2,dy=0,hold=ctrl)";
    QTest::newRow("anthropic hold_key")
        << "{\"anthropic\":{\"action\":\"hold_key\",\"text\":\"shift\",\"duration\":1}}"
        << "hold_key(shift,1000ms)";
    QTest::newRow("anthropic wait") << "{\"anthropic\":{\"action\":\"wait\",\"duration\":2}}"
                                    << "wait(2000ms)";
    // OpenAI computer-use actions (the guide's examples).
    QTest::newRow("openai click")
        << "{\"openai\":{\"type\":\"click\",\"button\":\"left\",\"x\":156,\"y\":50}}"
        << "click(156,50)";
    QTest::newRow("openai wheel click")
        << "{\"openai\":{\"type\":\"click\",\"button\":\"wheel\",\"x\":1,\"y\":2}}"
        << "click(1,2,button=middle)";
    QTest::newRow("openai double_click") << "{\"openai\":{\"type\":\"double_click\",\"x\":5,\"y\":6}}"
                                         << "double_click(5,6)";
    QTest::newRow("openai drag")
        << "{\"openai\":{\"type\":\"drag\",\"path\":[{\"x\":1,\"y\":2},{\"x\":30,\"y\":40}]}}"
        << "drag(1,2->30,40)";
    QTest::newRow("openai scroll 300 px down")
        << "{\"openai\":{\"type\":\"scroll\",\"x\":100,\"y\":100,\"scroll_x\":0,\"scroll_y\":300}}"
        << "scroll(100,100,dx=0,dy=3)";
    QTest::newRow("openai scroll 40 px left is one notch")
        << "{\"openai\":{\"type\":\"scroll\",\"x\":1,\"y\":1,\"scroll_x\":-40,\"scroll_y\":0}}"
        << "scroll(1,1,dx=-1,dy=0)";
    QTest::newRow("openai keypress") << "{\"openai\":{\"type\":\"keypress\",\"keys\":[\"CTRL\",\"L\"]}}"
                                     << "key_chord(ctrl+l)";
    QTest::newRow("openai keypress ENTER") << "{\"openai\":{\"type\":\"keypress\",\"keys\":[\"ENTER\"]}}"
                                           << "key_chord(enter)";
    QTest::newRow("openai type") << "{\"openai\":{\"type\":\"type\",\"text\":\"hello\"}}"
                                 << "type_text(5 chars)";
    QTest::newRow("openai move") << "{\"openai\":{\"type\":\"move\",\"x\":10,\"y\":11}}"
                                 << "move(10,11)";
    QTest::newRow("openai wait") << "{\"openai\":{\"type\":\"wait\"}}"
                                 << "wait(2000ms)";
    // OSWorld computer_13.
    QTest::newRow("osworld CLICK") << "{\"osworld\":{\"action_type\":\"CLICK\",\"parameters\":{\"x\":100,"
                                      "\"y\":120,\"button\":\"right\",\"num_clicks\":1}}}"
                                   << "right_click(100,120)";
    QTest::newRow("osworld CLICK twice")
        << "{\"osworld\":{\"action_type\":\"CLICK\",\"parameters\":{\"x\":1,\"y\":2,\"num_clicks\":2}}}"
        << "double_click(1,2)";
    QTest::newRow("osworld DOUBLE_CLICK")
        << "{\"osworld\":{\"action_type\":\"DOUBLE_CLICK\",\"parameters\":{\"x\":1,\"y\":2}}}"
        << "double_click(1,2)";
    QTest::newRow("osworld RIGHT_CLICK")
        << "{\"osworld\":{\"action_type\":\"RIGHT_CLICK\",\"parameters\":{\"x\":1,\"y\":2}}}"
        << "right_click(1,2)";
    QTest::newRow("osworld MOVE_TO")
        << "{\"osworld\":{\"action_type\":\"MOVE_TO\",\"parameters\":{\"x\":7,\"y\":8}}}"
        << "move(7,8)";
    QTest::newRow("osworld TYPING")
        << "{\"osworld\":{\"action_type\":\"TYPING\",\"parameters\":{\"text\":\"abc\"}}}"
        << "type_text(3 chars)";
    QTest::newRow("osworld PRESS")
        << "{\"osworld\":{\"action_type\":\"PRESS\",\"parameters\":{\"key\":\"enter\"}}}"
        << "key_chord(enter)";
    QTest::newRow("osworld HOTKEY")
        << "{\"osworld\":{\"action_type\":\"HOTKEY\",\"parameters\":{\"keys\":[\"ctrl\",\"c\"]}}}"
        << "key_chord(ctrl+c)";
    QTest::newRow("osworld WAIT") << "{\"osworld\":{\"action_type\":\"WAIT\"}}"
                                  << "wait(2000ms)";
    QTest::newRow("osworld DONE") << "{\"osworld\":{\"action_type\":\"DONE\"}}"
                                  << "done()";
    QTest::newRow("osworld FAIL") << "{\"osworld\":{\"action_type\":\"FAIL\"}}"
                                  << "fail()";
    // UI-TARS (0..1000 onto the 320x200 frame).
    QTest::newRow("ui_tars click") << "{\"ui_tars\":\"click(start_box='(500,300)')\"}"
                                   << "click(160,60)";
    QTest::newRow("ui_tars click box tokens")
        << "{\"ui_tars\":\"click(start_box='<|box_start|>(1000,1000)<|box_end|>')\"}"
        << "click(319,199)";
    QTest::newRow("ui_tars click box centre") << "{\"ui_tars\":\"click(start_box='[100, 100, 200, 300]')\"}"
                                              << "click(48,40)";
    QTest::newRow("ui_tars point") << "{\"ui_tars\":\"left_double(point='<point>250 500</point>')\"}"
                                   << "double_click(80,100)";
    QTest::newRow("ui_tars right_single") << "{\"ui_tars\":\"right_single(start_box='(0,0)')\"}"
                                          << "right_click(0,0)";
    QTest::newRow("ui_tars drag") << "{\"ui_tars\":\"drag(start_box='(100,100)', end_box='(200,100)')\"}"
                                  << "drag(32,20->64,20)";
    QTest::newRow("ui_tars hotkey") << "{\"ui_tars\":\"hotkey(key='ctrl c')\"}"
                                    << "key_chord(ctrl+c)";
    QTest::newRow("ui_tars type") << "{\"ui_tars\":\"type(content='it\\\\'s\\\\n')\"}"
                                  << "type_text(5 chars)";
    QTest::newRow("ui_tars scroll") << "{\"ui_tars\":\"scroll(start_box='(500,500)', direction='down')\"}"
                                    << "scroll(160,100,dx=0,dy=5)";
    QTest::newRow("ui_tars wait") << "{\"ui_tars\":\"wait()\"}"
                                  << "wait(5000ms)";
    QTest::newRow("ui_tars finished") << "{\"ui_tars\":\"finished(content='ok')\"}"
                                      << "done()";
    QTest::newRow("ui_tars call_user") << "{\"ui_tars\":\"call_user()\"}"
                                       << "fail()";
  }
  void translatesEveryDialect() {
    QFETCH(QString, arguments);
    QFETCH(QString, canonical);
    GrantOptions options;
    options.policy = everyKind();
    options.policy.limits.waitMs = 0; // nothing waits: the receipt is what is checked
    Rig rig(options);
    rig.service.setInputCaps([] { return InputCaps{true, true, true}; });
    QVERIFY(rig.toReviewing());
    const QJsonObject args = QJsonDocument::fromJson(arguments.toUtf8()).object();
    QVERIFY(!args.isEmpty());
    const auto receipt = rig.service.performAction(args);
    if (canonical.startsWith(u"wait(")) {
      // Beyond the grant's wait_seconds (0 here): refused, the translation named in the message.
      QVERIFY(!receipt.ok());
      QVERIFY2(receipt.failure().message.contains(u"seconds"), qPrintable(receipt.failure().message));
      return;
    }
    QVERIFY2(receipt.ok(), receipt.ok() ? "" : qPrintable(receipt.failure().message));
    QCOMPARE(receipt->action, canonical);
    const QString dialect = args.constBegin().key();
    QCOMPARE(receipt->dialect, dialect);
    const QJsonObject body = receipt->body();
    QCOMPARE(body.value(QStringLiteral("dialect")).toString(), dialect);
    QVERIFY(body.value(QStringLiteral("original")).isObject());
    QCOMPARE(body.value(QStringLiteral("action_spec")).toObject().value(QStringLiteral("type")).toString(),
             canonical.section(u'(', 0, 0));
  }

  // No text in the evidence: its length and a keyed hash only (issue 25 point 1).
  void typedTextNeverReachesTheEvidence() {
    GrantOptions options;
    options.policy = everyKind();
    Rig rig(options);
    rig.service.setInputCaps([] { return InputCaps{true, false, false}; });
    QVERIFY(rig.toReviewing());
    const QString secret = QStringLiteral("Secret-Typed-Text-9c4e");
    const auto receipt = rig.service.performAction(QJsonObject{
        {QStringLiteral("anthropic"),
         QJsonObject{{QStringLiteral("action"), QStringLiteral("type")}, {QStringLiteral("text"), secret}}}});
    QVERIFY(receipt.ok());
    QCOMPARE(receipt->eventsSent, 2 * int(secret.size()));
    const QJsonObject spec = receipt->body().value(QStringLiteral("action_spec")).toObject();
    QCOMPARE(spec.value(QStringLiteral("text_chars")).toInt(), int(secret.size()));
    QCOMPARE(spec.value(QStringLiteral("text_hmac")).toString().size(), 64);
    QVERIFY(!spec.contains(QStringLiteral("text")));
    QVERIFY(!rig.evidenceBytes().contains(secret.toUtf8()));
    QVERIFY(!QJsonDocument(receipt->toJson()).toJson().contains(secret.toUtf8()));
  }

  // A send that fails half-way: nothing is retried, everything held is released, and the
  // evidence says what (issue 25 point 5).
  void releasesWhatAFailedSendLeftPressed() {
    GrantOptions options;
    options.policy = everyKind();
    Rig rig(options);
    int releases = 0;
    rig.service.setReleaseHeld([&](QDeadlineTimer) -> Outcome<ActionService::Released> {
      ++releases;
      return ActionService::Released{2, 0};
    });
    QVERIFY(rig.toReviewing());
    rig.sink.mode = RecordingSink::Mode::FailAt;
    rig.sink.failAt = 2; // ctrl down, shift down, then the s fails
    const auto receipt = rig.service.performAction(
        obj("{\"action\":{\"type\":\"key_chord\",\"keys\":[\"ctrl\",\"shift\",\"s\"]}}"));
    QVERIFY(receipt.ok());
    QCOMPARE(receipt->result, Receipt::Result::Failed);
    QCOMPARE(receipt->eventsSent, 2);
    QCOMPARE(releases, 1);
    const QJsonObject released = receipt->body().value(QStringLiteral("released")).toObject();
    QCOMPARE(released.value(QStringLiteral("keys_released")).toInt(), 2);
    QVERIFY(rig.evidenceBytes().contains("\"action_released\""));
  }

  // The receipt waits for the guest's confirmation, and says when it did not come.
  void receiptCarriesTheGuestsConfirmation_data() {
    QTest::addColumn<bool>("confirmed");
    QTest::newRow("confirmed") << true;
    QTest::newRow("unconfirmed") << false;
  }
  void receiptCarriesTheGuestsConfirmation() {
    QFETCH(bool, confirmed);
    Rig rig;
    int asked = 0;
    bool inAction = false;
    rig.service.setConfirmGuest([&] {
      ++asked;
      inAction = rig.phases.phase() == Phase::Action; // after the sends, before the close
      return ActionService::GuestConfirmation{confirmed, 12};
    });
    QVERIFY(rig.toReviewing());
    const auto receipt = rig.service.performAction(obj("{\"action\":{\"type\":\"click\",\"x\":1,\"y\":1}}"));
    QVERIFY(receipt.ok());
    QCOMPARE(asked, 1);
    QVERIFY(inAction);
    const QJsonObject body = receipt->body();
    QCOMPARE(body.value(QStringLiteral("guest_confirmed")).toBool(), confirmed);
    QCOMPARE(body.value(QStringLiteral("confirmation")).toString(),
             confirmed ? QStringLiteral("guest_confirmed") : QStringLiteral("unconfirmed"));
    QCOMPARE(body.value(QStringLiteral("guest_confirmed_at")).isString(), confirmed);
    QCOMPARE(body.value(QStringLiteral("confirm_ms")).toInt(), 12);
  }

  void carriesInstructionLikeLabelsVerbatimAsData() {
    GrantOptions options;
    options.candidates = true;
    Rig rig(options);
    QVERIFY(rig.toReviewing());
    const QJsonObject statusBefore = rig.service.status();
    const auto receipt = rig.service.performAction(obj("{\"candidate_id\":\"ok\"}"));
    QVERIFY(receipt.ok());
    const QJsonObject candidate = receipt->toJson().value(QStringLiteral("candidate")).toObject();
    QCOMPARE(candidate.value(QStringLiteral("id")).toString(), QStringLiteral("ok"));
    QCOMPARE(candidate.value(QStringLiteral("label")).toString(), QString::fromLatin1(kInjectionLabel));
    QCOMPARE(candidate.value(QStringLiteral("action")).toString(), QStringLiteral("click(40,30)"));
    // Exactly the candidate's click went out: the label changed nothing.
    QCOMPARE(rig.sink.events.size(), std::size_t(3));
    for (const InputEvent& e : rig.sink.events) {
      QCOMPARE(e.kind, InputEvent::Kind::Pointer);
      QCOMPARE(e.x, quint16(40));
      QCOMPARE(e.y, quint16(30));
    }
    QCOMPARE(statusBefore.value(QStringLiteral("candidates"))
                 .toArray()
                 .at(1)
                 .toObject()
                 .value(QStringLiteral("label")),
             QJsonValue(QString::fromLatin1(kInjectionLabel)));
    QVERIFY(rig.evidenceBytes().contains(kInjectionLabel));
  }

  void evidenceChainHoldsReceiptAndCaptureHashButNoPayloads() {
    Rig rig;
    QVERIFY(rig.evidenceOpen);
    QVERIFY(rig.service.requestLock().ok());
    const auto capture = rig.service.captureDesktop();
    QVERIFY(capture.ok());
    QVERIFY(rig.service.performAction(obj("{\"action\":{\"type\":\"click\",\"x\":7,\"y\":8}}")).ok());
    QCOMPARE(rig.service.performAction(obj("{}")).code(), Refusal::AlreadyActed);
    rig.evidence.close();

    const EvidenceLog::Verification v = EvidenceLog::verifyFile(rig.evidence.path());
    QVERIFY2(v.ok, qPrintable(v.error));
    const QByteArray bytes = rig.evidenceBytes();
    QStringList events;
    for (const QByteArray& line : bytes.split('\n')) {
      if (!line.isEmpty())
        events << QJsonDocument::fromJson(line).object().value(QStringLiteral("event")).toString();
    }
    QCOMPARE(events, (QStringList{QStringLiteral("capture"), QStringLiteral("receipt"),
                                  QStringLiteral("mcp_refused")}));
    QVERIFY(bytes.contains(capture->sha256Hex));
    QVERIFY(bytes.contains("\"outcome\":\"executed\""));
    // Sentinels: no PNG (raw or base64), no raw frame bytes, no sentinel text.
    QVERIFY(!bytes.contains("\x89PNG"));
    QVERIFY(!bytes.contains("iVBORw0KGgo"));
    QVERIFY(!bytes.contains(capture->png.toBase64().mid(40, 40)));
    QVERIFY(!bytes.contains(QByteArray(reinterpret_cast<const char*>(rig.frame.constScanLine(5)), 64)));
    QVERIFY(!bytes.contains(kFrameSentinel));
  }

  // --- ActionSocketServer -----------------------------------------------------------------
  void socketIsPrivateAndRemovedOnStop() {
    SocketRig rig;
    QVERIFY2(rig.listening, qPrintable(rig.server.errorString()));
    struct stat st {};
    QCOMPARE(::lstat(QFile::encodeName(rig.runDir.mcpSocketPath()).constData(), &st), 0);
    QVERIFY(S_ISSOCK(st.st_mode));
    QCOMPARE(st.st_mode & 07777, mode_t(0600));
    QCOMPARE(::lstat(QFile::encodeName(rig.runDir.path()).constData(), &st), 0);
    QCOMPARE(st.st_mode & 07777, mode_t(0700));
    // A second server never takes over (or unlinks) an existing socket.
    ActionSocketServer other(&rig.service);
    QVERIFY(!other.listen(rig.runDir.mcpSocketPath()));
    rig.server.stop();
    QVERIFY(!QFile::exists(rig.runDir.mcpSocketPath()));
  }

  void helloNamesTheGrantsServerToolAndCandidates() {
    GrantOptions options;
    options.candidates = true;
    SocketRig rig(options);
    QVERIFY(rig.listening);
    RawRelay relay(rig.runDir.mcpSocketPath());
    const QJsonObject hello = relay.next();
    QCOMPARE(hello.value(QStringLiteral("type")).toString(), QStringLiteral("hello"));
    QCOMPARE(hello.value(QStringLiteral("server")).toString(), QStringLiteral("guest-console-test"));
    QCOMPARE(hello.value(QStringLiteral("tool")).toString(), QStringLiteral("perform_action"));
    QCOMPARE(hello.value(QStringLiteral("candidates")).toArray(),
             (QJsonArray{QStringLiteral("save"), QStringLiteral("ok")}));
  }

  void refusesRelayThatDoesNotBindTheGrantsNames_data() {
    QTest::addColumn<QString>("first");
    QTest::newRow("call before bind")
        << "{\"type\":\"call\",\"id\":1,\"op\":\"request_lock\",\"arguments\":{}}";
    QTest::newRow("other server") << "{\"type\":\"bind\",\"server\":\"evil\",\"tool\":\"perform_action\"}";
    QTest::newRow("other tool")
        << "{\"type\":\"bind\",\"server\":\"guest-console-test\",\"tool\":\"run_shell\"}";
  }
  void refusesRelayThatDoesNotBindTheGrantsNames() {
    QFETCH(QString, first);
    SocketRig rig;
    QVERIFY(rig.listening);
    RawRelay relay(rig.runDir.mcpSocketPath());
    QCOMPARE(relay.next().value(QStringLiteral("type")).toString(), QStringLiteral("hello"));
    relay.send(QJsonDocument::fromJson(first.toUtf8()).object());
    const QJsonObject refused = relay.next();
    QCOMPARE(refused.value(QStringLiteral("type")).toString(), QStringLiteral("refused"));
    QCOMPARE(refused.value(QStringLiteral("code")).toString(), QStringLiteral("MCP_NOT_AUTHORIZED"));
    QTRY_COMPARE(relay.socket.state(), QLocalSocket::UnconnectedState);
    QCOMPARE(rig.phases.phase(), Phase::Setup);
  }

  void refusesSecondRelayConnection() {
    SocketRig rig;
    QVERIFY(rig.listening);
    RawRelay first(rig.runDir.mcpSocketPath());
    QVERIFY(first.bind(rig.grant));
    RawRelay second(rig.runDir.mcpSocketPath());
    const QJsonObject refused = second.next();
    QCOMPARE(refused.value(QStringLiteral("code")).toString(), QStringLiteral("MCP_NOT_AUTHORIZED"));
    QTRY_COMPARE(second.socket.state(), QLocalSocket::UnconnectedState);
    // The first relay still works.
    first.send({{QStringLiteral("type"), QStringLiteral("call")},
                {QStringLiteral("id"), 1},
                {QStringLiteral("op"), QStringLiteral("status")},
                {QStringLiteral("arguments"), QJsonObject{}}});
    const QJsonObject reply = first.next();
    QCOMPARE(reply.value(QStringLiteral("type")).toString(), QStringLiteral("result"));
    QCOMPARE(reply.value(QStringLiteral("result")).toObject().value(QStringLiteral("phase")).toString(),
             QStringLiteral("SETUP"));
    // Once it leaves, another may connect.
    first.socket.disconnectFromServer();
    QTRY_VERIFY(!rig.server.hasRelay());
    RawRelay third(rig.runDir.mcpSocketPath());
    QVERIFY(third.bind(rig.grant));
  }

  void refusesPeerOfAnotherUid() {
    SocketRig rig;
    QVERIFY(rig.listening);
    QSignalSpy refusals(&rig.server, &ActionSocketServer::refused);
    rig.server.setExpectedPeerUidForTest(::geteuid() + 4242);
    RawRelay relay(rig.runDir.mcpSocketPath());
    const QJsonObject refused = relay.next();
    QCOMPARE(refused.value(QStringLiteral("type")).toString(), QStringLiteral("refused"));
    QCOMPARE(refused.value(QStringLiteral("code")).toString(), QStringLiteral("MCP_NOT_AUTHORIZED"));
    QCOMPARE(refusals.count(), 1);
    QVERIFY(!rig.server.hasRelay());
  }

  void refusesMalformedAndOversizeRelayLines_data() {
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<QString>("code");
    QTest::newRow("not json") << QByteArray("call me\n") << "PROTOCOL_MALFORMED";
    QTest::newRow("duplicate key") << QByteArray("{\"type\":\"call\",\"type\":\"call\"}\n")
                                   << "PROTOCOL_MALFORMED";
    QTest::newRow("oversize") << QByteArray(70000, 'x') << "PROTOCOL_OVERSIZE";
    QTest::newRow("unknown type") << QByteArray("{\"type\":\"shell\"}\n") << "PROTOCOL_UNKNOWN_TYPE";
  }
  void refusesMalformedAndOversizeRelayLines() {
    QFETCH(QByteArray, line);
    QFETCH(QString, code);
    SocketRig rig;
    QVERIFY(rig.listening);
    RawRelay relay(rig.runDir.mcpSocketPath());
    QVERIFY(relay.bind(rig.grant));
    relay.socket.write(line);
    QCOMPARE(relay.next().value(QStringLiteral("code")).toString(), code);
    QTRY_VERIFY(!rig.server.hasRelay());
  }

  // --- the relay (runMcpRelay in process) against the socket ------------------------------
  void relayRefusesToStartWithoutAConsole_data() {
    QTest::addColumn<QString>("run");
    QTest::addColumn<QString>("code");
    QTest::newRow("no such run") << "run-404"
                                 << "RUN_NOT_FOUND";
    QTest::newRow("path traversal") << "../run-1"
                                    << "RUN_NOT_FOUND";
    QTest::newRow("slash") << "a/b"
                           << "RUN_NOT_FOUND";
    QTest::newRow("dot dot") << "run..1"
                             << "RUN_NOT_FOUND";
  }
  void relayRefusesToStartWithoutAConsole() {
    QFETCH(QString, run);
    QFETCH(QString, code);
    SocketRig rig;
    QVERIFY(rig.listening);
    RelayHarness relay(rig.dir.path(), run);
    QTRY_VERIFY(relay.done.load());
    QCOMPARE(relay.rc.load(), exitStatus(ExitCode::Unavailable));
    QVERIFY2(relay.stderrText().startsWith("guest-console mcp: " + code.toLatin1()), qPrintable(code));
  }

  void relayRefusesAGrantToolItDoesNotImplement() {
    GrantOptions options;
    options.tool = QStringLiteral("run_shell");
    SocketRig rig(options);
    QVERIFY(rig.listening);
    RelayHarness relay(rig.dir.path(), rig.grant.runId);
    QTRY_VERIFY(relay.done.load());
    QCOMPARE(relay.rc.load(), exitStatus(ExitCode::Unavailable));
    QVERIFY(relay.stderrText().startsWith("guest-console mcp: MCP_NOT_AUTHORIZED"));
  }

  void relayRefusesAConsoleOfAnotherUid() {
    SocketRig rig;
    QVERIFY(rig.listening);
    McpRelayOptions options;
    options.expectedPeerUid = ::geteuid() + 4242;
    RelayHarness relay(rig.dir.path(), rig.grant.runId, options);
    QTRY_VERIFY(relay.done.load());
    QCOMPARE(relay.rc.load(), exitStatus(ExitCode::Unavailable));
    QVERIFY(relay.stderrText().startsWith("guest-console mcp: MCP_NOT_AUTHORIZED"));
  }

  void relayAnswersMalformedMessagesWithJsonRpcErrors_data() {
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<int>("error");
    QTest::newRow("parse error") << QByteArray("{\"jsonrpc\":\"2.0\",\n") << -32700;
    QTest::newRow("duplicate key") << QByteArray(
                                          "{\"jsonrpc\":\"2.0\",\"id\":5,\"id\":6,\"method\":\"ping\"}\n")
                                   << -32700;
    QTest::newRow("batch") << QByteArray("[{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}]\n") << -32600;
    QTest::newRow("wrong version") << QByteArray("{\"jsonrpc\":\"1.0\",\"id\":5,\"method\":\"ping\"}\n")
                                   << -32600;
    QTest::newRow("null id") << QByteArray("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}\n")
                             << -32600;
    QTest::newRow("fractional id") << QByteArray("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}\n")
                                   << -32600;
    QTest::newRow("params array") << QByteArray(
                                         "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\",\"params\":[]}\n")
                                  << -32600;
    QTest::newRow("replayed id") << QByteArray("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}\n")
                                 << -32600;
    QTest::newRow("unknown method") << QByteArray(
                                           "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/list\"}\n")
                                    << -32601;
    QTest::newRow("unknown tool")
        << QByteArray(
               "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"shell\"}}\n")
        << -32602;
    QTest::newRow("arguments not object")
        << QByteArray("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\","
                      "\"params\":{\"name\":\"status\",\"arguments\":[]}}\n")
        << -32602;
    QTest::newRow("status with arguments")
        << QByteArray("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\","
                      "\"params\":{\"name\":\"status\",\"arguments\":{\"x\":1}}}\n")
        << -32602;
    QTest::newRow("second initialize")
        << QByteArray("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"initialize\",\"params\":{"
                      "\"protocolVersion\":\"x\"}}\n")
        << -32600;
  }
  void relayAnswersMalformedMessagesWithJsonRpcErrors() {
    QFETCH(QByteArray, line);
    QFETCH(int, error);
    SocketRig rig;
    QVERIFY(rig.listening);
    RelayHarness relay(rig.dir.path(), rig.grant.runId);
    QVERIFY(relay.initialize());
    relay.send(line);
    const QJsonObject reply = relay.next();
    QCOMPARE(reply.value(QStringLiteral("error")).toObject().value(QStringLiteral("code")).toInt(), error);
    // The relay goes on serving.
    relay.call(99, QStringLiteral("ping"));
    QVERIFY(relay.next().contains(QStringLiteral("result")));
  }

  void relayNegotiatesItsOwnProtocolVersion_data() {
    QTest::addColumn<QString>("asked");
    QTest::newRow("current") << "2025-11-25";
    QTest::newRow("older") << "2024-11-05";
    QTest::newRow("unknown") << "1999-01-01";
  }
  void relayNegotiatesItsOwnProtocolVersion() {
    QFETCH(QString, asked);
    SocketRig rig;
    QVERIFY(rig.listening);
    RelayHarness relay(rig.dir.path(), rig.grant.runId);
    relay.call(1, QStringLiteral("tools/list"));
    QCOMPARE(relay.next().value(QStringLiteral("error")).toObject().value(QStringLiteral("code")).toInt(),
             -32600);
    relay.call(2, QStringLiteral("initialize"), {{QStringLiteral("protocolVersion"), asked}});
    const QJsonObject result = relay.next().value(QStringLiteral("result")).toObject();
    QCOMPARE(result.value(QStringLiteral("protocolVersion")).toString(), QStringLiteral("2025-11-25"));
    QCOMPARE(result.value(QStringLiteral("serverInfo")).toObject().value(QStringLiteral("name")).toString(),
             rig.grant.mcp.server);
  }

  // The capture reply is one line built around the base64 (no QJsonDocument copy of the
  // image), written to the descriptor past Qt's write buffer, in pieces when the socket is
  // full; the PNG and the line are zeroed once sent, and the server says how much it zeroed.
  void captureReplyArrivesWholeAndIsZeroedOnceSent() {
    SocketRig rig;
    QVERIFY(rig.listening);
    QImage noise(640, 480, QImage::Format_RGB32); // incompressible: outgrows the socket buffer
    QRandomGenerator random(165);
    for (int y = 0; y < noise.height(); ++y)
      random.fillRange(reinterpret_cast<quint32*>(noise.scanLine(y)), noise.width());
    rig.frame = noise;
    RawRelay relay(rig.server.socketPath());
    QVERIFY(relay.bind(rig.grant));
    QVERIFY(rig.barrier.requestLock(QStringLiteral("test")).ok());
    relay.send({{QStringLiteral("type"), QStringLiteral("call")},
                {QStringLiteral("id"), 7},
                {QStringLiteral("op"), QStringLiteral("capture_desktop")},
                {QStringLiteral("arguments"), QJsonObject{}}});
    const QJsonObject reply = relay.next();
    QCOMPARE(reply.value(QStringLiteral("type")).toString(), QStringLiteral("result"));
    QCOMPARE(reply.value(QStringLiteral("id")).toInt(), 7);
    const QJsonObject result = reply.value(QStringLiteral("result")).toObject();
    const QByteArray png = QByteArray::fromBase64(result.value(QStringLiteral("png")).toString().toLatin1(),
                                                  QByteArray::AbortOnBase64DecodingErrors);
    QVERIFY(png.size() > 1 << 19);
    QCOMPARE(QCryptographicHash::hash(png, QCryptographicHash::Sha256).toHex(),
             result.value(QStringLiteral("sha256")).toString().toLatin1());
    QImage decoded;
    QVERIFY(decoded.loadFromData(png, "PNG"));
    QCOMPARE(decoded.convertToFormat(QImage::Format_RGB32), noise);
    QCOMPARE(result.value(QStringLiteral("width")).toInt(), 640);
    // Zeroed: the PNG, and the whole reply line (its base64 is 4/3 of the PNG).
    QTRY_VERIFY(rig.server.wiped().bytes >= png.size() + png.size() * 4 / 3);
    QCOMPARE(rig.server.wiped().captures, 1);
    QCOMPARE(rig.server.wiped().unwiped, 0);
    // The next reply on the same socket still arrives after it, intact.
    relay.send({{QStringLiteral("type"), QStringLiteral("call")},
                {QStringLiteral("id"), 8},
                {QStringLiteral("op"), QStringLiteral("status")},
                {QStringLiteral("arguments"), QJsonObject{}}});
    QCOMPARE(relay.next().value(QStringLiteral("id")).toInt(), 8);
  }

  void relayRunsTheWholeFlowOnceThroughTheSocket() {
    SocketRig rig;
    QVERIFY(rig.listening);
    QSignalSpy receipts(&rig.service, &ActionService::receiptIssued);
    RelayHarness relay(rig.dir.path(), rig.grant.runId);
    QVERIFY(relay.initialize());
    relay.call(1, QStringLiteral("tools/list"));
    QStringList names;
    for (const QJsonValue& t :
         relay.next().value(QStringLiteral("result")).toObject().value(QStringLiteral("tools")).toArray())
      names << t.toObject().value(QStringLiteral("name")).toString();
    QCOMPARE(names, (QStringList{QStringLiteral("status"), QStringLiteral("capture_desktop"),
                                 QStringLiteral("perform_action"), QStringLiteral("request_lock"),
                                 QStringLiteral("zoom_desktop")}));

    QCOMPARE(code(relay.tool(2, QStringLiteral("capture_desktop"))), QStringLiteral("CAPTURE_NOT_ALLOWED"));
    QCOMPARE(code(relay.tool(3, QStringLiteral("perform_action"),
                             obj("{\"action\":{\"type\":\"click\",\"x\":1,\"y\":1}}"))),
             QStringLiteral("PHASE_WRONG"));
    const QJsonObject locked = relay.tool(4, QStringLiteral("request_lock"));
    QCOMPARE(locked.value(QStringLiteral("structuredContent"))
                 .toObject()
                 .value(QStringLiteral("phase"))
                 .toString(),
             QStringLiteral("CAPTURING"));
    QCOMPARE(code(relay.tool(5, QStringLiteral("request_lock"))), QStringLiteral("PHASE_WRONG"));
    const QJsonObject capture = relay.tool(6, QStringLiteral("capture_desktop"));
    QVERIFY(!capture.value(QStringLiteral("isError")).toBool());
    const QJsonObject image = capture.value(QStringLiteral("content")).toArray().at(0).toObject();
    QCOMPARE(image.value(QStringLiteral("mimeType")).toString(), QStringLiteral("image/png"));
    const QByteArray png = QByteArray::fromBase64(image.value(QStringLiteral("data")).toString().toLatin1());
    QCOMPARE(QCryptographicHash::hash(png, QCryptographicHash::Sha256).toHex(),
             capture.value(QStringLiteral("structuredContent"))
                 .toObject()
                 .value(QStringLiteral("sha256"))
                 .toString()
                 .toLatin1());
    QCOMPARE(rig.phases.phase(), Phase::Reviewing);

    const QJsonObject performed = relay.tool(7, QStringLiteral("perform_action"),
                                             obj("{\"action\":{\"type\":\"right_click\",\"x\":9,\"y\":9}}"));
    QVERIFY(!performed.value(QStringLiteral("isError")).toBool());
    QCOMPARE(performed.value(QStringLiteral("structuredContent"))
                 .toObject()
                 .value(QStringLiteral("outcome"))
                 .toString(),
             QStringLiteral("executed"));
    QCOMPARE(rig.sink.events.size(), std::size_t(3));
    QCOMPARE(receipts.count(), 1);
    QCOMPARE(code(relay.tool(8, QStringLiteral("perform_action"),
                             obj("{\"action\":{\"type\":\"right_click\",\"x\":9,\"y\":9}}"))),
             QStringLiteral("ALREADY_ACTED"));
    // A replay of the performing request itself is refused before it reaches the console.
    relay.call(
        7, QStringLiteral("tools/call"),
        {{QStringLiteral("name"), QStringLiteral("perform_action")},
         {QStringLiteral("arguments"), obj("{\"action\":{\"type\":\"right_click\",\"x\":9,\"y\":9}}")}});
    QCOMPARE(relay.next().value(QStringLiteral("error")).toObject().value(QStringLiteral("code")).toInt(),
             -32600);
    QCOMPARE(rig.sink.attempts, 3);
    QCOMPARE(receipts.count(), 1);
    relay.closeInput();
    QTRY_VERIFY(relay.done.load());
    QCOMPARE(relay.rc.load(), exitStatus(ExitCode::Ok));
  }

  // Through the relay (issue 25.4): capture_desktop's structured result says how it was
  // scaled, zoom_desktop returns the region's image, refuses a bad region with its typed code,
  // and neither uses the action up; the click then lands at the mapped desktop pixel.
  void relayServesZoomAndTheScaledCapture() {
    GrantOptions options;
    options.capture.mode = CaptureBound::Mode::Size;
    options.capture.size = QSize(160, 100);
    SocketRig rig(options);
    QVERIFY(rig.listening);
    RelayHarness relay(rig.dir.path(), rig.grant.runId);
    QVERIFY(relay.initialize());
    QVERIFY(!relay.tool(1, QStringLiteral("request_lock")).value(QStringLiteral("isError")).toBool());
    const QJsonObject capture = relay.tool(2, QStringLiteral("capture_desktop"));
    QVERIFY(!capture.value(QStringLiteral("isError")).toBool());
    const QJsonObject structured = capture.value(QStringLiteral("structuredContent")).toObject();
    QCOMPARE(structured.value(QStringLiteral("width")).toInt(), 160);
    QCOMPARE(structured.value(QStringLiteral("scale")).toObject().value(QStringLiteral("from")).toArray(),
             (QJsonArray{320, 200}));
    QCOMPARE(structured.value(QStringLiteral("scale")).toObject().value(QStringLiteral("to")).toArray(),
             (QJsonArray{160, 100}));
    QImage seen;
    QVERIFY(seen.loadFromData(QByteArray::fromBase64(capture.value(QStringLiteral("content"))
                                                         .toArray()
                                                         .at(0)
                                                         .toObject()
                                                         .value(QStringLiteral("data"))
                                                         .toString()
                                                         .toLatin1()),
                              "PNG"));
    QCOMPARE(seen.size(), QSize(160, 100));

    const QJsonObject zoom = relay.tool(3, QStringLiteral("zoom_desktop"), obj("{\"region\":[20,10,60,40]}"));
    QVERIFY(!zoom.value(QStringLiteral("isError")).toBool());
    QCOMPARE(zoom.value(QStringLiteral("structuredContent"))
                 .toObject()
                 .value(QStringLiteral("desktop_region"))
                 .toArray(),
             (QJsonArray{40, 20, 120, 80}));
    QImage detail;
    QVERIFY(detail.loadFromData(QByteArray::fromBase64(zoom.value(QStringLiteral("content"))
                                                           .toArray()
                                                           .at(0)
                                                           .toObject()
                                                           .value(QStringLiteral("data"))
                                                           .toString()
                                                           .toLatin1()),
                                "PNG"));
    QCOMPARE(detail.convertToFormat(QImage::Format_RGB32), makeFrame().copy(40, 20, 80, 60));
    QCOMPARE(code(relay.tool(4, QStringLiteral("zoom_desktop"), obj("{\"region\":[0,0,161,1]}"))),
             QStringLiteral("OBSERVATION_INVALID"));
    QVERIFY(!rig.service.hasActed());

    const QJsonObject performed = relay.tool(5, QStringLiteral("perform_action"),
                                             obj("{\"action\":{\"type\":\"click\",\"x\":30,\"y\":20}}"));
    QVERIFY(!performed.value(QStringLiteral("isError")).toBool());
    const QJsonObject receipt = performed.value(QStringLiteral("structuredContent")).toObject();
    QCOMPARE(
        receipt.value(QStringLiteral("coordinate_space")).toObject().value(QStringLiteral("width")).toInt(),
        160);
    QCOMPARE(receipt.value(QStringLiteral("mapped_to")).toObject().value(QStringLiteral("width")).toInt(),
             320);
    QCOMPARE(rig.sink.events.front().x, 61);
    QCOMPARE(rig.sink.events.front().y, 41);
    relay.closeInput();
    QTRY_VERIFY(relay.done.load());
  }

  // The lock's guest sync runs after request_lock has committed READ_ONLY: the relay's
  // request_lock is answered, and a capture_desktop sent right behind it is taken, only once
  // the sync has ended — never CAPTURE_NOT_ALLOWED from racing it.
  void requestLockAndCaptureWaitForTheGuestSync() {
    SocketRig rig;
    QVERIFY(rig.listening);
    LockBarrier::SyncDone finishSync;
    rig.barrier.setGuestSync(
        [&](QDeadlineTimer, LockBarrier::SyncDone done) { finishSync = std::move(done); }, {},
        std::chrono::milliseconds(5000));
    RawRelay relay(rig.runDir.mcpSocketPath());
    QVERIFY(relay.bind(rig.grant));
    relay.send(obj("{\"type\":\"call\",\"id\":1,\"op\":\"request_lock\",\"arguments\":{}}"));
    relay.send(obj("{\"type\":\"call\",\"id\":2,\"op\":\"capture_desktop\",\"arguments\":{}}"));
    QTRY_COMPARE(rig.phases.phase(), Phase::ReadOnly);
    QVERIFY(rig.barrier.syncing());
    // Both calls are in; neither is answered while the sync runs (bounded look).
    QVERIFY(!QTest::qWaitFor([&] { return relay.socket.bytesAvailable() > 0; }, 300));
    finishSync(success());
    const QJsonObject locked = relay.next();
    QCOMPARE(locked.value(QStringLiteral("id")).toInt(), 1);
    QCOMPARE(locked.value(QStringLiteral("type")).toString(), QStringLiteral("result"));
    QCOMPARE(locked.value(QStringLiteral("result")).toObject().value(QStringLiteral("phase")).toString(),
             QStringLiteral("CAPTURING"));
    const QJsonObject captured = relay.next();
    QCOMPARE(captured.value(QStringLiteral("id")).toInt(), 2);
    QCOMPARE(captured.value(QStringLiteral("type")).toString(), QStringLiteral("result"));
    QVERIFY(!captured.value(QStringLiteral("result"))
                 .toObject()
                 .value(QStringLiteral("png"))
                 .toString()
                 .isEmpty());
    QCOMPARE(rig.phases.phase(), Phase::Reviewing);
  }

  // A capture waits for the picture to settle (no new frame for the quiet time), at most the
  // bound: right after the lock a guest may still be refining what it sent (progressive
  // upgrade passes). The capture's evidence says whether it settled and how long it waited.
  void aCaptureWaitsForThePictureToSettle_data() {
    QTest::addColumn<bool>("changing");
    QTest::newRow("quiet picture") << false;
    QTest::newRow("picture that keeps changing") << true;
  }
  void aCaptureWaitsForThePictureToSettle() {
    QFETCH(bool, changing);
    using Clock = std::chrono::steady_clock;
    constexpr auto kQuiet = std::chrono::milliseconds(100);
    constexpr auto kBound = std::chrono::milliseconds(600);
    SocketRig rig;
    QVERIFY(rig.listening);
    const Clock::time_point quietSince = Clock::now() - std::chrono::seconds(10);
    rig.service.setPictureSettle([&] { return changing ? Clock::now() : quietSince; }, kQuiet, kBound);
    QVERIFY(rig.barrier.requestLock(QStringLiteral("test")).ok());
    QTRY_COMPARE(rig.phases.phase(), Phase::Capturing);
    RawRelay relay(rig.runDir.mcpSocketPath());
    QVERIFY(relay.bind(rig.grant));
    relay.send(obj("{\"type\":\"call\",\"id\":1,\"op\":\"capture_desktop\",\"arguments\":{}}"));
    const QJsonObject captured = relay.next();
    QCOMPARE(captured.value(QStringLiteral("type")).toString(), QStringLiteral("result"));
    QJsonObject picture;
    for (const QByteArray& line : rig.evidenceBytes().split('\n')) {
      const QJsonObject entry = QJsonDocument::fromJson(line).object();
      if (entry.value(QStringLiteral("event")).toString() == u"capture")
        picture = entry.value(QStringLiteral("picture")).toObject();
    }
    QCOMPARE(picture.value(QStringLiteral("settled")).toBool(), !changing);
    const qint64 waited = picture.value(QStringLiteral("waited_ms")).toInteger(-1);
    if (changing)
      QVERIFY(waited >= kBound.count()); // waited the whole bound, then took the picture as it was
    else
      QVERIFY(waited >= 0 && waited < kBound.count()); // settled long before: no wait to speak of
  }

  // A close during the sync answers the waiting request_lock with the close reason.
  void requestLockWaitingForTheSyncGetsTheCloseReason() {
    SocketRig rig;
    QVERIFY(rig.listening);
    rig.barrier.setGuestSync([](QDeadlineTimer, LockBarrier::SyncDone) {}, {},
                             std::chrono::milliseconds(5000));
    RawRelay relay(rig.runDir.mcpSocketPath());
    QVERIFY(relay.bind(rig.grant));
    relay.send(obj("{\"type\":\"call\",\"id\":1,\"op\":\"request_lock\",\"arguments\":{}}"));
    QTRY_VERIFY(rig.barrier.syncing());
    rig.phases.close(Refusal::Panic, QStringLiteral("operator panic"));
    const QJsonObject reply = relay.next();
    QCOMPARE(reply.value(QStringLiteral("type")).toString(), QStringLiteral("error"));
    QCOMPARE(reply.value(QStringLiteral("code")).toString(), QStringLiteral("PANIC"));
  }

  // Expiry on the console's side: past expires_at (its wall clock) every relay call, even
  // status, is refused EXPIRED and the console closes EXPIRED.
  void everyRelayCallPastExpiryIsRefused_data() {
    QTest::addColumn<QString>("op");
    for (const char* op : {"status", "capture_desktop", "perform_action", "request_lock"})
      QTest::newRow(op) << QString::fromLatin1(op);
  }
  void everyRelayCallPastExpiryIsRefused() {
    QFETCH(QString, op);
    SocketRig rig;
    QVERIFY(rig.listening);
    rig.phases.setExpiry(rig.grant.expiresAt);
    const QDateTime past = rig.grant.expiresAt.addSecs(1);
    rig.phases.setWallClockForTest([past] { return past; });
    RawRelay relay(rig.runDir.mcpSocketPath());
    QVERIFY(relay.bind(rig.grant));
    relay.send(QJsonObject{{QStringLiteral("type"), QStringLiteral("call")},
                           {QStringLiteral("id"), 1},
                           {QStringLiteral("op"), op},
                           {QStringLiteral("arguments"), QJsonObject{}}});
    const QJsonObject reply = relay.next();
    QCOMPARE(reply.value(QStringLiteral("code")).toString(), QStringLiteral("EXPIRED"));
    QCOMPARE(rig.phases.phase(), Phase::Closed);
    QCOMPARE(rig.phases.closeReason().code, Refusal::Expired);
    QCOMPARE(rig.sink.attempts, 0);
  }

  // Expiry on the relay's side: the console's hello says when the grant expires, and a call
  // made after that is refused EXPIRED without reaching the console (a console stopped across
  // expiry has not noticed yet).
  void relayRefusesCallsPastTheGrantsExpiry() {
    GrantOptions options;
    options.lifetimeSeconds = -1;
    SocketRig rig(options);
    QVERIFY(rig.listening);
    RelayHarness relay(rig.dir.path(), rig.grant.runId);
    QVERIFY(relay.initialize());
    QCOMPARE(code(relay.tool(1, QStringLiteral("status"))), QStringLiteral("EXPIRED"));
    QCOMPARE(code(relay.tool(2, QStringLiteral("perform_action"),
                             obj("{\"action\":{\"type\":\"click\",\"x\":1,\"y\":1}}"))),
             QStringLiteral("EXPIRED"));
    QCOMPARE(rig.phases.phase(), Phase::Setup); // the console was never asked
    QCOMPARE(rig.sink.attempts, 0);
  }

  void relayReportsTheConsoleGoneAsRunNotFound() {
    SocketRig rig;
    QVERIFY(rig.listening);
    RelayHarness relay(rig.dir.path(), rig.grant.runId);
    QVERIFY(relay.initialize());
    rig.server.stop();
    QCOMPARE(code(relay.tool(1, QStringLiteral("status"))), QStringLiteral("RUN_NOT_FOUND"));
  }
};

QTEST_GUILESS_MAIN(tst_Action)
#include "tst_action.moc"
