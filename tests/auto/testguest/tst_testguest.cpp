// Proves the test guest fixture honours its documented interface (README.md next to the
// guest): ready line, NLA, certificate pin, loopback-only binding, identity marker, frames
// and input reporting.

#include "GuestProcess.h"
#include "MiniRdpClient.h"
#include "testguest/IdentityMarker.h"

#include <QCryptographicHash>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <turbojpeg.h>

#include <csignal>
#include <vector>

using gc::testguest::drawMarker;
using gc::testguest::findMarker;

namespace {

// Exit codes of `xfreerdp3 +auth-only` in FreeRDP 3.10.
constexpr int kAuthOnlySuccess = 131;
constexpr int kAuthOnlyLogonFailure = 132;
// RDP input flags ([MS-RDPBCGR] 2.2.8.1.1.3.1.1.1 / 2.2.8.1.1.3.1.1.3), as FreeRDP defines them.
constexpr uint16_t kKbdExtended = 0x0100;
constexpr uint16_t kKbdDown = 0x4000;
constexpr uint16_t kKbdRelease = 0x8000;
constexpr uint16_t kPtrMove = 0x0800;

int runAuthOnly(quint16 port, const QString& password, const QString& pin) {
  QProcess client;
  client.setProcessChannelMode(QProcess::MergedChannels);
  client.start(QStringLiteral("/usr/bin/xfreerdp3"),
               {QStringLiteral("/v:127.0.0.1:%1").arg(port), QStringLiteral("/u:tester"),
                QStringLiteral("/p:") + password, QStringLiteral("/cert:fingerprint:sha256:") + pin,
                QStringLiteral("+auth-only")});
  if (!client.waitForFinished(60000)) {
    client.kill();
    client.waitForFinished();
    return -1;
  }
  return client.exitCode();
}

// A noisy synthetic desktop, so the decoder cannot lean on a flat background.
std::vector<uint8_t> syntheticDesktop(int w, int h) {
  std::vector<uint8_t> px(static_cast<size_t>(w) * h * 4);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &px[(static_cast<size_t>(y) * w + x) * 4];
      p[0] = static_cast<uint8_t>(x * 7 + y * 3);
      p[1] = static_cast<uint8_t>(x ^ y);
      p[2] = static_cast<uint8_t>(y * 5);
      p[3] = 0xFF;
    }
  }
  return px;
}

std::vector<uint8_t> jpegRoundTrip(const std::vector<uint8_t>& bgrx, int w, int h, int quality) {
  tjhandle enc = tjInitCompress();
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  const int rc = tjCompress2(enc, bgrx.data(), w, w * 4, h, TJPF_BGRX, &jpeg, &size, TJSAMP_420, quality, 0);
  tjDestroy(enc);
  std::vector<uint8_t> out(bgrx.size());
  if (rc == 0) {
    tjhandle dec = tjInitDecompress();
    tjDecompress2(dec, jpeg, size, out.data(), w, w * 4, h, TJPF_BGRX, 0);
    tjDestroy(dec);
  }
  tjFree(jpeg);
  return out;
}

bool listeningSockets(quint16 port, QStringList& localAddresses) {
  QFile f(QStringLiteral("/proc/net/tcp"));
  if (!f.open(QIODevice::ReadOnly)) {
    return false;
  }
  const QString portHex = QStringLiteral("%1").arg(port, 4, 16, QLatin1Char('0')).toUpper();
  const QList<QByteArray> lines = f.readAll().split('\n');
  for (const QByteArray& line : lines) {
    const QStringList cols = QString::fromLatin1(line).simplified().split(QLatin1Char(' '));
    // sl local_address rem_address st ...; st 0A = LISTEN
    if (cols.size() > 3 && cols[1].endsWith(QLatin1Char(':') + portHex) && cols[3] == QStringLiteral("0A")) {
      localAddresses << cols[1];
    }
  }
  QFile f6(QStringLiteral("/proc/net/tcp6"));
  if (f6.open(QIODevice::ReadOnly)) {
    const QList<QByteArray> lines6 = f6.readAll().split('\n');
    for (const QByteArray& line : lines6) {
      const QStringList cols = QString::fromLatin1(line).simplified().split(QLatin1Char(' '));
      if (cols.size() > 3 && cols[1].endsWith(QLatin1Char(':') + portHex) &&
          cols[3] == QStringLiteral("0A")) {
        localAddresses << cols[1];
      }
    }
  }
  return true;
}

} // namespace

class TestGuest : public QObject {
  Q_OBJECT

private slots:
  void markerSurvivesRoundTrip_data();
  void markerSurvivesRoundTrip();
  void findsNoMarkerWhereThereIsNone();
  void announcesDocumentedReadyLine();
  void refusesNonLoopbackBind();
  void listensOnLoopbackOnly();
  void nlaChecksThePassword_data();
  void nlaChecksThePassword();
  void presentsTheAnnouncedCertificate_data();
  void presentsTheAnnouncedCertificate();
  void certDirSharesOneCertificate();
  void servesFramesWithMarkerAndReportsInput();
  void refusesSecondConcurrentClient();
  void quitsOnStdinEofAndSigterm_data();
  void quitsOnStdinEofAndSigterm();
};

void TestGuest::markerSurvivesRoundTrip_data() {
  QTest::addColumn<quint32>("marker");
  QTest::addColumn<int>("jpegQuality"); // 0 = lossless
  for (const quint32 m : {0x00000000u, 0xFFFFFFFFu, 0xCAFEBABEu, 0x80000001u, 0x6C5A7E57u}) {
    for (const int q : {0, 70, 90}) {
      QTest::addRow("%08x-q%d", m, q) << m << q;
    }
  }
}

void TestGuest::markerSurvivesRoundTrip() {
  QFETCH(quint32, marker);
  QFETCH(int, jpegQuality);
  const int w = 320;
  const int h = 200;
  std::vector<uint8_t> px = syntheticDesktop(w, h);
  drawMarker(px.data(), w * 4, w, h, marker);
  if (jpegQuality > 0) {
    px = jpegRoundTrip(px, w, h, jpegQuality);
  }
  const auto found = findMarker(px.data(), w * 4, w, h);
  QVERIFY(found.has_value());
  QCOMPARE(*found, marker);
}

void TestGuest::findsNoMarkerWhereThereIsNone() {
  const int w = 320;
  const int h = 200;
  std::vector<uint8_t> px = syntheticDesktop(w, h);
  QVERIFY(!findMarker(px.data(), w * 4, w, h).has_value());
  // Too small to hold one.
  QVERIFY(!findMarker(px.data(), 40 * 4, 40, 20).has_value());
}

void TestGuest::announcesDocumentedReadyLine() {
  GuestProcess guest;
  QVERIFY(guest.start({QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--width"),
                       QStringLiteral("800"), QStringLiteral("--height"), QStringLiteral("600"),
                       QStringLiteral("--marker"), QStringLiteral("0xCAFEBABE")}));
  const QJsonObject ready = guest.ready();
  QVERIFY(ready.value(QStringLiteral("port")).toInt() > 0);
  QVERIFY(QRegularExpression(QStringLiteral("^[0-9a-f]{64}$")).match(guest.sha256()).hasMatch());
  QCOMPARE(ready.value(QStringLiteral("marker")).toString(), QStringLiteral("0xcafebabe"));
  QCOMPARE(ready.value(QStringLiteral("width")).toInt(), 800);
  QCOMPARE(ready.value(QStringLiteral("height")).toInt(), 600);
}

void TestGuest::refusesNonLoopbackBind() {
  QProcess p;
  p.start(GuestProcess::binary(), {QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--bind"),
                                   QStringLiteral("0.0.0.0")});
  QVERIFY(p.waitForFinished(10000));
  QCOMPARE(p.exitCode(), 2);
  QVERIFY(p.readAllStandardOutput().isEmpty()); // no ready line
}

void TestGuest::listensOnLoopbackOnly() {
  GuestProcess guest;
  QVERIFY(guest.start({QStringLiteral("--port"), QStringLiteral("0")}));
  QStringList addresses;
  QVERIFY(listeningSockets(guest.port(), addresses));
  QCOMPARE(addresses.size(), 1);
  QVERIFY2(addresses.first().startsWith(QStringLiteral("0100007F:")), qPrintable(addresses.join(',')));
}

void TestGuest::nlaChecksThePassword_data() {
  QTest::addColumn<QString>("password");
  QTest::addColumn<int>("exitCode");
  QTest::addColumn<bool>("authFailed");
  QTest::newRow("right password") << QStringLiteral("throwaway-pw") << kAuthOnlySuccess << false;
  QTest::newRow("wrong password") << QStringLiteral("not-the-pw") << kAuthOnlyLogonFailure << true;
}

void TestGuest::nlaChecksThePassword() {
  QFETCH(QString, password);
  QFETCH(int, exitCode);
  QFETCH(bool, authFailed);
  GuestProcess guest;
  QVERIFY(guest.start({QStringLiteral("--port"), QStringLiteral("0")}));
  QCOMPARE(runAuthOnly(guest.port(), password, guest.sha256()), exitCode);
  QVERIFY(guest.waitForEvent(QStringLiteral("client_disconnected")));
  QCOMPARE(guest.events(QStringLiteral("auth_failed")).size(), authFailed ? 1 : 0);
}

void TestGuest::presentsTheAnnouncedCertificate_data() {
  QTest::addColumn<bool>("pinAnnounced");
  QTest::newRow("announced pin accepted") << true;
  QTest::newRow("other pin rejected") << false;
}

void TestGuest::presentsTheAnnouncedCertificate() {
  QFETCH(bool, pinAnnounced);
  GuestProcess guest;
  QVERIFY(guest.start({QStringLiteral("--port"), QStringLiteral("0")}));
  const QString other =
      QString::fromLatin1(QCryptographicHash::hash("other", QCryptographicHash::Sha256).toHex());
  const int rc =
      runAuthOnly(guest.port(), QStringLiteral("throwaway-pw"), pinAnnounced ? guest.sha256() : other);
  if (pinAnnounced) {
    QCOMPARE(rc, kAuthOnlySuccess);
  } else {
    QVERIFY2(rc != kAuthOnlySuccess && rc != kAuthOnlyLogonFailure, qPrintable(QString::number(rc)));
    QVERIFY(guest.waitForEvent(QStringLiteral("client_disconnected")));
    QVERIFY(guest.events(QStringLiteral("auth_failed")).isEmpty()); // a pin rejection is no logon failure
  }
}

void TestGuest::certDirSharesOneCertificate() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  GuestProcess first;
  QVERIFY(
      first.start({QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--cert-dir"), dir.path()}));
  GuestProcess second;
  QVERIFY(second.start(
      {QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--cert-dir"), dir.path()}));
  GuestProcess fresh;
  QVERIFY(fresh.start({QStringLiteral("--port"), QStringLiteral("0")}));
  QCOMPARE(second.sha256(), first.sha256());
  QVERIFY(fresh.sha256() != first.sha256());
  QCOMPARE(QFile::permissions(dir.filePath(QStringLiteral("key.pem"))),
           QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadUser | QFileDevice::WriteUser);
  // The second guest really presents the shared certificate.
  QCOMPARE(runAuthOnly(second.port(), QStringLiteral("throwaway-pw"), first.sha256()), kAuthOnlySuccess);
}

void TestGuest::servesFramesWithMarkerAndReportsInput() {
  GuestProcess guest;
  QVERIFY(guest.start({QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--marker"),
                       QStringLiteral("0x12345678"), QStringLiteral("--width"), QStringLiteral("640"),
                       QStringLiteral("--height"), QStringLiteral("480")}));
  MiniRdpClient client;
  QVERIFY(client.connect(guest.port(), "tester", "throwaway-pw", guest.sha256().toStdString()));
  QVERIFY(guest.waitForEvent(QStringLiteral("activated")));
  QCOMPARE(guest.events(QStringLiteral("channels")).size(), 1);
  for (int i = 0; i < 100 && client.marker() != std::optional<uint32_t>(0x12345678u); ++i) {
    QVERIFY(client.pump(50));
  }
  QCOMPARE(client.marker(), std::optional<uint32_t>(0x12345678u));
  QCOMPARE(client.width(), 640);
  QCOMPARE(client.height(), 480);

  // A painted rectangle arrives, and the guest says when it sent it.
  guest.command("{\"cmd\":\"paint\",\"x\":300,\"y\":200,\"w\":40,\"h\":30,\"color\":\"#00ff00\",\"id\":42}");
  QVERIFY(guest.waitForEvent(QStringLiteral("painted")));
  QCOMPARE(guest.events(QStringLiteral("painted")).first().value(QStringLiteral("id")).toInt(), 42);
  for (int i = 0; i < 100 && client.pixel(310, 210) != 0x00FF00u; ++i) {
    QVERIFY(client.pump(50));
  }
  QCOMPARE(client.pixel(310, 210), 0x00FF00u);

  // Every input event is reported, in order, numbered, with the extended bit folded in.
  const int before = static_cast<int>(guest.events(QStringLiteral("input")).size());
  QVERIFY(client.sendKey(kKbdDown, 0x1E));
  QVERIFY(client.sendKey(kKbdRelease, 0x1E));
  QVERIFY(client.sendKey(kKbdDown | kKbdExtended, 0x48));
  QVERIFY(client.sendMouse(kPtrMove, 123, 45));
  for (int i = 0; i < 100 && !guest.waitForEvent(QStringLiteral("input"), before + 4, 10); ++i) {
    QVERIFY(client.pump(50));
  }
  QVERIFY(guest.waitForEvent(QStringLiteral("input"), before + 4, 10));
  const QList<QJsonObject> input = guest.events(QStringLiteral("input")).mid(before);
  QCOMPARE(input[0].value(QStringLiteral("kind")).toString(), QStringLiteral("key"));
  QCOMPARE(input[0].value(QStringLiteral("code")).toInt(), 0x1E);
  QCOMPARE(input[1].value(QStringLiteral("flags")).toInt(), kKbdRelease);
  QCOMPARE(input[2].value(QStringLiteral("code")).toInt(), 0xE048);
  QCOMPARE(input[3].value(QStringLiteral("kind")).toString(), QStringLiteral("pointer"));
  QCOMPARE(input[3].value(QStringLiteral("x")).toInt(), 123);
  QCOMPARE(input[3].value(QStringLiteral("y")).toInt(), 45);
  for (int i = 1; i < input.size(); ++i) {
    QCOMPARE(input[i].value(QStringLiteral("n")).toInteger(),
             input[i - 1].value(QStringLiteral("n")).toInteger() + 1);
    QVERIFY(input[i].value(QStringLiteral("t_ns")).toInteger() >=
            input[i - 1].value(QStringLiteral("t_ns")).toInteger());
  }

  // Motion keeps the marker intact; a server-side resize reaches the client.
  guest.command("{\"cmd\":\"workload\",\"mode\":\"motion\"}");
  QVERIFY(client.pump(500));
  QCOMPARE(client.marker(), std::optional<uint32_t>(0x12345678u));
  guest.command("{\"cmd\":\"resize\",\"width\":800,\"height\":600}");
  // The reactivation needs the client's answer: keep pumping it while waiting.
  for (int i = 0; i < 200 && !guest.waitForEvent(QStringLiteral("activated"), 2, 10); ++i) {
    QVERIFY(client.pump(50));
  }
  QCOMPARE(guest.events(QStringLiteral("activated")).size(), 2);
  for (int i = 0; i < 100 && client.width() != 800; ++i) {
    QVERIFY(client.pump(50));
  }
  QCOMPARE(client.width(), 800);
  QCOMPARE(client.height(), 600);
  QVERIFY(client.pump(300));
  QCOMPARE(client.marker(), std::optional<uint32_t>(0x12345678u));

  guest.command("{\"cmd\":\"disconnect\"}");
  for (int i = 0; i < 100 && !guest.waitForEvent(QStringLiteral("client_disconnected"), 1, 10); ++i) {
    client.pump(50); // turns false once the guest has hung up
  }
  QCOMPARE(guest.events(QStringLiteral("client_disconnected")).size(), 1);
  QCOMPARE(
      guest.events(QStringLiteral("client_disconnected")).first().value(QStringLiteral("reason")).toString(),
      QStringLiteral("disconnect_command"));
}

void TestGuest::refusesSecondConcurrentClient() {
  GuestProcess guest;
  QVERIFY(guest.start({QStringLiteral("--port"), QStringLiteral("0")}));
  MiniRdpClient first;
  QVERIFY(first.connect(guest.port(), "tester", "throwaway-pw", guest.sha256().toStdString()));
  QVERIFY(guest.waitForEvent(QStringLiteral("activated")));
  QCOMPARE(runAuthOnly(guest.port(), QStringLiteral("throwaway-pw"), guest.sha256()) == kAuthOnlySuccess,
           false);
  QVERIFY(guest.waitForEvent(QStringLiteral("client_rejected")));
  QVERIFY(first.pump(200)); // the first session is untouched
  QCOMPARE(guest.events(QStringLiteral("client_disconnected")).size(), 0);
}

void TestGuest::quitsOnStdinEofAndSigterm_data() {
  QTest::addColumn<bool>("viaSignal");
  QTest::newRow("stdin EOF") << false;
  QTest::newRow("SIGTERM") << true;
}

void TestGuest::quitsOnStdinEofAndSigterm() {
  QFETCH(bool, viaSignal);
  GuestProcess guest;
  QVERIFY(guest.start({QStringLiteral("--port"), QStringLiteral("0")}));
  if (viaSignal) {
    guest.process().terminate();
  } else {
    guest.process().closeWriteChannel();
  }
  QVERIFY(guest.process().waitForFinished(10000));
  QCOMPARE(guest.process().exitStatus(), QProcess::NormalExit);
  QCOMPARE(guest.process().exitCode(), 0);
}

QTEST_GUILESS_MAIN(TestGuest)
#include "tst_testguest.moc"
