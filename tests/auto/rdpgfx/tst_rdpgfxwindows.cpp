// The console's RDP session (the sandboxed reader, its GFX decoders) on the Windows-shaped
// stream of the test guest (`--graphics windows`: ClearCodec glyphs, bands and subcodecs,
// RemoteFX Progressive with upgrade passes, SurfaceToSurface, SolidFill, the bitmap cache):
// for every workload, frames arrive and, once the guest has sent its last upgrade, the picture
// the session shows is exactly the guest's reference (what it drew for the lossless commands,
// FreeRDP's decode of the same PDUs for progressive).
#include "GuestProcess.h"
#include "SessionFrames.h"
#include "SessionRig.h"
#include "rdp/RdpSession.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace gc;

namespace {

const char kUser[] = "tester";
const char kPassword[] = "windows-stream-pw-7";

// FNV-1a 64 over each pixel's blue, green, red: the guest's windows_reference digest.
QString digestOf(const QImage& frame) {
  const QImage f = frame.convertToFormat(QImage::Format_RGB32);
  quint64 h = 0xcbf29ce484222325ULL;
  for (int y = 0; y < f.height(); ++y) {
    const auto* row = reinterpret_cast<const QRgb*>(f.constScanLine(y));
    for (int x = 0; x < f.width(); ++x) {
      for (const int byte : {qBlue(row[x]), qGreen(row[x]), qRed(row[x])}) {
        h ^= quint64(byte);
        h *= 0x100000001b3ULL;
      }
    }
  }
  return QStringLiteral("%1").arg(h, 16, 16, QLatin1Char('0'));
}

QJsonObject lastEvent(const GuestProcess& guest, const QString& name) {
  const QList<QJsonObject> all = guest.events(name);
  return all.isEmpty() ? QJsonObject() : all.last();
}

qint64 count(const QJsonObject& reference, const char* name) {
  return reference.value(QStringLiteral("counts")).toObject().value(QLatin1String(name)).toInteger();
}

} // namespace

using sessionrig::lastFrame;

class tst_RdpGfxWindows : public QObject {
  Q_OBJECT

private slots:
  void initTestCase();
  void showsTheGuestsReferenceAfterEachWorkload_data();
  void showsTheGuestsReferenceAfterEachWorkload();

private:
  QTemporaryDir m_certDir;
  QTemporaryDir m_configDir;
};

void tst_RdpGfxWindows::initTestCase() {
  QVERIFY2(QFile::exists(GuestProcess::binary()), qPrintable(GuestProcess::binary()));
  QVERIFY(m_certDir.isValid() && m_configDir.isValid());
}

void tst_RdpGfxWindows::showsTheGuestsReferenceAfterEachWorkload_data() {
  QTest::addColumn<QString>("workload");
  QTest::addColumn<QStringList>("commands"); // counted by the guest: each must have been sent
  QTest::newRow("idle") << "idle"
                        << QStringList{"solid_fill",
                                       "clearcodec",
                                       "surface_to_cache",
                                       "cache_to_surface",
                                       "progressive_first_tiles",
                                       "progressive_upgrade_tiles"};
  QTest::newRow("typing") << "typing" << QStringList{"clear_glyph_hit", "cache_to_surface"};
  QTest::newRow("scroll") << "scroll" << QStringList{"surface_to_surface", "progressive_upgrade_tiles"};
  QTest::newRow("drag") << "drag" << QStringList{"surface_to_surface", "solid_fill"};
  QTest::newRow("video") << "video" << QStringList{"progressive_first_tiles", "progressive_upgrade_tiles"};
}

void tst_RdpGfxWindows::showsTheGuestsReferenceAfterEachWorkload() {
  QFETCH(QString, workload);
  QFETCH(QStringList, commands);
  GuestProcess guest;
  QVERIFY(guest.start({QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--cert-dir"),
                       m_certDir.path(), QStringLiteral("--graphics"), QStringLiteral("windows")},
                      QString::fromLatin1(kUser), QString::fromLatin1(kPassword)));
  RdpSession session;
  SessionFrames sessionFrames(session);
  QSignalSpy frames(&sessionFrames, &SessionFrames::frameUpdated);
  QSignalSpy lost(&session, &RdpSession::lost);
  QVERIFY(sessionrig::connect(session, sessionrig::loopbackConfig(guest, m_configDir.path()),
                              sessionrig::credentials(kUser, kPassword)));
  // The first picture, refined to full quality.
  QVERIFY(guest.waitForEvent(QStringLiteral("windows_reference"), 1, 120000));
  const auto matches = [&] {
    guest.poll();
    const QJsonObject reference = lastEvent(guest, QStringLiteral("windows_reference"));
    return !frames.isEmpty() &&
           digestOf(lastFrame(frames)) == reference.value(QStringLiteral("digest")).toString();
  };
  QTRY_VERIFY_WITH_TIMEOUT(matches(), 120000);
  if (workload == QStringLiteral("idle")) {
    // A paint is drawn into the scene and sent as SolidFill; the reference follows it.
    guest.command("{\"cmd\":\"paint\",\"x\":300,\"y\":52,\"w\":32,\"h\":10,\"color\":\"#12ab34\",\"id\":1}");
    QTRY_VERIFY_WITH_TIMEOUT(sessionrig::allPixels(lastFrame(frames), QRect(300, 52, 32, 10), 0x12ab34),
                             20000);
    QVERIFY(guest.waitForEvent(QStringLiteral("windows_reference"), 2, 120000));
    QTRY_VERIFY_WITH_TIMEOUT(matches(), 120000);
  } else {
    const int before = int(guest.events(QStringLiteral("gfx_frame")).size());
    guest.command(QStringLiteral("{\"cmd\":\"workload\",\"mode\":\"%1\"}").arg(workload).toLatin1());
    QVERIFY(guest.waitForEvent(QStringLiteral("gfx_frame"), before + 30, 120000));
    guest.command("{\"cmd\":\"workload\",\"mode\":\"idle\"}");
    QVERIFY(guest.waitForEvent(QStringLiteral("windows_reference"), 2, 120000));
    QTRY_VERIFY_WITH_TIMEOUT(matches(), 120000);
  }
  const QJsonObject reference = lastEvent(guest, QStringLiteral("windows_reference"));
  qInfo("%s: frame %lld, %s", qPrintable(workload), reference.value(QStringLiteral("frame")).toInteger(),
        QJsonDocument(reference.value(QStringLiteral("counts")).toObject())
            .toJson(QJsonDocument::Compact)
            .constData());
  QCOMPARE(reference.value(QStringLiteral("clear_mismatch")).toInteger(), 0);
  QCOMPARE(count(reference, "progressive_decode_failed"), 0);
  for (const QString& c : commands)
    QVERIFY2(count(reference, c.toLatin1().constData()) > 0, qPrintable(c));
  const ChannelReport::Snapshot report = session.channelReport();
  QVERIFY(report.gfxOpened);
  QVERIFY2(report.gfxCodecsUsed.contains(QStringLiteral("clearcodec")) &&
               report.gfxCodecsUsed.contains(QStringLiteral("progressive")),
           qPrintable(report.gfxCodecsUsed.join(u',')));
  QVERIFY(report.gfxFrames >= quint64(reference.value(QStringLiteral("frame")).toInteger()));
  QCOMPARE(lost.count(), 0);
  session.abort();
}

QTEST_GUILESS_MAIN(tst_RdpGfxWindows)
#include "tst_rdpgfxwindows.moc"
