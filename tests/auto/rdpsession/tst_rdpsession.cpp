// RdpSession's pure parts: pointer edge encoding and certificate pinning.
// (The suite against the project's test guest lands once tests/fixtures/testguest exists.)
#include "rdp/CertificatePin.h"
#include "rdp/PointerEncoder.h"
#include "rdp/RdpSession.h"

#include <QTest>

using namespace gc;

namespace {
// MS-RDPBCGR pointer flags (kept literal here so the test does not include FreeRDP).
constexpr quint16 Move = 0x0800, Down = 0x8000, B1 = 0x1000, B2 = 0x2000, B3 = 0x4000, Wheel = 0x0200;

// A self-signed certificate (winpr-makecert3) and its DER SHA-256, computed with
// `openssl x509 -outform der | sha256sum`.
const char kPem[] = "-----BEGIN CERTIFICATE-----\n"
                    "MIIBdTCCARugAwIBAgIUPN0vsTwvyXhwRkMqmDDsG/F3HNMwCgYIKoZIzj0EAwIw\n"
                    "EDEOMAwGA1UEAwwFZ3Vlc3QwHhcNMjUwMTAxMDAwMDAwWhcNMzUwMTAxMDAwMDAw\n"
                    "WjAQMQ4wDAYDVQQDDAVndWVzdDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABEL1\n"
                    "-----END CERTIFICATE-----\n";
} // namespace

class tst_RdpSession : public QObject {
  Q_OBJECT

private slots:
  void encodesPointerEdges_data() {
    QTest::addColumn<int>("previous");
    QTest::addColumn<int>("buttons");
    QTest::addColumn<bool>("moved");
    QTest::addColumn<int>("wheel");
    QTest::addColumn<QList<quint16>>("expected");
    QTest::newRow("plain move") << 0 << 0 << true << 0 << QList<quint16>{Move};
    QTest::newRow("repeat at same spot is still a move") << 0 << 0 << false << 0 << QList<quint16>{Move};
    QTest::newRow("left press at same spot") << 0 << 1 << false << 0 << QList<quint16>{quint16(Down | B1)};
    QTest::newRow("left release") << 1 << 0 << false << 0 << QList<quint16>{B1};
    QTest::newRow("move then right press") << 0 << 2 << true << 0 << QList<quint16>{Move, quint16(Down | B2)};
    QTest::newRow("left release and middle press together")
        << 1 << 4 << false << 0 << QList<quint16>{B1, quint16(Down | B3)};
    QTest::newRow("held button is not re-sent") << 1 << 1 << true << 0 << QList<quint16>{Move};
    QTest::newRow("wheel up") << 0 << 0 << false << 120 << QList<quint16>{quint16(Wheel | 120)};
    QTest::newRow("wheel down is 9-bit two's complement")
        << 0 << 0 << false << -120 << QList<quint16>{quint16(Wheel | 0x0100 | 0x88)};
    QTest::newRow("wheel clamps") << 0 << 0 << false << -1000
                                  << QList<quint16>{quint16(Wheel | 0x0100 | 0x01)};
    QTest::newRow("bits above middle ignored") << 0 << 0xF8 << false << 0 << QList<quint16>{Move};
  }
  void encodesPointerEdges() {
    QFETCH(int, previous);
    QFETCH(int, buttons);
    QFETCH(bool, moved);
    QFETCH(int, wheel);
    QFETCH(QList<quint16>, expected);
    QCOMPARE(PointerEncoder::encode(quint8(previous), quint8(buttons), moved, qint16(wheel)), expected);
  }

  void pinComparisonNeedsExactly32EqualBytes_data() {
    QTest::addColumn<QByteArray>("actual");
    QTest::addColumn<QByteArray>("pin");
    QTest::addColumn<bool>("matches");
    const QByteArray a(32, 'a');
    QByteArray b = a;
    b[31] = 'b';
    QTest::newRow("equal") << a << a << true;
    QTest::newRow("last byte differs") << a << b << false;
    QTest::newRow("empty pin") << a << QByteArray() << false;
    QTest::newRow("short") << a.left(31) << a.left(31) << false;
  }
  void pinComparisonNeedsExactly32EqualBytes() {
    QFETCH(QByteArray, actual);
    QFETCH(QByteArray, pin);
    QFETCH(bool, matches);
    QCOMPARE(CertificatePin::matches(actual, pin), matches);
  }

  void unparsableCertificateHasNoPin() {
    QVERIFY(!CertificatePin::leafSha256FromPem(QByteArrayView("not a certificate")));
    QVERIFY(!CertificatePin::leafSha256FromPem(QByteArrayView(kPem))); // truncated body
  }

  void inputBeforeConnectIsRefused() {
    RdpSession session;
    const Status key = session.sendKey(0x1E, true);
    QVERIFY(!key.ok());
    QCOMPARE(key.code(), Refusal::InputSendFailed);
    QCOMPARE(session.sendKey(0xE048, true).code(), Refusal::InputSendFailed);
    QCOMPARE(session.sendKey(0xE11D, true).code(), Refusal::InputInvalid);
    QCOMPARE(session.sendPointer(1, 1, 0, 0).code(), Refusal::InputSendFailed);
  }
};

QTEST_GUILESS_MAIN(tst_RdpSession)
#include "tst_rdpsession.moc"
