#include "session/InputGate.h"
#include "session/LockBarrier.h"
#include "session/Phase.h"
#include "session/PhaseController.h"

#include <QSignalSpy>
#include <QTest>

using namespace gc;

namespace {

// The table the design fixes (DESIGN.md §6), written out independently of Phase.cpp.
bool expectedLegal(Phase from, Phase to) {
  if (from == Phase::Closed)
    return false;
  if (to == Phase::Closed)
    return true;
  return (from == Phase::Setup && to == Phase::Locking) ||
         (from == Phase::Locking && to == Phase::ReadOnly) ||
         (from == Phase::ReadOnly && to == Phase::Capturing) ||
         (from == Phase::Capturing && to == Phase::Reviewing) ||
         (from == Phase::Reviewing && to == Phase::Action);
}

// Walks a fresh controller forward to `target` through legal edges only.
void advanceTo(PhaseController& pc, Phase target) {
  const Phase path[] = {Phase::Setup,     Phase::Locking,   Phase::ReadOnly,
                        Phase::Capturing, Phase::Reviewing, Phase::Action};
  if (target == Phase::Closed) {
    pc.close(Refusal::OperatorClose, QStringLiteral("test"));
    return;
  }
  for (Phase p : path) {
    if (pc.phase() == target)
      return;
    const auto idx = static_cast<int>(pc.phase());
    QVERIFY(pc.transition(path[idx + 1], QStringLiteral("walk")).ok());
    Q_UNUSED(p);
  }
}

class CountingSink : public InputSink {
public:
  Status send(const InputEvent&, QDeadlineTimer) override {
    ++sent;
    return success();
  }
  int sent = 0;
};

// A barrier whose guest sync the test finishes by hand (the console's is GuestSync).
struct BarrierRig {
  PhaseController phases;
  CountingSink sink;
  InputGate gate{&phases, &sink};
  LockBarrier barrier{&phases, &gate};
  LockBarrier::SyncDone finishSync;
  int cancels = 0;
  BarrierRig() {
    barrier.setGuestSync([this](QDeadlineTimer, LockBarrier::SyncDone done) { finishSync = std::move(done); },
                         [this] { ++cancels; }, std::chrono::milliseconds(1000));
  }
};

} // namespace

class tst_Phase : public QObject {
  Q_OBJECT
private slots:
  void everyPairFollowsTheTable_data() {
    QTest::addColumn<int>("from");
    QTest::addColumn<int>("to");
    for (Phase f : kAllPhases)
      for (Phase t : kAllPhases)
        QTest::addRow("%s->%s", qPrintable(phaseName(f)), qPrintable(phaseName(t)))
            << static_cast<int>(f) << static_cast<int>(t);
  }
  void everyPairFollowsTheTable() {
    QFETCH(int, from);
    QFETCH(int, to);
    const auto f = static_cast<Phase>(from);
    const auto t = static_cast<Phase>(to);
    QCOMPARE(isLegalTransition(f, t), expectedLegal(f, t));

    PhaseController pc;
    advanceTo(pc, f);
    QCOMPARE(pc.phase(), f);
    QSignalSpy changed(&pc, &PhaseController::phaseChanged);
    QSignalSpy refused(&pc, &PhaseController::transitionRefused);
    const Status result = pc.transition(t, QStringLiteral("probe"));
    if (expectedLegal(f, t)) {
      QVERIFY(result.ok());
      QCOMPARE(pc.phase(), t);
      QCOMPARE(changed.count(), 1);
      QCOMPARE(refused.count(), 0);
    } else {
      QVERIFY(!result.ok());
      QCOMPARE(result.code(), Refusal::IllegalTransition);
      QCOMPARE(pc.phase(), f); // unchanged
      QCOMPARE(changed.count(), 0);
      QCOMPARE(refused.count(), 1);
    }
  }

  void closedIsTerminal() {
    PhaseController pc;
    QVERIFY(pc.close(Refusal::Panic, QString()));
    QSignalSpy closed(&pc, &PhaseController::closed);
    QVERIFY(!pc.close(Refusal::Expired, QString())); // second close keeps the first reason
    QCOMPARE(pc.closeReason().code, Refusal::Panic);
    for (Phase t : kAllPhases)
      QVERIFY(!pc.transition(t, QStringLiteral("after close")).ok());
    QCOMPARE(pc.phase(), Phase::Closed);
    QCOMPARE(closed.count(), 0);
  }

  void setupUnreachableOnceLeft() {
    for (Phase f : kAllPhases) {
      if (f != Phase::Setup)
        QVERIFY2(!isLegalTransition(f, Phase::Setup), qPrintable(phaseName(f)));
    }
  }

  void closeFromEveryPhaseRecordsReason_data() {
    QTest::addColumn<int>("from");
    for (Phase f : kAllPhases)
      if (f != Phase::Closed)
        QTest::newRow(qPrintable(phaseName(f))) << static_cast<int>(f);
  }
  void closeFromEveryPhaseRecordsReason() {
    QFETCH(int, from);
    PhaseController pc;
    advanceTo(pc, static_cast<Phase>(from));
    QSignalSpy closed(&pc, &PhaseController::closed);
    QVERIFY(pc.close(Refusal::Panic, QStringLiteral("operator panic")));
    QCOMPARE(closed.count(), 1);
    QCOMPARE(closed.at(0).at(0).value<Failure>().code, Refusal::Panic);
    QCOMPARE(pc.phase(), Phase::Closed);
  }

  // Expiry is a rule of the controller: at expires_at (by its wall clock) every forward step
  // is refused EXPIRED and closes EXPIRED; before it nothing changes.
  void expiryRefusesEveryForwardStep_data() {
    QTest::addColumn<int>("from");
    for (Phase f : {Phase::Setup, Phase::Locking, Phase::ReadOnly, Phase::Capturing, Phase::Reviewing})
      QTest::newRow(qPrintable(phaseName(f))) << static_cast<int>(f);
  }
  void expiryRefusesEveryForwardStep() {
    QFETCH(int, from);
    const auto f = static_cast<Phase>(from);
    const QDateTime expiresAt = QDateTime::currentDateTimeUtc().addSecs(60);
    QDateTime clock = expiresAt.addMSecs(-1);
    PhaseController pc;
    pc.setExpiry(expiresAt);
    pc.setWallClockForTest([&clock] { return clock; });
    advanceTo(pc, f);
    QCOMPARE(pc.phase(), f);
    QVERIFY(!pc.expired());
    QVERIFY(!pc.closeIfExpired());
    clock = expiresAt; // the instant itself is past
    QVERIFY(pc.expired());
    QSignalSpy closed(&pc, &PhaseController::closed);
    const Phase next = static_cast<Phase>(from + 1);
    QCOMPARE(pc.transition(next, QStringLiteral("after expiry")).code(), Refusal::Expired);
    QCOMPARE(pc.phase(), Phase::Closed);
    QCOMPARE(closed.count(), 1);
    QCOMPARE(pc.closeReason().code, Refusal::Expired);
    QVERIFY(pc.closeIfExpired()); // still expired: every later gate refuses too
  }

  // The guest sync runs after requestLock() has returned (READ_ONLY); capture starts only when
  // it ends well, once.
  void barrierCapturesWhenTheGuestSyncEnds() {
    BarrierRig rig;
    QVERIFY(rig.gate.submit(InputEvent::key(1, 0x1E, true)).ok());
    QSignalSpy capture(&rig.barrier, &LockBarrier::captureStarted);
    QVERIFY(rig.barrier.requestLock(QStringLiteral("test")).ok());
    QCOMPARE(rig.phases.phase(), Phase::ReadOnly);
    QVERIFY(rig.barrier.syncing());
    QCOMPARE(rig.sink.sent, 1); // drained before the sync started
    QCOMPARE(capture.count(), 0);
    rig.finishSync(success());
    QCOMPARE(capture.count(), 1);
    QCOMPARE(rig.phases.phase(), Phase::Capturing);
    QVERIFY(!rig.barrier.syncing());
    rig.finishSync(success()); // a second report changes nothing
    QCOMPARE(capture.count(), 1);
  }

  // A close during the sync (panic, expiry, VM gone, …) cancels it; a report that still comes
  // is ignored and capture never starts.
  void aCloseDuringTheGuestSyncCancelsIt_data() {
    QTest::addColumn<int>("code");
    QTest::newRow("panic") << int(Refusal::Panic);
    QTest::newRow("expiry") << int(Refusal::Expired);
    QTest::newRow("VM gone") << int(Refusal::VmGone);
  }
  void aCloseDuringTheGuestSyncCancelsIt() {
    QFETCH(int, code);
    qRegisterMetaType<gc::Failure>();
    BarrierRig rig;
    QSignalSpy capture(&rig.barrier, &LockBarrier::captureStarted);
    QSignalSpy failed(&rig.barrier, &LockBarrier::lockFailed);
    QVERIFY(rig.barrier.requestLock(QStringLiteral("test")).ok());
    QVERIFY(rig.barrier.syncing());
    rig.phases.close(Refusal(code), QStringLiteral("meanwhile"));
    QCOMPARE(rig.cancels, 1);
    QCOMPARE(failed.count(), 1);
    QCOMPARE(failed.at(0).at(0).value<Failure>().code, Refusal(code));
    rig.finishSync(success()); // too late
    QCOMPARE(capture.count(), 0);
    QCOMPARE(rig.phases.phase(), Phase::Closed);
    QCOMPARE(rig.phases.closeReason().code, Refusal(code));
  }

  // A failed sync closes with its reason; capture never starts.
  void aFailedGuestSyncClosesWithoutCapture() {
    qRegisterMetaType<gc::Failure>();
    BarrierRig rig;
    QSignalSpy capture(&rig.barrier, &LockBarrier::captureStarted);
    QSignalSpy failed(&rig.barrier, &LockBarrier::lockFailed);
    QVERIFY(rig.barrier.requestLock(QStringLiteral("test")).ok());
    rig.finishSync(Status(Refusal::DrainTimeout, QStringLiteral("no answer, no settle")));
    QCOMPARE(rig.phases.phase(), Phase::Closed);
    QCOMPARE(rig.phases.closeReason().code, Refusal::DrainTimeout);
    QCOMPARE(failed.count(), 1);
    QCOMPARE(capture.count(), 0);
    QCOMPARE(rig.cancels, 0);
  }

  void namesRoundTrip() {
    for (Phase p : kAllPhases)
      QCOMPARE(phaseFromName(phaseName(p)), std::optional<Phase>(p));
    QCOMPARE(phaseFromName(u"setup"), std::nullopt);
  }
};

QTEST_GUILESS_MAIN(tst_Phase)
#include "tst_phase.moc"
