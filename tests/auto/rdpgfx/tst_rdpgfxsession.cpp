// The console's own RDPGFX client in a whole session against the project's test guest in its
// GFX mode (tests/fixtures/testguest/README.md): what the panel gets is exactly what the
// guest drew (identity marker, paints) with either lossless codec, and a ResetGraphics to a
// size other than the grant's closes the session with RDP_DESKTOP_MISMATCH from the front
// (issue 24: every size the guest names is judged, before anything is allocated).
#include "GuestProcess.h"
#include "SessionFrames.h"
#include "SessionRig.h"
#include "rdp/RdpSession.h"
#include "testguest/IdentityMarker.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace gc;

namespace {

const char kUser[] = "tester";
const char kPassword[] = "gfx-session-pw-41";
constexpr quint32 kMarker = 0x6f1c0ded;

std::optional<quint32> markerIn(const QImage& frame) {
  if (frame.isNull())
    return std::nullopt;
  return testguest::findMarker(frame.constBits(), int(frame.bytesPerLine()), frame.width(), frame.height());
}

} // namespace

using sessionrig::allPixels;
using sessionrig::lastFrame;

class tst_RdpGfxSession : public QObject {
  Q_OBJECT

private slots:
  void initTestCase();
  void showsWhatTheGuestDrewOverGfx_data();
  void showsWhatTheGuestDrewOverGfx();
  void aResetToAnotherSizeThanTheGrantsClosesWithDesktopMismatch();
  void aResetToTheServersSizeIsFollowedWhenTheGrantSaysSo();

private:
  bool startGuest(GuestProcess& guest, const QStringList& extra);
  RdpConfig config(const GuestProcess& guest) const {
    return sessionrig::loopbackConfig(guest, m_configDir.path());
  }
  bool connect(RdpSession& session, const RdpConfig& config) {
    return sessionrig::connect(session, config, sessionrig::credentials(kUser, kPassword));
  }

  QTemporaryDir m_certDir;
  QTemporaryDir m_configDir;
};

void tst_RdpGfxSession::initTestCase() {
  QVERIFY2(QFile::exists(GuestProcess::binary()), qPrintable(GuestProcess::binary()));
  QVERIFY(m_certDir.isValid() && m_configDir.isValid());
}

bool tst_RdpGfxSession::startGuest(GuestProcess& guest, const QStringList& extra) {
  return guest.start(QStringList{QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--marker"),
                                 QStringLiteral("0x%1").arg(kMarker, 8, 16, QLatin1Char('0')),
                                 QStringLiteral("--cert-dir"), m_certDir.path(), QStringLiteral("--graphics"),
                                 QStringLiteral("gfx")} +
                         extra,
                     QString::fromLatin1(kUser), QString::fromLatin1(kPassword));
}

void tst_RdpGfxSession::showsWhatTheGuestDrewOverGfx_data() {
  QTest::addColumn<QString>("codec");
  QTest::addColumn<QString>("codecName"); // as the channel report names it
  QTest::newRow("planar") << "planar"
                          << "planar";
  QTest::newRow("uncompressed") << "uncompressed"
                                << "uncompressed";
}

void tst_RdpGfxSession::showsWhatTheGuestDrewOverGfx() {
  QFETCH(QString, codec);
  QFETCH(QString, codecName);
  GuestProcess guest;
  QVERIFY(startGuest(guest, {QStringLiteral("--gfx-codec"), codec}));
  RdpSession session;
  SessionFrames sessionFrames(session);
  QSignalSpy frames(&sessionFrames, &SessionFrames::frameUpdated);
  QSignalSpy lost(&session, &RdpSession::lost);
  QVERIFY(connect(session, config(guest)));
  QTRY_VERIFY_WITH_TIMEOUT(session.channelReport().gfxFrames > 0 && markerIn(lastFrame(frames)), 20000);
  QCOMPARE(*markerIn(lastFrame(frames)), kMarker);
  QVERIFY(guest.waitForEvent(QStringLiteral("graphics")));
  QCOMPARE(guest.events(QStringLiteral("graphics")).first().value(QStringLiteral("path")).toString(),
           QStringLiteral("gfx"));
  // Paints the guest sends as GFX surface commands arrive pixel for pixel.
  const struct {
    QRect area;
    QRgb rgb;
  } paints[] = {{QRect(300, 200, 40, 30), 0x12ab34},
                {QRect(517, 333, 1, 1), 0xfe0102},
                {QRect(100, 600, 130, 70), 0x0a0b0c}};
  int id = 0;
  for (const auto& p : paints)
    guest.command(
        QStringLiteral("{\"cmd\":\"paint\",\"x\":%1,\"y\":%2,\"w\":%3,\"h\":%4,\"color\":\"#%5\",\"id\":%6}")
            .arg(p.area.x())
            .arg(p.area.y())
            .arg(p.area.width())
            .arg(p.area.height())
            .arg(p.rgb, 6, 16, QLatin1Char('0'))
            .arg(++id)
            .toLatin1());
  QTRY_VERIFY_WITH_TIMEOUT(
      [&] {
        const QImage f = lastFrame(frames);
        for (const auto& p : paints)
          if (!allPixels(f, p.area, p.rgb))
            return false;
        return true;
      }(),
      20000);
  // Around the paints the guest's own pixels stay (the marker among them).
  QCOMPARE(*markerIn(lastFrame(frames)), kMarker);
  const ChannelReport::Snapshot report = session.channelReport();
  QVERIFY(report.gfxOpened);
  QVERIFY2(report.gfxCodecsUsed.contains(codecName), qPrintable(report.gfxCodecsUsed.join(u',')));
  QVERIFY(report.gfxCapsVersion != 0);
  QCOMPARE(lost.count(), 0);
  session.abort();
}

void tst_RdpGfxSession::aResetToAnotherSizeThanTheGrantsClosesWithDesktopMismatch() {
  GuestProcess guest;
  QVERIFY(startGuest(guest, {}));
  RdpSession session;
  SessionFrames sessionFrames(session);
  QSignalSpy frames(&sessionFrames, &SessionFrames::frameUpdated);
  QSignalSpy lost(&session, &RdpSession::lost);
  RdpConfig c = config(guest);
  c.desktop.width = 1024; // the grant's size, size_from "grant"
  c.desktop.height = 768;
  QVERIFY(connect(session, c));
  QTRY_VERIFY_WITH_TIMEOUT(session.channelReport().gfxFrames > 0 && markerIn(lastFrame(frames)), 20000);
  guest.command("{\"cmd\":\"resize\",\"width\":800,\"height\":600}");
  QTRY_COMPARE_WITH_TIMEOUT(lost.count(), 1, 20000);
  const Failure failure = lost.first().first().value<Failure>();
  QCOMPARE(failure.code, Refusal::RdpDesktopMismatch);
  // The guest resizes with a reactivation, whose Demand Active the core front refuses before
  // the RDPGFX ResetGraphics that would follow (tst_rdpgfx covers that rule on its own).
  QVERIFY2(failure.message == QStringLiteral("rdpgfx.ResetGraphics: desktop size other than the grant's") ||
               failure.message == QStringLiteral("the guest presented 800x600; the grant names 1024x768"),
           qPrintable(failure.message));
}

void tst_RdpGfxSession::aResetToTheServersSizeIsFollowedWhenTheGrantSaysSo() {
  GuestProcess guest;
  QVERIFY(startGuest(guest, {}));
  RdpSession session;
  SessionFrames sessionFrames(session);
  QSignalSpy frames(&sessionFrames, &SessionFrames::frameUpdated);
  QSignalSpy lost(&session, &RdpSession::lost);
  RdpConfig c = config(guest);
  c.desktop.width = 1024;
  c.desktop.height = 768;
  c.sizeFromServer = true; // size_from "server": within the grant's pixel count
  QVERIFY(connect(session, c));
  QTRY_VERIFY_WITH_TIMEOUT(session.channelReport().gfxFrames > 0 && markerIn(lastFrame(frames)), 20000);
  guest.command("{\"cmd\":\"resize\",\"width\":800,\"height\":600}");
  QTRY_VERIFY_WITH_TIMEOUT(
      lastFrame(frames).size() == QSize(800, 600) && markerIn(lastFrame(frames)) == kMarker, 20000);
  QCOMPARE(lost.count(), 0);
  session.abort();
}

QTEST_GUILESS_MAIN(tst_RdpGfxSession)
#include "tst_rdpgfxsession.moc"
