#include "ActionTestSupport.h"
#include "action/ActionPlan.h"
#include "action/ActionService.h"
#include "action/ActionSocketServer.h"
#include "action/McpRelay.h"
#include "action/McpServer.h"
#include "audit/EvidenceLog.h"
#include "privacy/RunDirectory.h"
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
    QCOMPARE(keys.size(), 5 + 14 + 26 + 10 + 12);
    QSet<quint16> seen;
    for (const QJsonValue& k : keys) {
      QVERIFY2(ActionSpec::isAllowedKey(k.toString()), qPrintable(k.toString()));
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
    QCOMPARE(relay.rc.load(), kMcpExitRefused);
    QVERIFY2(relay.stderrText().startsWith("guest-console mcp: " + code.toLatin1()), qPrintable(code));
  }

  void relayRefusesAGrantToolItDoesNotImplement() {
    GrantOptions options;
    options.tool = QStringLiteral("run_shell");
    SocketRig rig(options);
    QVERIFY(rig.listening);
    RelayHarness relay(rig.dir.path(), rig.grant.runId);
    QTRY_VERIFY(relay.done.load());
    QCOMPARE(relay.rc.load(), kMcpExitRefused);
    QVERIFY(relay.stderrText().startsWith("guest-console mcp: MCP_NOT_AUTHORIZED"));
  }

  void relayRefusesAConsoleOfAnotherUid() {
    SocketRig rig;
    QVERIFY(rig.listening);
    McpRelayOptions options;
    options.expectedPeerUid = ::geteuid() + 4242;
    RelayHarness relay(rig.dir.path(), rig.grant.runId, options);
    QTRY_VERIFY(relay.done.load());
    QCOMPARE(relay.rc.load(), kMcpExitRefused);
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
                                 QStringLiteral("perform_action"), QStringLiteral("request_lock")}));

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
    QCOMPARE(relay.rc.load(), kMcpExitOk);
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
