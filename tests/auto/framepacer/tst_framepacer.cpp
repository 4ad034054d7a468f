// FramePacer (issue 27 item 3): when the guest's RDPGFX frames are acknowledged — at once,
// at a bounded rate with no panel, no faster than the panel presents — and that a held
// acknowledgement is always released in the end. Times are given, not waited for.
#include "rdp/FramePacer.h"

#include <QTest>

using namespace gc;
using namespace std::chrono_literals;
using Clock = FramePacer::Clock;

namespace {

const Clock::time_point t0 = Clock::time_point{} + 3600s;

FramePacer pacer(PacingMode mode) {
  FramePacer p({500ms, 1000ms, 2, 8});
  p.setMode(mode);
  return p;
}

} // namespace

class tst_FramePacer : public QObject {
  Q_OBJECT
private slots:
  void unpacedAcknowledgesEveryFrameAtOnce() {
    FramePacer p = pacer(PacingMode::Unpaced);
    p.noteHanded(50); // however far behind a panel is
    for (int i = 0; i < 10; ++i)
      QVERIFY(p.ackNow(t0 + i * 1ms, 0));
    QVERIFY(p.releaseDue(t0, 3));
  }

  void withNoPanelAcknowledgesAtMostOncePerInterval() {
    FramePacer p = pacer(PacingMode::NoPanel);
    QVERIFY(p.ackNow(t0, 0)); // the first frame after a quiet spell
    QVERIFY(!p.ackNow(t0 + 1ms, 0));
    QVERIFY(!p.ackNow(t0 + 499ms, 0));
    QVERIFY(!p.releaseDue(t0 + 499ms, 2));
    QVERIFY(p.releaseDue(t0 + 500ms, 2));
    p.noteReleased(t0 + 500ms);
    QVERIFY(!p.ackNow(t0 + 700ms, 0));
    QVERIFY(!p.releaseDue(t0 + 999ms, 1));
    QVERIFY(p.ackNow(t0 + 1000ms, 0));
  }

  void withAPanelAcknowledgesWhileAtMostTwoFramesAwaitPresentation() {
    FramePacer p = pacer(PacingMode::Panel);
    p.noteHanded(2);
    QVERIFY(p.ackNow(t0, 0));
    p.noteHanded(3); // three handed, none presented
    QCOMPARE(p.inFlight(), 3u);
    QVERIFY(!p.ackNow(t0 + 1ms, 0));
    QVERIFY(!p.releaseDue(t0 + 2ms, 1));
    p.notePresented(1); // the panel showed the first: two await it
    QVERIFY(p.releaseDue(t0 + 3ms, 1));
    QVERIFY(p.ackNow(t0 + 3ms, 0));
  }

  void aPanelThatPresentsNothingIsReleasedAfterTheHold() {
    FramePacer p = pacer(PacingMode::Panel);
    p.noteHanded(10);
    QVERIFY(p.ackNow(t0 - 2000ms, 0)); // held since the last release, long ago
    p.noteReleased(t0);
    QVERIFY(!p.ackNow(t0 + 999ms, 0));
    QVERIFY(!p.releaseDue(t0 + 999ms, 4));
    QVERIFY(p.releaseDue(t0 + 1000ms, 4));
  }

  void neverHoldsMoreThanTheBound_data() {
    QTest::addColumn<int>("mode");
    QTest::newRow("no panel") << int(PacingMode::NoPanel);
    QTest::newRow("panel") << int(PacingMode::Panel);
  }
  void neverHoldsMoreThanTheBound() {
    // A server that keeps sending whatever is acknowledged: the 8th frame goes with the 7 held.
    QFETCH(int, mode);
    FramePacer p = pacer(PacingMode(mode));
    p.noteHanded(1000);
    p.noteReleased(t0);
    for (std::size_t held = 0; held < 7; ++held)
      QVERIFY(!p.ackNow(t0 + 1ms, held));
    QVERIFY(p.ackNow(t0 + 1ms, 7));
  }

  void nothingHeldIsNeverDue() {
    for (const PacingMode mode : {PacingMode::Unpaced, PacingMode::NoPanel, PacingMode::Panel})
      QVERIFY(!pacer(mode).releaseDue(t0 + 3600s, 0));
  }

  void aHeldAcknowledgementIsAlwaysReleasedInTheEnd_data() {
    QTest::addColumn<int>("mode");
    QTest::newRow("no panel") << int(PacingMode::NoPanel);
    QTest::newRow("panel") << int(PacingMode::Panel);
  }
  void aHeldAcknowledgementIsAlwaysReleasedInTheEnd() {
    QFETCH(int, mode);
    FramePacer p = pacer(PacingMode(mode));
    p.noteHanded(1000); // a panel that never presents
    p.noteReleased(t0);
    QVERIFY(!p.ackNow(t0 + 1ms, 0));
    const auto bound = std::max(p.timing().interval, p.timing().hold);
    QVERIFY(p.releaseDue(t0 + bound, 1));
  }

  void presentationNeverGoesBackwards() {
    FramePacer p = pacer(PacingMode::Panel);
    p.noteHanded(8);
    p.notePresented(7);
    p.notePresented(2);
    p.noteHanded(5);
    QCOMPARE(p.presented(), 7u);
    QCOMPARE(p.handed(), 8u);
    QCOMPARE(p.inFlight(), 1u);
  }

  void theModeChangesWhatIsDue() {
    FramePacer p = pacer(PacingMode::NoPanel);
    QVERIFY(p.ackNow(t0, 0));
    QVERIFY(!p.releaseDue(t0 + 10ms, 3));
    p.setMode(PacingMode::Unpaced); // the lock: everything held goes at once
    QVERIFY(p.releaseDue(t0 + 10ms, 3));
  }
};

QTEST_GUILESS_MAIN(tst_FramePacer)
#include "tst_framepacer.moc"
