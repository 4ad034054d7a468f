// RdpSession against a guest that sends a Server Redirection PDU (issue 15 point 4): the
// console follows no redirection and opens no second connection, whether the PDU comes
// during the connection sequence (failed()) or in the session (lost()); the close code is
// RDP_REDIRECT_REFUSED and its message carries counts and flags only. ConnectGuard's own
// rule (one connect, to exactly 127.0.0.1 and the granted port) is checked directly too.
// Since issue 24 the PDU is refused by the validating front before FreeRDP reads it.
#include "GuestProcess.h"
#include "SessionRig.h"
#include "rdp/ConnectGuard.h"
#include "rdp/FrontGuard.h"
#include "rdp/RdpSession.h"

#include <QJsonDocument>
#include <QMutex>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace gc;

namespace {

const char kUser[] = "tester";
const char kPassword[] = "Redirect-pw-51e2";
// What the test guest's redirection PDU names or carries (tests/fixtures/testguest):
// none of it may reach a log line or the failure message.
const char* const kGuestSecrets[] = {"192.0.2.1", "gc-redirected-user", "GCREDIRDOM",
                                     "gc-test-redirect-cookie", "gc-test-load-balance"};

QMutex s_logMutex;
QStringList s_log;
void captureMessages(QtMsgType, const QMessageLogContext&, const QString& message) {
  QMutexLocker lock(&s_logMutex);
  s_log.append(message);
  fprintf(stderr, "%s\n", qPrintable(message));
}

} // namespace

class tst_RdpRedirect : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() {
    QVERIFY(m_home.isValid() && m_configDir.isValid());
    m_guestEnv = QProcessEnvironment::systemEnvironment();
    qputenv("HOME", QFile::encodeName(m_home.path()));
    qputenv("XDG_CONFIG_HOME", QFile::encodeName(m_home.path()));
    qInstallMessageHandler(&captureMessages);
  }
  void cleanupTestCase() { qInstallMessageHandler(nullptr); }

  void guardAdmitsTheGrantedPortOnlyAndNothingOnceConnected() {
    ConnectGuard guard;
    guard.allow(QStringLiteral("127.0.0.1"), 40123);
    QVERIFY(!guard.admitConnect("192.0.2.1", 40123));
    QVERIFY(!guard.admitConnect("127.0.0.1", 40124));
    QVERIFY(!guard.admitConnect("127.0.0.2", 40123));
    QVERIFY(!guard.admitConnect("localhost", 40123));
    QVERIFY(!guard.admitConnect("127.0.0.1:40123", 40123));
    QVERIFY(!guard.admitConnect(nullptr, 40123));
    QVERIFY(guard.admitConnect("127.0.0.1", 40123));
    QVERIFY(guard.admitConnect("127.0.0.1", 40123));  // the security negotiation's fallback
    guard.seal();                                     // connected
    QVERIFY(!guard.admitConnect("127.0.0.1", 40123)); // no reconnect once established
    QCOMPARE(guard.connectsAdmitted(), 2);
    QCOMPARE(guard.connectsRefused(), 7);
    QVERIFY(!guard.redirectionRefused());
    ConnectGuard unset; // nothing allowed yet: nothing admitted
    QVERIFY(!unset.admitConnect("127.0.0.1", 0));
  }

  void refusesARedirection_data() {
    QTest::addColumn<QString>("target");
    QTest::addColumn<bool>("duringConnect");
    // 192.0.2.1 is TEST-NET-1: never reached, the guard refuses before a socket exists.
    QTest::newRow("during connect, to 192.0.2.1") << QStringLiteral("192.0.2.1") << true;
    QTest::newRow("during connect, back to 127.0.0.1") << QStringLiteral("127.0.0.1") << true;
    QTest::newRow("in the session, to 192.0.2.1") << QStringLiteral("192.0.2.1") << false;
    QTest::newRow("in the session, back to 127.0.0.1") << QStringLiteral("127.0.0.1") << false;
  }
  void refusesARedirection() {
    QFETCH(QString, target);
    QFETCH(bool, duringConnect);
    GuestProcess guest;
    guest.process().setProcessEnvironment(m_guestEnv);
    QVERIFY(guest.start({QStringLiteral("--port"), QStringLiteral("0")}, QString::fromLatin1(kUser),
                        QString::fromLatin1(kPassword)));
    const QByteArray command =
        QJsonDocument(QJsonObject{{QStringLiteral("cmd"), QStringLiteral("redirect")},
                                  {QStringLiteral("address"), target},
                                  {QStringLiteral("when"),
                                   duringConnect ? QStringLiteral("connect") : QStringLiteral("now")}})
            .toJson(QJsonDocument::Compact);
    if (duringConnect) {
      guest.command(command);
      QVERIFY(guest.waitForEvent(QStringLiteral("redirect_armed")));
    }
    {
      QMutexLocker lock(&s_logMutex);
      s_log.clear();
    }
    const RdpConfig config = sessionrig::loopbackConfig(guest, m_configDir.path(), 20000);
    RdpSession session;
    QSignalSpy connected(&session, &RdpSession::connected);
    QSignalSpy failed(&session, &RdpSession::failed);
    QSignalSpy lost(&session, &RdpSession::lost);
    session.start(config, sessionrig::credentials(kUser, kPassword));
    Failure failure;
    if (duringConnect) {
      QTRY_VERIFY_WITH_TIMEOUT(!failed.isEmpty(), 30000);
      failure = failed.first().first().value<Failure>();
      QCOMPARE(connected.count(), 0);
    } else {
      QTRY_VERIFY_WITH_TIMEOUT(!connected.isEmpty() || !failed.isEmpty(), 30000);
      QVERIFY(failed.isEmpty());
      QVERIFY(guest.waitForEvent(QStringLiteral("activated")));
      guest.command(command);
      QTRY_VERIFY_WITH_TIMEOUT(!lost.isEmpty(), 30000);
      failure = lost.first().first().value<Failure>();
    }
    QVERIFY(guest.waitForEvent(QStringLiteral("redirect_sent")));
    const QJsonObject sent = guest.events(QStringLiteral("redirect_sent")).first();
    QCOMPARE(sent.value(QStringLiteral("during")).toString(),
             duringConnect ? QStringLiteral("connect") : QStringLiteral("session"));
    QCOMPARE(refusalName(failure.code), QStringLiteral("RDP_REDIRECT_REFUSED"));

    // The front refused the PDU as it arrived (issue 24): FreeRDP never read it, so neither
    // its redirect logic nor ConnectGuard's callback (the second line) ever saw the target,
    // and no host name in it was resolved.
    const FrontGuard* front = session.frontGuard();
    QVERIFY(front && front->redirectionRefused());
    QVERIFY(!front->violation());
    // Its flags, and nothing it named, are in the message.
    const QString flags =
        QStringLiteral("flags 0x%1").arg(quint32(sent.value(QStringLiteral("flags")).toInteger()), 0, 16);
    QVERIFY2(failure.message.contains(flags), qPrintable(failure.message));
    const ConnectGuard& guard = session.connectGuard();
    QVERIFY(!guard.redirectionRefused());
    QCOMPARE(guard.redirection().cookieBytes, 0);
    qInfo("redirection refused: %s", qPrintable(failure.message));

    // One TCP connection, ever: the guest saw no second client, the guard admitted one.
    QCOMPARE(guard.connectsAdmitted(), 1);
    QTRY_COMPARE_WITH_TIMEOUT(guest.events(QStringLiteral("client_disconnected")).size(), 1, 15000);
    QCOMPARE(guest.events(QStringLiteral("client_connected")).size(), 1);
    QVERIFY(guest.events(QStringLiteral("client_rejected")).isEmpty());

    // Nothing the PDU named or carried is in the message or any log line.
    QMutexLocker lock(&s_logMutex);
    for (const char* secret : kGuestSecrets) {
      if (target == QLatin1String("127.0.0.1") && QByteArrayView(secret) == "192.0.2.1")
        continue;
      QVERIFY2(!failure.message.contains(QLatin1String(secret)), secret);
      for (const QString& line : std::as_const(s_log))
        QVERIFY2(!line.contains(QLatin1String(secret)), qPrintable(line));
    }
    session.abort();
  }

private:
  QTemporaryDir m_home;
  QTemporaryDir m_configDir;
  QProcessEnvironment m_guestEnv;
};

QTEST_GUILESS_MAIN(tst_RdpRedirect)
#include "tst_rdpredirect.moc"
