// The console paces the guest's RDPGFX frames (issue 27 item 3), end to end: the console tells
// its RDP reader whether a panel is there and what it presented, the reader holds the
// guest's acknowledgements. Against the test guest in its GFX mode, which records every
// FrameAcknowledge it receives (gfx_ack) and lets at most 3 frames wait for one. No
// wall-clock limit is asserted: the count is bounded on the guest's own clock, with room for
// the delays a loaded machine adds; unpaced, the typing workload has 30 a second.
#include "ConsoleRig.h"

#include <QTest>

namespace {

// The guest's acknowledgements after the first `from`, once they span `seconds` of its clock.
struct Window {
  qsizetype count = 0;
  double seconds = 0;
};
Window acksOver(GuestProcess& guest, qsizetype from, double seconds) {
  Window w;
  const bool spanned = QTest::qWaitFor(
      [&] {
        guest.poll();
        const QList<QJsonObject> acks = guest.events(QStringLiteral("gfx_ack")).mid(from);
        if (acks.size() < 2)
          return false;
        w.count = acks.size();
        w.seconds = (acks.last().value(QStringLiteral("t_ns")).toDouble() -
                     acks.first().value(QStringLiteral("t_ns")).toDouble()) /
                    1e9;
        return w.seconds >= seconds;
      },
      90000);
  return spanned ? w : Window{};
}

qsizetype acksSoFar(GuestProcess& guest) {
  guest.poll();
  return guest.events(QStringLiteral("gfx_ack")).size();
}

} // namespace

class tst_ConsolePacing : public QObject {
  Q_OBJECT
private slots:
  void withNoPanelOrAStalledOneTheGuestIsAcknowledgedAtABoundedRate() {
    ConsoleRig rig;
    QVERIFY2(
        rig.openSession(ConsoleRig::Reach::LoggedIn, {QStringLiteral("--graphics"), QStringLiteral("gfx")}),
        qPrintable(rig.failure));
    QVERIFY(rig.guest.waitForEvent(QStringLiteral("gfx_ack")));
    rig.guest.command(R"({"cmd":"workload","mode":"typing"})");
    // No panel: a release every 500 ms at most, of at most the 3 frames the guest lets wait.
    const Window none = acksOver(rig.guest, acksSoFar(rig.guest), 3.0);
    QVERIFY(none.seconds >= 3.0);
    QVERIFY2(none.count <= 3 * (none.seconds / 0.5 + 3),
             qPrintable(QStringLiteral("%1 in %2 s").arg(none.count).arg(none.seconds)));
    // A panel that takes frames and never acknowledges one: after the two it may have
    // unpresented, the guest gets a release per second (the hold), no more.
    rig.ackFrames = false;
    QVERIFY(rig.connectPanel());
    QTRY_VERIFY_WITH_TIMEOUT(rig.framesReceived > 0, 20000);
    const Window stalled = acksOver(rig.guest, acksSoFar(rig.guest), 4.0);
    QVERIFY(stalled.seconds >= 4.0);
    QVERIFY2(stalled.count <= 3 * (stalled.seconds / 1.0 + 3),
             qPrintable(QStringLiteral("%1 in %2 s").arg(stalled.count).arg(stalled.seconds)));
    rig.guest.command(R"({"cmd":"workload","mode":"idle"})");
    rig.sendControl("{\"cmd\":\"close\"}");
    QTRY_VERIFY_WITH_TIMEOUT(rig.finished, 30000);
  }
};

QTEST_GUILESS_MAIN(tst_ConsolePacing)
#include "tst_consolepacing.moc"
