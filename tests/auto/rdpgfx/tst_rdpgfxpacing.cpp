// Frame pacing against the project's test guest in its GFX mode (issue 27 item 3): with no
// panel the guest's frames are acknowledged at a bounded rate; with a panel that stops
// presenting the reader holds the acknowledgements (the guest sees none) until the panel
// presents again; at the lock everything held goes out and the guest sync completes. The
// guest records every RDPGFX_FRAME_ACKNOWLEDGE it receives (gfx_ack, with its queueDepth).
// No wall-clock limit is asserted: the rate bound is checked on the guest's own clock, with
// room for the delays a loaded machine adds.
#include "GuestProcess.h"
#include "SessionFrames.h"
#include "SessionRig.h"
#include "rdp/RdpSession.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace gc;
using namespace std::chrono_literals;

namespace {

const char kUser[] = "tester";
const char kPassword[] = "gfx-pacing-pw-27";

int acksAtGuest(GuestProcess& guest) {
  guest.poll();
  return int(guest.events(QStringLiteral("gfx_ack")).size());
}

} // namespace

class tst_RdpGfxPacing : public QObject {
  Q_OBJECT

private slots:
  void initTestCase();
  void withNoPanelTheGuestIsAcknowledgedAtABoundedRate();
  void aPanelThatStopsPresentingHoldsTheGuestsAcknowledgements();
  void atTheLockEverythingHeldGoesOutAndTheSyncCompletes();

private:
  bool startGuest(GuestProcess& guest);
  bool connect(RdpSession& session, const GuestProcess& guest);
  // Paints a square of its own colour and waits until the session's frames show it.
  bool paint(GuestProcess& guest, const QSignalSpy& frames, int n);

  QTemporaryDir m_certDir;
  QTemporaryDir m_configDir;
};

void tst_RdpGfxPacing::initTestCase() {
  QVERIFY2(QFile::exists(GuestProcess::binary()), qPrintable(GuestProcess::binary()));
  QVERIFY(m_certDir.isValid() && m_configDir.isValid());
}

bool tst_RdpGfxPacing::startGuest(GuestProcess& guest) {
  return guest.start(QStringList{QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--cert-dir"),
                                 m_certDir.path(), QStringLiteral("--graphics"), QStringLiteral("gfx"),
                                 QStringLiteral("--gfx-codec"), QStringLiteral("uncompressed")},
                     QString::fromLatin1(kUser), QString::fromLatin1(kPassword));
}

bool tst_RdpGfxPacing::connect(RdpSession& session, const GuestProcess& guest) {
  // Connected, and on the pipeline: until its first frame has ended the guest may still send
  // SurfaceBits (a loaded machine), which no acknowledgement paces.
  return sessionrig::connect(session, sessionrig::loopbackConfig(guest, m_configDir.path()),
                             sessionrig::credentials(kUser, kPassword)) &&
         QTest::qWaitFor([&] { return session.channelReport().gfxFrames >= 1; }, 30000);
}

bool tst_RdpGfxPacing::paint(GuestProcess& guest, const QSignalSpy& frames, int n) {
  const QRect area(200 + 24 * n, 300, 16, 16);
  const QRgb rgb = 0x102030u + quint32(n) * 0x050301u;
  guest.command(
      QStringLiteral("{\"cmd\":\"paint\",\"x\":%1,\"y\":%2,\"w\":16,\"h\":16,\"color\":\"#%3\",\"id\":%4}")
          .arg(area.x())
          .arg(area.y())
          .arg(rgb & 0xFFFFFF, 6, 16, QLatin1Char('0'))
          .arg(n)
          .toLatin1());
  return QTest::qWaitFor([&] { return sessionrig::allPixels(sessionrig::lastFrame(frames), area, rgb); },
                         20000);
}

void tst_RdpGfxPacing::withNoPanelTheGuestIsAcknowledgedAtABoundedRate() {
  GuestProcess guest;
  QVERIFY(startGuest(guest));
  RdpSession session;
  const FramePacer::Timing pacing{500ms, 1000ms, 2};
  session.setPacingTiming(pacing);
  session.setPacing(PacingMode::NoPanel); // from the first frame on
  SessionFrames sessionFrames(session);
  QVERIFY(connect(session, guest));
  QCOMPARE(session.pacing().mode, PacingMode::NoPanel);
  // Typing: 30 frames/s from the guest, which lets 3 wait for their acknowledgement.
  guest.command(R"({"cmd":"workload","mode":"typing"})");
  const auto spanNs = [&] {
    guest.poll();
    const QList<QJsonObject> acks = guest.events(QStringLiteral("gfx_ack"));
    return acks.size() < 2 ? 0.0
                           : acks.last().value(QStringLiteral("t_ns")).toDouble() -
                                 acks.first().value(QStringLiteral("t_ns")).toDouble();
  };
  // Three seconds of the guest's time with acknowledgements arriving.
  QTRY_VERIFY_WITH_TIMEOUT(spanNs() >= 3e9, 60000);
  guest.command(R"({"cmd":"workload","mode":"idle"})");
  const QList<QJsonObject> acks = guest.events(QStringLiteral("gfx_ack"));
  const double span = spanNs();
  // A release every 500 ms at most, each of at most the 3 frames the guest lets wait; the
  // ends of the span may each gain a release from delays on the way (a loaded machine).
  const double releases = span / 5e8 + 3;
  QVERIFY2(acks.size() <= 3 * releases,
           qPrintable(QStringLiteral("%1 acknowledgements in %2 s").arg(acks.size()).arg(span / 1e9)));
  // Unpaced, the guest would have 30 a second; it got a bounded few, and the held ones
  // said so: a batch's earlier acknowledgements report the frames still held behind them.
  int maxDepth = 0;
  for (const QJsonObject& a : acks)
    maxDepth = std::max(maxDepth, a.value(QStringLiteral("queue_depth")).toInt());
  QVERIFY2(maxDepth >= 1, "no acknowledgement reported a held frame");
  // Nothing is held for good: the guest's frames are all acknowledged within the interval.
  QTRY_COMPARE_WITH_TIMEOUT(session.pacing().deferred, std::size_t(0), 20000);
  QCOMPARE(int(session.pacing().acknowledged), int(session.channelReport().gfxFrames));
  session.abort();
}

void tst_RdpGfxPacing::aPanelThatStopsPresentingHoldsTheGuestsAcknowledgements() {
  GuestProcess guest;
  QVERIFY(startGuest(guest));
  RdpSession session;
  // A hold far longer than the test: nothing but a presentation releases here.
  session.setPacingTiming({500ms, 600s, 2});
  session.setPacing(PacingMode::Panel);
  SessionFrames sessionFrames(session);
  QSignalSpy frames(&sessionFrames, &SessionFrames::frameUpdated);
  QVERIFY(connect(session, guest));
  // The panel presents nothing: each paint is a frame handed to the console (a lease).
  for (int n = 1; n <= 4; ++n)
    QVERIFY(paint(guest, frames, n));
  QTRY_VERIFY_WITH_TIMEOUT(session.pacing().deferred >= 1, 20000);
  RdpSession::PacingState held = session.pacing();
  QVERIFY2(held.handed > held.presented + 2, qPrintable(QString::number(held.handed)));
  // What the reader sent is all the guest has.
  QTRY_COMPARE_WITH_TIMEOUT(acksAtGuest(guest), int(held.acknowledged), 20000);
  // More frames: all held, none reaches the guest.
  for (int n = 5; n <= 7; ++n)
    QVERIFY(paint(guest, frames, n));
  const RdpSession::PacingState more = session.pacing();
  QCOMPARE(more.acknowledged, held.acknowledged);
  QVERIFY2(more.deferred >= held.deferred + 3, qPrintable(QString::number(more.deferred)));
  QCOMPARE(acksAtGuest(guest), int(held.acknowledged));
  // The panel presents what it was handed: every held acknowledgement goes out.
  session.notePresented(more.handed);
  QTRY_COMPARE_WITH_TIMEOUT(session.pacing().deferred, std::size_t(0), 20000);
  const RdpSession::PacingState released = session.pacing();
  QCOMPARE(int(released.acknowledged), int(more.acknowledged + more.deferred));
  QTRY_COMPARE_WITH_TIMEOUT(acksAtGuest(guest), int(released.acknowledged), 20000);
  session.abort();
}

void tst_RdpGfxPacing::atTheLockEverythingHeldGoesOutAndTheSyncCompletes() {
  GuestProcess guest;
  QVERIFY(startGuest(guest));
  RdpSession session;
  // No panel and an interval longer than the test: the paints' acknowledgements stay held.
  session.setPacingTiming({600s, 600s, 2});
  session.setPacing(PacingMode::NoPanel);
  SessionFrames sessionFrames(session);
  QSignalSpy frames(&sessionFrames, &SessionFrames::frameUpdated);
  QVERIFY(connect(session, guest));
  for (int n = 1; n <= 3; ++n)
    QVERIFY(paint(guest, frames, n));
  QTRY_VERIFY_WITH_TIMEOUT(session.pacing().deferred >= 2, 20000);
  const quint32 before = session.pacing().acknowledged;
  // The lock: unpaced, then the guest sync.
  session.setPacing(PacingMode::Unpaced);
  QCOMPARE(session.pacing().deferred, std::size_t(0));
  QVERIFY(session.pacing().acknowledged > before);
  std::optional<Outcome<GuestSync::Result>> sync;
  GuestSync::Timing timing;
  timing.deadline = 10s;
  timing.quiet = 200ms;
  timing.answerWait = 5s;
  session.startGuestSync(timing, [&sync](const Outcome<GuestSync::Result>& r) { sync = r; });
  QTRY_VERIFY_WITH_TIMEOUT(sync.has_value(), 30000);
  QVERIFY2(sync->ok(), qPrintable(sync->ok() ? QString() : sync->failure().toString()));
  QVERIFY(sync->value().answered);
  // Its answer was acknowledged at once, like every frame since the lock.
  QTRY_COMPARE_WITH_TIMEOUT(int(session.pacing().acknowledged), int(session.channelReport().gfxFrames),
                            20000);
  QCOMPARE(session.pacing().deferred, std::size_t(0));
  QTRY_COMPARE_WITH_TIMEOUT(acksAtGuest(guest), int(session.pacing().acknowledged), 20000);
  session.abort();
}

QTEST_GUILESS_MAIN(tst_RdpGfxPacing)
#include "tst_rdpgfxpacing.moc"
