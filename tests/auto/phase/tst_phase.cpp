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

  void namesRoundTrip() {
    for (Phase p : kAllPhases)
      QCOMPARE(phaseFromName(phaseName(p)), std::optional<Phase>(p));
    QCOMPARE(phaseFromName(u"setup"), std::nullopt);
  }
};

QTEST_GUILESS_MAIN(tst_Phase)
#include "tst_phase.moc"
