#include "action/ActionPlan.h"
#include "grant/ActionSpec.h"
#include "session/InputGate.h"
#include "session/LockBarrier.h"
#include "widgets/ScancodeMap.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <QTimer>

#include <atomic>
#include <mutex>
#include <set>
#include <vector>

using namespace gc;

namespace {

// Records what reaches "the wire", in order, with a capture-start marker in the same log:
// the unit-level stand-in for the guest's arrival log (the RDP suites use the real guest).
class RecordingSink : public InputSink {
public:
  enum class Mode { Ok, Fail, Stall };

  Status send(const InputEvent& event, QDeadlineTimer deadline) override {
    if (mode == Mode::Fail)
      return Status(Refusal::InputSendFailed, QStringLiteral("socket closed"));
    if (mode == Mode::Stall) {
      while (!deadline.hasExpired()) {
        // a stalled guest: the send cannot complete before the deadline
        QThread::yieldCurrentThread();
      }
      return Status(Refusal::InputSendFailed, QStringLiteral("timed out"));
    }
    log.push_back(static_cast<qint64>(event.seq));
    return success();
  }
  void markCapture() { log.push_back(kCaptureMarker); }

  static constexpr qint64 kCaptureMarker = -1;
  Mode mode = Mode::Ok;
  std::vector<qint64> log;
};

struct Rig {
  explicit Rig(InputGateLimits limits = {}) : gate(&phases, &sink, limits), barrier(&phases, &gate) {
    gate.setDesktopSize(QSize(1920, 1080));
    QObject::connect(&barrier, &LockBarrier::captureStarted, [this] { sink.markCapture(); });
  }
  PhaseController phases;
  RecordingSink sink;
  InputGate gate;
  LockBarrier barrier;
};

} // namespace

class tst_InputGate : public QObject {
  Q_OBJECT
private slots:
  void acceptsAndDeliversInOrderInSetup() {
    Rig rig;
    QSignalSpy accepted(&rig.gate, &InputGate::accepted);
    for (quint64 s = 1; s <= 20; ++s) {
      const auto r = s % 2 ? rig.gate.submit(InputEvent::key(s, 0x1E, true))
                           : rig.gate.submit(InputEvent::pointer(s, 100, 200, 1, 0));
      QVERIFY(r.ok());
      QCOMPARE(r.value(), s);
    }
    QCOMPARE(accepted.count(), 20);
    QTRY_COMPARE(rig.sink.log.size(), std::size_t(20));
    for (qint64 i = 0; i < 20; ++i)
      QCOMPARE(rig.sink.log[std::size_t(i)], i + 1);
  }

  void refusesAbusiveEvents_data() {
    QTest::addColumn<int>("kind");
    QTest::addColumn<int>("scancode");
    QTest::addColumn<int>("x");
    QTest::addColumn<int>("y");
    QTest::addColumn<int>("buttons");
    QTest::addColumn<int>("wheel");
    QTest::addColumn<QString>("code");
    const int K = int(InputEvent::Kind::Key), P = int(InputEvent::Kind::Pointer);
    QTest::newRow("scancode zero") << K << 0 << 0 << 0 << 0 << 0 << "INPUT_INVALID";
    QTest::newRow("scancode 0x80 (break bit)") << K << 0x80 << 0 << 0 << 0 << 0 << "INPUT_INVALID";
    QTest::newRow("scancode 0xFF") << K << 0xFF << 0 << 0 << 0 << 0 << "INPUT_INVALID";
    QTest::newRow("unknown prefix 0xE100") << K << 0xE11D << 0 << 0 << 0 << 0 << "INPUT_INVALID";
    QTest::newRow("prefix 0x1200") << K << 0x1210 << 0 << 0 << 0 << 0 << "INPUT_INVALID";
    QTest::newRow("extended zero 0xE000") << K << 0xE000 << 0 << 0 << 0 << 0 << "INPUT_INVALID";
    QTest::newRow("x at width") << P << 0 << 1920 << 10 << 0 << 0 << "INPUT_INVALID";
    QTest::newRow("y at height") << P << 0 << 10 << 1080 << 0 << 0 << "INPUT_INVALID";
    QTest::newRow("x huge") << P << 0 << 65535 << 10 << 0 << 0 << "INPUT_INVALID";
    QTest::newRow("unknown button bit 3") << P << 0 << 1 << 1 << 8 << 0 << "INPUT_INVALID";
    QTest::newRow("all button bits") << P << 0 << 1 << 1 << 255 << 0 << "INPUT_INVALID";
    QTest::newRow("wheel huge") << P << 0 << 1 << 1 << 0 << 30000 << "INPUT_INVALID";
    QTest::newRow("wheel negative huge") << P << 0 << 1 << 1 << 0 << -30000 << "INPUT_INVALID";
    QTest::newRow("wheel just over") << P << 0 << 1 << 1 << 0 << 256 << "INPUT_INVALID";
  }
  void refusesAbusiveEvents() {
    QFETCH(int, kind);
    QFETCH(int, scancode);
    QFETCH(int, x);
    QFETCH(int, y);
    QFETCH(int, buttons);
    QFETCH(int, wheel);
    QFETCH(QString, code);
    Rig rig;
    const InputEvent e = kind == int(InputEvent::Kind::Key)
                             ? InputEvent::key(1, quint16(scancode), true)
                             : InputEvent::pointer(1, quint16(x), quint16(y), quint8(buttons), qint16(wheel));
    const auto r = rig.gate.submit(e);
    QVERIFY(!r.ok());
    QCOMPARE(refusalName(r.code()), code);
    QCOMPARE(rig.gate.refusedCounts().value(r.code()), quint64(1));
    QCoreApplication::processEvents();
    QVERIFY(rig.sink.log.empty());
  }

  void acceptsBoundaryEvents() {
    Rig rig;
    QVERIFY(rig.gate.submit(InputEvent::key(1, 0x01, true)).ok());
    QVERIFY(rig.gate.submit(InputEvent::key(2, 0x7E, false)).ok());
    QVERIFY(rig.gate.submit(InputEvent::key(3, 0xE01D, true)).ok());
    QVERIFY(rig.gate.submit(InputEvent::pointer(4, 1919, 1079, 7, 255)).ok());
    QVERIFY(rig.gate.submit(InputEvent::pointer(5, 0, 0, 0, -255)).ok());
  }

  // The keyboard table: exactly the keys the webview and the viewer can produce.
  void acceptsKeysOnThePanelKeyboard_data() {
    QTest::addColumn<int>("scancode");
    QTest::newRow("0x01 Escape (lowest)") << 0x01;
    QTest::newRow("0x1D left Ctrl") << 0x1D;
    QTest::newRow("0x38 left Alt") << 0x38;
    QTest::newRow("0x53 keypad . (last of the contiguous block)") << 0x53;
    QTest::newRow("0x56 ISO key") << 0x56;
    QTest::newRow("0x7E keypad comma (highest base)") << 0x7E;
    QTest::newRow("0xE010 previous track (lowest extended)") << 0xE010;
    QTest::newRow("0xE053 Delete") << 0xE053;
    QTest::newRow("0xE05B left Meta") << 0xE05B;
    QTest::newRow("0xE05D context menu") << 0xE05D;
    QTest::newRow("0xE06D media select (highest extended)") << 0xE06D;
  }
  void acceptsKeysOnThePanelKeyboard() {
    QFETCH(int, scancode);
    Rig rig;
    QVERIFY(rig.gate.submit(InputEvent::key(1, quint16(scancode), true)).ok());
    QVERIFY(rig.gate.submit(InputEvent::key(2, quint16(scancode), false)).ok());
    QTRY_COMPARE(rig.sink.log.size(), std::size_t(2));
    QVERIFY(rig.gate.refusedCounts().isEmpty());
  }

  void refusesKeysOffThePanelKeyboard_data() {
    QTest::addColumn<int>("scancode");
    QTest::newRow("0xE05E ACPI Power") << 0xE05E;
    QTest::newRow("0xE05F ACPI Sleep") << 0xE05F;
    QTest::newRow("0xE063 ACPI Wake") << 0xE063;
    QTest::newRow("0x54 (Alt+PrintScreen's SysRq code)") << 0x54;
    QTest::newRow("0x55 (between keypad . and ISO key)") << 0x55;
    QTest::newRow("0x5A (just above keypad =)") << 0x5A;
    QTest::newRow("0x7F (top of the base range)") << 0x7F;
    QTest::newRow("0xE001 (extended Escape)") << 0xE001;
    QTest::newRow("0xE00F (just below the lowest extended)") << 0xE00F;
    QTest::newRow("0xE02A (fake left Shift)") << 0xE02A;
    QTest::newRow("0xE05A (just below left Meta)") << 0xE05A;
    QTest::newRow("0xE06E (just above the highest extended)") << 0xE06E;
    QTest::newRow("0xE07F (top of the extended range)") << 0xE07F;
  }
  void refusesKeysOffThePanelKeyboard() {
    QFETCH(int, scancode);
    Rig rig;
    QSignalSpy refused(&rig.gate, &InputGate::refused);
    for (bool down : {true, false}) {
      const auto r = rig.gate.submit(InputEvent::key(down ? 1 : 2, quint16(scancode), down));
      QVERIFY(!r.ok());
      QCOMPARE(refusalName(r.code()), QStringLiteral("SCANCODE_FORBIDDEN"));
    }
    QCOMPARE(rig.gate.refusedCounts().value(Refusal::ScancodeForbidden), quint64(2));
    QCOMPARE(refused.count(), 2);
    // A refused key consumes no sequence number: the next valid key with seq 1 still goes.
    QVERIFY(rig.gate.submit(InputEvent::key(1, 0x1E, true)).ok());
    QTRY_COMPARE(rig.sink.log.size(), std::size_t(1));
    QCOMPARE(rig.gate.acceptedCount(), quint64(1));
  }

  void gateTableIsTheProtocolTable() {
    QFile file(QStringLiteral(GC_PROTOCOL_JSON));
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QJsonArray json =
        QJsonDocument::fromJson(file.readAll()).object().value(u"keyboardScancodes").toArray();
    QVERIFY(!json.isEmpty());
    std::vector<quint16> fromJson;
    for (const QJsonValue& v : json) {
      bool ok = false;
      fromJson.push_back(quint16(v.toString().toUInt(&ok, 16)));
      QVERIFY2(ok, qPrintable(v.toString()));
    }
    const auto table = InputGate::keyboardScancodes();
    QCOMPARE(std::vector<quint16>(table.begin(), table.end()), fromJson);
    // Over the whole 16-bit range the gate's lookup says yes exactly for the table.
    int accepted = 0;
    for (int code = 0; code <= 0xFFFF; ++code)
      accepted += InputGate::isKeyboardScancode(quint16(code)) ? 1 : 0;
    QCOMPARE(accepted, int(fromJson.size()));
  }

  // Every scancode the webview's map (media/scancodes.ts) or the viewer's map (ScancodeMap)
  // can produce is on the table, and the table holds nothing else.
  void tableIsExactlyWhatThePanelAndViewerCanProduce() {
    std::set<quint16> webview;
    {
      QFile file(QStringLiteral(GC_WEBVIEW_SCANCODES));
      QVERIFY(file.open(QIODevice::ReadOnly));
      const QString text = QString::fromUtf8(file.readAll());
      const qsizetype begin = text.indexOf(u"Object.freeze({");
      const qsizetype end = text.indexOf(u"});", begin);
      QVERIFY(begin > 0 && end > begin);
      static const QRegularExpression entry(QStringLiteral(R"(^\s*\w+:\s*(E \| )?0x([0-9a-fA-F]+),)"),
                                            QRegularExpression::MultilineOption);
      auto it = entry.globalMatch(text.mid(begin, end - begin));
      while (it.hasNext()) {
        const auto m = it.next();
        webview.insert(quint16((m.captured(1).isEmpty() ? 0 : 0xE000) | m.captured(2).toUInt(nullptr, 16)));
      }
      QVERIFY2(webview.size() > 100, "the webview map was not parsed");
    }
    std::set<quint16> viewer;
    for (quint32 evdev = 0; evdev < 1024; ++evdev) {
      if (const quint16 code = ScancodeMap::fromEvdev(evdev))
        viewer.insert(code);
    }
    const auto qtKeys = [&](int from, int to) {
      for (int key = from; key <= to; ++key) {
        for (bool keypad : {false, true}) {
          if (const quint16 code = ScancodeMap::fromQtKey(key, keypad))
            viewer.insert(code);
        }
      }
    };
    qtKeys(0x20, 0xFF);
    qtKeys(0x01000000, 0x01001FFF);
    QVERIFY(viewer.size() > 100);
    const auto table = InputGate::keyboardScancodes();
    for (quint16 code : webview)
      QVERIFY2(InputGate::isKeyboardScancode(code),
               qPrintable(QStringLiteral("webview 0x%1").arg(code, 0, 16)));
    for (quint16 code : viewer)
      QVERIFY2(InputGate::isKeyboardScancode(code),
               qPrintable(QStringLiteral("viewer 0x%1").arg(code, 0, 16)));
    std::set<quint16> both = webview;
    both.insert(viewer.begin(), viewer.end());
    QCOMPARE(std::vector<quint16>(both.begin(), both.end()),
             std::vector<quint16>(table.begin(), table.end()));
    qInfo("keyboard table: %zu keys (webview %zu, viewer %zu)", table.size(), webview.size(), viewer.size());
  }

  // The MCP action path: every key a key_chord may name maps to a key on the table.
  void actionKeyChordsUseOnlyTableKeys() {
    QStringList candidates;
    for (const char* name : {"ctrl",      "alt",    "shift",    "meta",  "win",   "enter", "tab",    "escape",
                             "backspace", "delete", "space",    "up",    "down",  "left",  "right",  "home",
                             "end",       "pageup", "pagedown", "power", "sleep", "wake",  "insert", "menu"})
      candidates << QString::fromLatin1(name);
    for (int f = 0; f <= 30; ++f)
      candidates << QStringLiteral("f%1").arg(f);
    for (char16_t c = 0x21; c < 0x7F; ++c)
      candidates << QString(QChar(c));
    int allowed = 0;
    for (const QString& key : std::as_const(candidates)) {
      if (!ActionSpec::isAllowedKey(key))
        continue;
      ++allowed;
      const std::optional<quint16> code = ActionPlan::scancode(key);
      QVERIFY2(code, qPrintable(key));
      QVERIFY2(InputGate::isKeyboardScancode(*code), qPrintable(key));
    }
    QVERIFY(allowed >= 5 + 14 + 12 + 36);
  }

  void refusesOutOfOrderSequence() {
    Rig rig;
    QVERIFY(rig.gate.submit(InputEvent::key(5, 0x1E, true)).ok());
    QCOMPARE(rig.gate.submit(InputEvent::key(5, 0x1E, false)).code(), Refusal::SequenceInvalid); // replay
    QCOMPARE(rig.gate.submit(InputEvent::key(3, 0x1E, false)).code(), Refusal::SequenceInvalid); // backwards
    QCOMPARE(rig.gate.submit(InputEvent::key(0, 0x1E, false)).code(), Refusal::SequenceInvalid); // zero
    QVERIFY(rig.gate.submit(InputEvent::key(9, 0x1E, false)).ok()); // gaps are fine
    QTRY_COMPARE(rig.sink.log, (std::vector<qint64>{5, 9}));
  }

  void refusesWhenQueueIsFull() {
    InputGateLimits limits;
    limits.capacity = 16;
    limits.burst = 1000;
    Rig rig(limits);
    // No event loop turn in between: the pump cannot run, the queue fills.
    for (quint64 s = 1; s <= 16; ++s)
      QVERIFY(rig.gate.submit(InputEvent::key(s, 0x1E, true)).ok());
    QCOMPARE(rig.gate.submit(InputEvent::key(17, 0x1E, true)).code(), Refusal::QueueFull);
    QTRY_COMPARE(rig.sink.log.size(), std::size_t(16));
    QVERIFY(rig.gate.submit(InputEvent::key(18, 0x1E, true)).ok()); // room again
  }

  void rateLimitsFloodsAndRecovers() {
    InputGateLimits limits;
    limits.ratePerSecond = 100;
    limits.burst = 10;
    limits.capacity = 10000;
    Rig rig(limits);
    auto now = InputGate::Clock::time_point{};
    rig.gate.setClockForTest([&now] { return now; });
    int ok = 0, limited = 0;
    for (quint64 s = 1; s <= 50; ++s)
      (rig.gate.submit(InputEvent::key(s, 0x1E, true)).ok() ? ok : limited)++;
    QCOMPARE(ok, 10);
    QCOMPARE(limited, 40);
    now += std::chrono::milliseconds(100); // 10 tokens come back
    for (quint64 s = 51; s <= 70; ++s)
      (rig.gate.submit(InputEvent::key(s, 0x1E, true)).ok() ? ok : limited)++;
    QCOMPARE(ok, 20);
    QCOMPARE(rig.gate.refusedCounts().value(Refusal::RateLimit), quint64(50));
  }

  void burstOfTenThousandStaysBoundedAndResponsive() {
    Rig rig; // defaults: capacity 256, burst 200
    QElapsedTimer t;
    t.start();
    quint64 accepted = 0;
    for (quint64 s = 1; s <= 10000; ++s)
      accepted += rig.gate.submit(InputEvent::pointer(s, quint16(s % 1920), quint16(s % 1080), 0, 0)).ok();
    QVERIFY(accepted <= 256);
    QCOMPARE(rig.gate.acceptedCount(), accepted);
    quint64 refused = 0;
    for (auto n : rig.gate.refusedCounts())
      refused += n;
    QCOMPARE(accepted + refused, quint64(10000));
    // Still responsive: a queued timer fires promptly after the burst, and what was
    // accepted — and nothing else — reaches the sink.
    bool fired = false;
    QTimer::singleShot(0, [&fired] { fired = true; });
    QTRY_VERIFY(fired);
    QTRY_COMPARE(rig.sink.log.size(), std::size_t(accepted));
    qInfo("10,000-event burst: %llu accepted, %llu refused, gate time %lld ms", accepted, refused,
          t.elapsed());
  }

  void lockDrainsAcceptedEventsBeforeCapture() {
    InputGateLimits limits;
    limits.burst = 1000;
    Rig rig(limits);
    for (quint64 s = 1; s <= 200; ++s)
      QVERIFY(rig.gate.submit(InputEvent::key(s, 0x1E, s % 2)).ok());
    QSignalSpy drained(&rig.barrier, &LockBarrier::drained);
    QSignalSpy capture(&rig.barrier, &LockBarrier::captureStarted);
    QVERIFY(rig.barrier.requestLock(QStringLiteral("panel")).ok());
    QCOMPARE(drained.count(), 1);
    QCOMPARE(drained.at(0).at(0).toULongLong(), quint64(200));
    QCOMPARE(capture.count(), 1);
    QCOMPARE(rig.phases.phase(), Phase::Capturing);
    QCOMPARE(rig.sink.log.size(), std::size_t(201));
    QCOMPARE(rig.sink.log.back(), RecordingSink::kCaptureMarker);
    const auto r = rig.gate.submit(InputEvent::key(201, 0x1E, true));
    QCOMPARE(r.code(), Refusal::PhaseLocked);
    QCoreApplication::processEvents();
    QCOMPARE(rig.sink.log.back(), RecordingSink::kCaptureMarker);
  }

  void lockWithNothingQueuedDrainsToZero() {
    Rig rig;
    QSignalSpy drained(&rig.barrier, &LockBarrier::drained);
    QVERIFY(rig.barrier.requestLock(QStringLiteral("mcp")).ok());
    QCOMPARE(drained.at(0).at(0).toULongLong(), quint64(0));
  }

  void secondLockRequestIsRefused() {
    Rig rig;
    QVERIFY(rig.barrier.requestLock(QStringLiteral("panel")).ok());
    QCOMPARE(rig.barrier.requestLock(QStringLiteral("panel")).code(), Refusal::PhaseWrong);
    QCOMPARE(rig.phases.phase(), Phase::Capturing);
  }

  void drainFailureClosesWithoutCapture_data() {
    QTest::addColumn<int>("mode");
    QTest::addColumn<QString>("code");
    QTest::newRow("guest gone") << int(RecordingSink::Mode::Fail) << "DRAIN_FAILED";
    QTest::newRow("guest stalled") << int(RecordingSink::Mode::Stall) << "DRAIN_TIMEOUT";
  }
  void drainFailureClosesWithoutCapture() {
    QFETCH(int, mode);
    QFETCH(QString, code);
    PhaseController phases;
    RecordingSink sink;
    InputGate gate(&phases, &sink);
    LockBarrier barrier(&phases, &gate, std::chrono::milliseconds(50));
    QSignalSpy capture(&barrier, &LockBarrier::captureStarted);
    QVERIFY(gate.submit(InputEvent::key(1, 0x1E, true)).ok());
    sink.mode = static_cast<RecordingSink::Mode>(mode);
    const Status s = barrier.requestLock(QStringLiteral("panel"));
    QVERIFY(!s.ok());
    QCOMPARE(refusalName(s.code()), code);
    QCOMPARE(phases.phase(), Phase::Closed);
    QCOMPARE(refusalName(phases.closeReason().code), code);
    QCOMPARE(capture.count(), 0);
    QCOMPARE(gate.queued(), 0); // wiped
  }

  // The guest settles after the lock is committed and before capture starts: the settle
  // step sees every drained event already delivered and the phase READ_ONLY.
  void captureWaitsForTheGuestToSettle() {
    Rig rig;
    for (quint64 s = 1; s <= 5; ++s)
      QVERIFY(rig.gate.submit(InputEvent::key(s, 0x1E, s % 2)).ok());
    QSignalSpy capture(&rig.barrier, &LockBarrier::captureStarted);
    Phase phaseWhileSettling = Phase::Setup;
    std::size_t deliveredWhileSettling = 0;
    bool deadlineGiven = false;
    rig.barrier.setGuestSettle(
        [&](QDeadlineTimer deadline) {
          phaseWhileSettling = rig.phases.phase();
          deliveredWhileSettling = rig.sink.log.size();
          deadlineGiven = !deadline.isForever() && deadline.remainingTime() > 0;
          return success();
        },
        std::chrono::milliseconds(1000));
    QVERIFY(rig.barrier.requestLock(QStringLiteral("panel")).ok());
    QCOMPARE(phaseWhileSettling, Phase::ReadOnly);
    QCOMPARE(deliveredWhileSettling, std::size_t(5));
    QVERIFY(deadlineGiven);
    QCOMPARE(capture.count(), 1);
    QCOMPARE(rig.phases.phase(), Phase::Capturing);
  }

  void aGuestThatDoesNotSettleClosesWithoutCapture_data() {
    QTest::addColumn<QString>("code");
    QTest::newRow("no answer in time") << "DRAIN_TIMEOUT";
    QTest::newRow("session gone") << "DRAIN_FAILED";
  }
  void aGuestThatDoesNotSettleClosesWithoutCapture() {
    QFETCH(QString, code);
    Rig rig;
    QVERIFY(rig.gate.submit(InputEvent::key(1, 0x1E, true)).ok());
    QSignalSpy capture(&rig.barrier, &LockBarrier::captureStarted);
    const Refusal refusal =
        code == QLatin1String("DRAIN_TIMEOUT") ? Refusal::DrainTimeout : Refusal::DrainFailed;
    rig.barrier.setGuestSettle([&](QDeadlineTimer) { return Status(refusal, QStringLiteral("no answer")); },
                               std::chrono::milliseconds(50));
    const Status s = rig.barrier.requestLock(QStringLiteral("mcp"));
    QCOMPARE(refusalName(s.code()), code);
    QCOMPARE(rig.phases.phase(), Phase::Closed);
    QCOMPARE(refusalName(rig.phases.closeReason().code), code);
    QCOMPARE(capture.count(), 0);
    QVERIFY(rig.sink.log.empty() || rig.sink.log.back() != RecordingSink::kCaptureMarker);
  }

  void deliveryFailureInSetupIsReported() {
    Rig rig;
    QSignalSpy failed(&rig.gate, &InputGate::deliveryFailed);
    rig.sink.mode = RecordingSink::Mode::Fail;
    QVERIFY(rig.gate.submit(InputEvent::key(1, 0x1E, true)).ok());
    QTRY_COMPARE(failed.count(), 1);
    QCOMPARE(rig.gate.queued(), 0);
  }

  void closeWipesTheQueue() {
    InputGateLimits limits;
    limits.burst = 1000;
    Rig rig(limits);
    for (quint64 s = 1; s <= 50; ++s)
      QVERIFY(rig.gate.submit(InputEvent::key(s, 0x1E, true)).ok());
    rig.phases.close(Refusal::Panic, QString());
    QCOMPARE(rig.gate.queued(), 0);
    QCoreApplication::processEvents();
    QVERIFY(rig.sink.log.empty()); // nothing queued goes out after close
    QCOMPARE(rig.gate.submit(InputEvent::key(51, 0x1E, true)).code(), Refusal::PhaseLocked);
  }

  // The heart of REQ-134 at unit level: 1,000 lock transitions, each with a second thread
  // injecting events at random points around the lock request. Invariants per round:
  // every accepted event reaches the sink before the capture marker, in order; nothing
  // reaches it after; every event submitted after the lock request is PHASE_LOCKED.
  void lockBarrierStressWithConcurrentInjection() {
    QLoggingCategory::setFilterRules(QStringLiteral("gc.phase.info=false"));
    const int rounds = 1000;
    int violations = 0;
    quint64 totalAccepted = 0, totalLocked = 0;
    for (int round = 0; round < rounds; ++round) {
      InputGateLimits limits;
      limits.burst = 100000;
      limits.capacity = 100000;
      Rig rig(limits);
      std::atomic<bool> lockRequested{false};
      std::vector<quint64> acceptedSeqs;
      quint64 lockedAfter = 0, acceptedAfterLock = 0;
      const int total = 20 + int(QRandomGenerator::global()->bounded(60));
      const int lockAt = 1 + int(QRandomGenerator::global()->bounded(total)); // 1..total
      QThread* injector = QThread::create([&] {
        for (int i = 1; i <= total; ++i) {
          if (i == lockAt) {
            QMetaObject::invokeMethod(
                &rig.gate,
                [&] {
                  lockRequested = true;
                  if (!rig.barrier.requestLock(QStringLiteral("stress")).ok())
                    ++violations;
                },
                Qt::QueuedConnection);
          }
          const quint64 seq = quint64(i);
          QMetaObject::invokeMethod(
              &rig.gate,
              [&, seq] {
                const auto r = rig.gate.submit(InputEvent::key(seq, quint16(0x10 + seq % 0x40), seq % 2));
                if (r.ok()) {
                  acceptedSeqs.push_back(seq);
                  if (lockRequested)
                    ++acceptedAfterLock;
                } else if (r.code() == Refusal::PhaseLocked) {
                  ++lockedAfter;
                }
              },
              Qt::QueuedConnection);
          if (QRandomGenerator::global()->bounded(4) == 0)
            QThread::yieldCurrentThread();
        }
      });
      injector->start();
      injector->wait();
      QTRY_COMPARE_WITH_TIMEOUT(int(acceptedSeqs.size() + lockedAfter), total, 5000);
      delete injector;

      const auto& log = rig.sink.log;
      const auto marker = std::find(log.begin(), log.end(), RecordingSink::kCaptureMarker);
      if (marker == log.end() || marker + 1 != log.end() || acceptedAfterLock != 0)
        ++violations;
      const std::vector<qint64> beforeCapture(log.begin(), marker);
      std::vector<qint64> expected(acceptedSeqs.begin(), acceptedSeqs.end());
      if (beforeCapture != expected)
        ++violations;
      if (rig.phases.phase() != Phase::Capturing)
        ++violations;
      totalAccepted += acceptedSeqs.size();
      totalLocked += lockedAfter;
    }
    qInfo("barrier stress: %d lock transitions, %llu accepted+drained, %llu refused PHASE_LOCKED, %d "
          "violations",
          rounds, totalAccepted, totalLocked, violations);
    QLoggingCategory::setFilterRules(QString());
    QCOMPARE(violations, 0);
  }
};

QTEST_GUILESS_MAIN(tst_InputGate)
#include "tst_inputgate.moc"
