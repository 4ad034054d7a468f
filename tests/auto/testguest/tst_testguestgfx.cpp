// Proves the test guest's GFX mode (issue 20 point 1, README.md next to the guest): RDPGFX over
// drdynvc with lossless caps, frames as GFX surface commands, damage tracking (an unchanged
// desktop sends nothing), Refresh Rect still answered, acknowledgements bound the frames in
// flight, the legacy fallback, and the channel reports (static channels joined, every
// dynamic channel create the guest attempted with the client's answer). Clients: FreeRDP's
// client library in-process (MiniRdpClient) and xfreerdp3 /gfx on an Xvfb display.

#include "GuestProcess.h"
#include "MiniRdpClient.h"

#include <QDeadlineTimer>
#include <QJsonArray>
#include <QProcess>
#include <QStandardPaths>
#include <QtTest>

#include <functional>

namespace {

using Channels = MiniRdpClient::Channels;

constexpr quint32 kMarker = 0x2468ACE1u;
constexpr int kAvcDisabled = 0x20;         // RDPGFX_CAPS_FLAG_AVC_DISABLED (MS-RDPEGFX 2.2.3.3)
constexpr uint32_t kMaxFramesInFlight = 3; // GfxOutput::kMaxFramesInFlight
const char kGfxChannel[] = "Microsoft::Windows::RDS::Graphics";

QStringList guestArgs(const QStringList& extra) {
  return QStringList{QStringLiteral("--port"),     QStringLiteral("0"),       QStringLiteral("--marker"),
                     QStringLiteral("0x2468ace1"), QStringLiteral("--width"), QStringLiteral("640"),
                     QStringLiteral("--height"),   QStringLiteral("480")} +
         extra;
}

// Pumps the client and reads the guest's events until `done` holds; false on timeout or a
// dead connection.
bool pumpUntil(MiniRdpClient& client, GuestProcess& guest, const std::function<bool()>& done,
               int timeoutMs = 20000) {
  QDeadlineTimer deadline(timeoutMs);
  for (;;) {
    guest.poll();
    if (done()) {
      return true;
    }
    if (deadline.hasExpired() || !client.pump(20)) {
      guest.poll();
      return done();
    }
  }
}

QJsonObject lastEvent(const GuestProcess& guest, const QString& name) {
  const QList<QJsonObject> all = guest.events(name);
  return all.isEmpty() ? QJsonObject() : all.last();
}

QList<QJsonObject> dvcResults(const GuestProcess& guest, const QString& name) {
  QList<QJsonObject> out;
  for (const QJsonObject& o : guest.events(QStringLiteral("dvc_create"))) {
    if (o.value(QStringLiteral("name")).toString() == name) {
      out.append(o);
    }
  }
  return out;
}

// Connects `client` to a gfx-mode guest and waits until the GFX surface carries the marker.
bool connectOnGfx(MiniRdpClient& client, GuestProcess& guest) {
  client.setChannels(Channels::DrdynvcAndGfx);
  if (!client.connect(guest.port(), "tester", "throwaway-pw", guest.sha256().toStdString())) {
    return false;
  }
  return pumpUntil(client, guest, [&] {
    return !guest.events(QStringLiteral("gfx_frame")).isEmpty() && client.gfxActive() &&
           client.marker() == std::optional<uint32_t>(kMarker);
  });
}

} // namespace

class TestGuestGfx : public QObject {
  Q_OBJECT

private slots:
  void confirmsLosslessCapsAndSendsFramesAsGfx_data();
  void confirmsLosslessCapsAndSendsFramesAsGfx();
  void sendsOnlyWhatChanged();
  void answersRefreshRectOnGfx();
  void acknowledgementsBoundFramesInFlight();
  void fallsBackToLegacy_data();
  void fallsBackToLegacy();
  void reportsEveryOfferedDynamicChannel();
  void xfreerdpGfxGetsGfxAndIdleSendsNothing();
};

void TestGuestGfx::confirmsLosslessCapsAndSendsFramesAsGfx_data() {
  QTest::addColumn<QString>("codec");
  QTest::newRow("planar") << QStringLiteral("planar");
  QTest::newRow("uncompressed") << QStringLiteral("uncompressed");
}

void TestGuestGfx::confirmsLosslessCapsAndSendsFramesAsGfx() {
  QFETCH(QString, codec);
  GuestProcess guest;
  QVERIFY(guest.start(guestArgs(
      {QStringLiteral("--graphics"), QStringLiteral("gfx"), QStringLiteral("--gfx-codec"), codec})));
  MiniRdpClient client;
  QVERIFY(connectOnGfx(client, guest));

  // The static channels the client asked for (drdynvc among them) and joined: all of them.
  const QJsonObject channels = lastEvent(guest, QStringLiteral("channels"));
  QVERIFY(channels.value(QStringLiteral("names")).toArray().contains(QStringLiteral("drdynvc")));
  QCOMPARE(channels.value(QStringLiteral("joined")).toArray(),
           channels.value(QStringLiteral("names")).toArray());
  QCOMPARE(channels.value(QStringLiteral("gfx")).toBool(), true);

  // RDPGFX was created at the client's answer, caps confirmed without AVC, path reported.
  const QList<QJsonObject> gfxCreate = dvcResults(guest, QString::fromLatin1(kGfxChannel));
  QCOMPARE(gfxCreate.size(), 1);
  QCOMPARE(gfxCreate.first().value(QStringLiteral("result")).toString(), QStringLiteral("opened"));
  const QJsonObject caps = lastEvent(guest, QStringLiteral("gfx_caps"));
  const QString confirmed = caps.value(QStringLiteral("confirmed")).toString();
  QVERIFY2(caps.value(QStringLiteral("advertised")).toArray().contains(confirmed), qPrintable(confirmed));
  QVERIFY2(caps.value(QStringLiteral("flags")).toInt() & kAvcDisabled, qPrintable(confirmed));
  QCOMPARE(caps.value(QStringLiteral("codec")).toString(), codec);
  const QJsonObject graphics = lastEvent(guest, QStringLiteral("graphics"));
  QCOMPARE(graphics.value(QStringLiteral("path")).toString(), QStringLiteral("gfx"));
  QCOMPARE(graphics.value(QStringLiteral("caps")).toString(), confirmed);
  QCOMPARE(graphics.value(QStringLiteral("codec")).toString(), codec);
  QCOMPARE(guest.events(QStringLiteral("graphics")).size(), 1);

  // The first GFX frame is the whole surface (10 x 8 tiles of 64 px: one run per tile row).
  const QJsonObject first = guest.events(QStringLiteral("gfx_frame")).first();
  QCOMPARE(first.value(QStringLiteral("commands")).toInt(), 8);
  QCOMPARE(first.value(QStringLiteral("forced")).toBool(), true);

  // A paint goes out as a GFX frame and reaches the client's GDI; so does input the other way.
  const qsizetype before = guest.events(QStringLiteral("gfx_frame")).size();
  guest.command(R"({"cmd":"paint","x":300,"y":200,"w":40,"h":30,"color":"#00ff00","id":1})");
  QVERIFY(pumpUntil(client, guest, [&] { return client.pixel(310, 210) == 0x00FF00u; }));
  QCOMPARE(guest.events(QStringLiteral("gfx_frame")).size(), before + 1);
  QVERIFY(client.sendKey(0x4000, 0x1E));
  QVERIFY(pumpUntil(client, guest, [&] { return !guest.events(QStringLiteral("input")).isEmpty(); }));
  QCOMPARE(guest.events(QStringLiteral("input")).first().value(QStringLiteral("code")).toInt(), 0x1E);
  QVERIFY(client.sendMouse(0x0800, 123, 45)); // PTR_FLAGS_MOVE
  QVERIFY(pumpUntil(client, guest, [&] { return guest.events(QStringLiteral("input")).size() == 2; }));
  QCOMPARE(guest.events(QStringLiteral("input")).last().value(QStringLiteral("kind")).toString(),
           QStringLiteral("pointer"));

  // Scroll moves the text page: damage frames flow and the marker (outside the page) stays.
  const qsizetype beforeScroll = guest.events(QStringLiteral("gfx_frame")).size();
  guest.command(R"({"cmd":"workload","mode":"scroll"})");
  QVERIFY(pumpUntil(client, guest,
                    [&] { return guest.events(QStringLiteral("gfx_frame")).size() >= beforeScroll + 10; }));
  guest.command(R"({"cmd":"workload","mode":"idle"})");
  QCOMPARE(client.marker(), std::optional<uint32_t>(kMarker));

  // A resize gives a new surface of the new size, the marker intact.
  guest.command(R"({"cmd":"resize","width":800,"height":600})");
  QVERIFY(pumpUntil(client, guest, [&] {
    return guest.events(QStringLiteral("gfx_surface")).size() == 2 && client.width() == 800 &&
           client.marker() == std::optional<uint32_t>(kMarker);
  }));
  QCOMPARE(lastEvent(guest, QStringLiteral("gfx_surface")).value(QStringLiteral("width")).toInt(), 800);
}

void TestGuestGfx::sendsOnlyWhatChanged() {
  GuestProcess guest;
  QVERIFY(guest.start(guestArgs({QStringLiteral("--graphics"), QStringLiteral("gfx")})));
  MiniRdpClient client;
  QVERIFY(connectOnGfx(client, guest));

  // A 20x20 paint inside one 64x64 tile: one frame of one command.
  guest.command(R"({"cmd":"paint","x":330,"y":200,"w":20,"h":20,"color":"#ff0000","id":1})");
  QVERIFY(pumpUntil(client, guest, [&] { return guest.events(QStringLiteral("painted")).size() == 1; }));
  const qsizetype afterFirst = guest.events(QStringLiteral("gfx_frame")).size();
  QCOMPARE(lastEvent(guest, QStringLiteral("gfx_frame")).value(QStringLiteral("commands")).toInt(), 1);

  // The same paint again changes no pixel: no frame at all (the guest sends before it reports).
  guest.command(R"({"cmd":"paint","x":330,"y":200,"w":20,"h":20,"color":"#ff0000","id":2})");
  QVERIFY(pumpUntil(client, guest, [&] { return guest.events(QStringLiteral("painted")).size() == 2; }));
  QCOMPARE(guest.events(QStringLiteral("gfx_frame")).size(), afterFirst);

  // Idle: over a 1.5 s measurement window (not a synchronisation) no frame goes out.
  QVERIFY(client.pump(1500));
  guest.poll();
  QCOMPARE(guest.events(QStringLiteral("gfx_frame")).size(), afterFirst);

  // Typing changes 3 glyph cells (8x12) per tick: each frame carries only the tiles they
  // touch (at most 2 runs per glyph), never the 8-run full surface.
  guest.command(R"({"cmd":"workload","mode":"typing"})");
  QVERIFY(pumpUntil(client, guest,
                    [&] { return guest.events(QStringLiteral("gfx_frame")).size() >= afterFirst + 10; }));
  guest.command(R"({"cmd":"workload","mode":"idle"})");
  const QList<QJsonObject> typing = guest.events(QStringLiteral("gfx_frame")).mid(afterFirst, 10);
  for (const QJsonObject& frame : typing) {
    const int commands = frame.value(QStringLiteral("commands")).toInt();
    QVERIFY2(commands >= 1 && commands <= 6, qPrintable(QString::number(commands)));
    QCOMPARE(frame.value(QStringLiteral("forced")).toBool(), false);
  }
}

void TestGuestGfx::answersRefreshRectOnGfx() {
  GuestProcess guest;
  QVERIFY(guest.start(guestArgs({QStringLiteral("--graphics"), QStringLiteral("gfx")})));
  MiniRdpClient client;
  QVERIFY(connectOnGfx(client, guest));
  const qsizetype before = guest.events(QStringLiteral("gfx_frame")).size();
  // Nothing changed, yet the requested area is resent: 100x100 at (0,0) spans 2x2 tiles.
  QVERIFY(client.sendRefresh(0, 0, 100, 100));
  QVERIFY(pumpUntil(client, guest,
                    [&] { return guest.events(QStringLiteral("gfx_frame")).size() == before + 1; }));
  const QJsonObject frame = lastEvent(guest, QStringLiteral("gfx_frame"));
  QCOMPARE(frame.value(QStringLiteral("forced")).toBool(), true);
  QCOMPARE(frame.value(QStringLiteral("commands")).toInt(), 2);
  QCOMPARE(guest.events(QStringLiteral("refresh")).size(), 1);
}

void TestGuestGfx::acknowledgementsBoundFramesInFlight() {
  GuestProcess guest;
  QVERIFY(guest.start(guestArgs({QStringLiteral("--graphics"), QStringLiteral("gfx")})));
  MiniRdpClient client;
  QVERIFY(connectOnGfx(client, guest));
  guest.command(R"({"cmd":"workload","mode":"motion"})");
  const qsizetype start = guest.events(QStringLiteral("gfx_frame")).size();
  QVERIFY(pumpUntil(client, guest,
                    [&] { return guest.events(QStringLiteral("gfx_frame")).size() >= start + 30; }));
  // The client stops reading (so stops acknowledging): the guest stops within the bound.
  const qsizetype paused = guest.events(QStringLiteral("gfx_frame")).size();
  guest.waitForEvent(QStringLiteral("__no_such_event__"), 1, 1500); // measurement window, no sync
  const qsizetype whilePaused = guest.events(QStringLiteral("gfx_frame")).size() - paused;
  QVERIFY2(whilePaused <= static_cast<qsizetype>(kMaxFramesInFlight),
           qPrintable(QString::number(whilePaused)));
  for (const QJsonObject& frame : guest.events(QStringLiteral("gfx_frame"))) {
    QVERIFY(frame.value(QStringLiteral("in_flight")).toInt() <= static_cast<int>(kMaxFramesInFlight));
  }
  // Reading again resumes the motion.
  QVERIFY(pumpUntil(client, guest, [&] {
    return guest.events(QStringLiteral("gfx_frame")).size() >= paused + whilePaused + 10;
  }));
}

void TestGuestGfx::fallsBackToLegacy_data() {
  QTest::addColumn<QString>("mode");
  QTest::addColumn<int>("channels");
  QTest::addColumn<QString>("reason");
  QTest::newRow("gfx mode, client without channels")
      << QStringLiteral("gfx") << static_cast<int>(Channels::None) << QStringLiteral("no_drdynvc");
  QTest::newRow("gfx mode, drdynvc without GFX")
      << QStringLiteral("gfx") << static_cast<int>(Channels::Drdynvc) << QStringLiteral("client_without_gfx");
  QTest::newRow("gfx mode, client refuses RDPGFX")
      << QStringLiteral("gfx") << static_cast<int>(Channels::GfxWithoutListener)
      << QStringLiteral("rdpgfx_refused");
  QTest::newRow("legacy mode, GFX client")
      << QStringLiteral("legacy") << static_cast<int>(Channels::DrdynvcAndGfx)
      << QStringLiteral("legacy_mode");
}

void TestGuestGfx::fallsBackToLegacy() {
  QFETCH(QString, mode);
  QFETCH(int, channels);
  QFETCH(QString, reason);
  GuestProcess guest;
  QVERIFY(guest.start(guestArgs({QStringLiteral("--graphics"), mode})));
  MiniRdpClient client;
  client.setChannels(static_cast<Channels>(channels));
  QVERIFY(client.connect(guest.port(), "tester", "throwaway-pw", guest.sha256().toStdString()));
  QVERIFY(pumpUntil(client, guest, [&] { return client.marker() == std::optional<uint32_t>(kMarker); }));
  QVERIFY(pumpUntil(client, guest, [&] { return !guest.events(QStringLiteral("graphics")).isEmpty(); }));
  const QJsonObject graphics = lastEvent(guest, QStringLiteral("graphics"));
  QCOMPARE(graphics.value(QStringLiteral("path")).toString(), QStringLiteral("legacy"));
  QCOMPARE(graphics.value(QStringLiteral("reason")).toString(), reason);

  // Frames still flow, as SurfaceBits.
  guest.command(R"({"cmd":"paint","x":300,"y":200,"w":40,"h":30,"color":"#0000ff","id":7})");
  QVERIFY(pumpUntil(client, guest, [&] { return client.pixel(310, 210) == 0x0000FFu; }));
  QVERIFY(!client.gfxActive());
  QVERIFY(guest.events(QStringLiteral("gfx_frame")).isEmpty());
  QVERIFY(guest.events(QStringLiteral("gfx_caps")).isEmpty());
  const QList<QJsonObject> gfxCreate = dvcResults(guest, QString::fromLatin1(kGfxChannel));
  if (reason == QStringLiteral("rdpgfx_refused")) {
    // Offered, and the client's refusal (STATUS_UNSUCCESSFUL) reported.
    QCOMPARE(gfxCreate.size(), 1);
    QCOMPARE(gfxCreate.first().value(QStringLiteral("result")).toString(), QStringLiteral("refused"));
    QCOMPARE(gfxCreate.first().value(QStringLiteral("status")).toString(), QStringLiteral("0xc0000001"));
  } else {
    QVERIFY(gfxCreate.isEmpty());
  }
}

void TestGuestGfx::reportsEveryOfferedDynamicChannel() {
  GuestProcess guest;
  QVERIFY(guest.start(guestArgs({QStringLiteral("--graphics"), QStringLiteral("gfx"),
                                 QStringLiteral("--offer-dvc"), QStringLiteral("ECHO,gc-no-such-channel")})));
  MiniRdpClient client;
  QVERIFY(connectOnGfx(client, guest));
  QVERIFY(pumpUntil(client, guest, [&] {
    return !dvcResults(guest, QStringLiteral("ECHO")).isEmpty() &&
           !dvcResults(guest, QStringLiteral("gc-no-such-channel")).isEmpty();
  }));
  // The client loads echo (MiniRdpClient announces it) and has no listener for the other.
  const QJsonObject echo = dvcResults(guest, QStringLiteral("ECHO")).first();
  QCOMPARE(echo.value(QStringLiteral("result")).toString(), QStringLiteral("opened"));
  QCOMPARE(echo.value(QStringLiteral("status")).toString(), QStringLiteral("0x00000000"));
  const QJsonObject unknown = dvcResults(guest, QStringLiteral("gc-no-such-channel")).first();
  QCOMPARE(unknown.value(QStringLiteral("result")).toString(), QStringLiteral("refused"));
  QCOMPARE(unknown.value(QStringLiteral("status")).toString(), QStringLiteral("0xc0000001"));
  // Every attempt: rdpgfx plus the two offers, each offered once and answered once.
  QCOMPARE(guest.events(QStringLiteral("dvc_offer")).size(), 3);
  QCOMPARE(guest.events(QStringLiteral("dvc_create")).size(), 3);

  // A client without drdynvc: each offer is reported as impossible.
  GuestProcess legacy;
  QVERIFY(legacy.start(guestArgs({QStringLiteral("--offer-dvc"), QStringLiteral("ECHO")})));
  MiniRdpClient plain;
  QVERIFY(plain.connect(legacy.port(), "tester", "throwaway-pw", legacy.sha256().toStdString()));
  QVERIFY(pumpUntil(plain, legacy, [&] { return !dvcResults(legacy, QStringLiteral("ECHO")).isEmpty(); }));
  QCOMPARE(dvcResults(legacy, QStringLiteral("ECHO")).first().value(QStringLiteral("result")).toString(),
           QStringLiteral("no_drdynvc"));
}

void TestGuestGfx::xfreerdpGfxGetsGfxAndIdleSendsNothing() {
  for (const char* tool : {"Xvfb", "xfreerdp3"}) {
    if (QStandardPaths::findExecutable(QString::fromLatin1(tool)).isEmpty()) {
      QSKIP("Xvfb and xfreerdp3 are required");
    }
  }
  QProcess xvfb;
  xvfb.start(QStringLiteral("Xvfb"),
             {QStringLiteral("-displayfd"), QStringLiteral("1"), QStringLiteral("-noreset"),
              QStringLiteral("-screen"), QStringLiteral("0"), QStringLiteral("1024x768x24"),
              QStringLiteral("-nolisten"), QStringLiteral("tcp")});
  QVERIFY(xvfb.waitForStarted());
  QByteArray printed;
  QTRY_VERIFY_WITH_TIMEOUT((printed += xvfb.readAllStandardOutput()).contains('\n'), 20000);
  const QString display = QStringLiteral(":") + QString::fromLatin1(printed.trimmed());

  GuestProcess guest;
  QVERIFY(guest.start(guestArgs({QStringLiteral("--graphics"), QStringLiteral("gfx"),
                                 QStringLiteral("--offer-dvc"), QStringLiteral("gc-no-such-channel")})));
  QProcess client;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert(QStringLiteral("DISPLAY"), display);
  client.setProcessEnvironment(env);
  client.setProcessChannelMode(QProcess::ForwardedChannels);
  // The (throwaway) password goes on stdin, not argv.
  client.start(QStringLiteral("xfreerdp3"),
               {QStringLiteral("/v:127.0.0.1:%1").arg(guest.port()), QStringLiteral("/u:tester"),
                QStringLiteral("/d:"), QStringLiteral("/cert:fingerprint:sha256:") + guest.sha256(),
                QStringLiteral("/gfx"), QStringLiteral("/from-stdin:force"),
                QStringLiteral("/log-level:WARN")});
  QVERIFY(client.waitForStarted());
  client.write("throwaway-pw\n");
  QVERIFY(client.waitForBytesWritten(10000)); // no event loop runs for this QProcess
  QVERIFY(guest.waitForEvent(QStringLiteral("graphics"), 1, 60000));
  QCOMPARE(lastEvent(guest, QStringLiteral("graphics")).value(QStringLiteral("path")).toString(),
           QStringLiteral("gfx"));
  QVERIFY(lastEvent(guest, QStringLiteral("gfx_caps")).value(QStringLiteral("flags")).toInt() & kAvcDisabled);
  QVERIFY(lastEvent(guest, QStringLiteral("channels"))
              .value(QStringLiteral("joined"))
              .toArray()
              .contains(QStringLiteral("drdynvc")));
  QVERIFY(guest.waitForEvent(QStringLiteral("dvc_create"), 2, 30000));
  QCOMPARE(dvcResults(guest, QStringLiteral("gc-no-such-channel"))
               .first()
               .value(QStringLiteral("result"))
               .toString(),
           QStringLiteral("refused"));

  // Idle: no damage frame goes out over a 2 s measurement window (a Refresh Rect the client
  // might send is answered, as "forced"); then a change does.
  QVERIFY(guest.waitForEvent(QStringLiteral("gfx_frame"), 1, 30000));
  const qsizetype idleStart = guest.events(QStringLiteral("gfx_frame")).size();
  guest.waitForEvent(QStringLiteral("__no_such_event__"), 1, 2000); // measurement window, no sync
  for (const QJsonObject& frame : guest.events(QStringLiteral("gfx_frame")).mid(idleStart)) {
    QCOMPARE(frame.value(QStringLiteral("forced")).toBool(), true);
  }
  guest.command(R"({"cmd":"paint","x":300,"y":200,"w":40,"h":30,"color":"#00ff00","id":1})");
  QVERIFY(guest.waitForEvent(QStringLiteral("gfx_frame"), static_cast<int>(idleStart) + 1, 15000));
  guest.command(R"({"cmd":"workload","mode":"motion"})");
  QVERIFY(guest.waitForEvent(QStringLiteral("gfx_frame"), static_cast<int>(idleStart) + 30, 30000));

  client.terminate();
  QVERIFY(guest.waitForEvent(QStringLiteral("client_disconnected"), 1, 30000));
  if (!client.waitForFinished(10000)) {
    client.kill();
    client.waitForFinished(5000);
  }
  xvfb.terminate();
  xvfb.waitForFinished(5000);
}

QTEST_GUILESS_MAIN(TestGuestGfx)
#include "tst_testguestgfx.moc"
