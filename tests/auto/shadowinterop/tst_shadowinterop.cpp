// RdpSession and CertificateProbe against a real FreeRDP server: freerdp-shadow-cli3
// sharing an Xvfb display, NLA with a throwaway SAM account.
#include "SessionFrames.h"
#include "rdp/CertificatePin.h"
#include "rdp/CertificateProbe.h"
#include "rdp/PointerEncoder.h"
#include "rdp/RdpSession.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QMutex>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <optional>

using namespace gc;

namespace {

// Throwaway account; the password doubles as the log sentinel.
const char kUser[] = "gcuser";
const char kPassword[] = "Sh4dow-pass";
// winpr-hash3 -u gcuser -p Sh4dow-pass -f sam
const char kSamLine[] = "gcuser:::b9c67ed32370b5c250c541016714c0d9:::\n";

QMutex s_logMutex;
QStringList s_log;
void captureMessages(QtMsgType, const QMessageLogContext&, const QString& message) {
  QMutexLocker lock(&s_logMutex);
  s_log.append(message);
  fprintf(stderr, "%s\n", qPrintable(message));
}

quint16 freePort() {
  QTcpServer server;
  server.listen(QHostAddress::LocalHost, 0);
  return server.serverPort();
}

RdpCredentials credentials(const char* user, const char* password) {
  return {SecureBuffer::copyOf(user).value(), SecureBuffer::copyOf(password).value(), SecureBuffer()};
}

// One guest sync to its outcome: the session's own, or DRAIN_TIMEOUT when none came within
// `waitMs` (far beyond the timing's deadline: the sync itself must end first).
Outcome<GuestSync::Result> syncOnce(RdpSession& session, const GuestSync::Timing& timing,
                                    int waitMs = 30000) {
  std::optional<Outcome<GuestSync::Result>> sync;
  session.startGuestSync(timing, [&sync](const Outcome<GuestSync::Result>& r) { sync = r; });
  if (!QTest::qWaitFor([&] { return sync.has_value(); }, waitMs))
    return Failure{Refusal::DrainTimeout, QStringLiteral("no outcome")};
  return *sync;
}

} // namespace

class tst_ShadowInterop : public QObject {
  Q_OBJECT

private slots:
  void initTestCase();
  void cleanupTestCase();
  void init();
  void cleanup();

  void probeLearnsThePinWithoutCredentials();
  void probeRefusesAWrongPin();
  void connectsWithThePinAndReceivesFrames();
  void opensTheGraphicsPipelineAndSyncsOverIt();
  void syncsOnTheLegacyPathWithoutTheGraphicsPipeline();
  void aFrozenServerAnswersNoRung_data();
  void aFrozenServerAnswersNoRung();
  void pointerMoveReachesTheDisplay();
  void refusesAWrongPinBeforeAnyCredentialPdu();
  void wrongPasswordIsAuthFailed();
  void refusesANonLoopbackHost();
  void unreachablePortIsRdpUnreachable();
  void abortDuringConnectReturnsQuickly_data();
  void abortDuringConnectReturnsQuickly();
  void abortAfterConnectEmitsClosed();
  void serverDeathIsLostWithinOneSecond();

private:
  bool startShadow(const QStringList& extra = {});
  void stopShadow();
  RdpConfig config(QByteArray pin) const {
    RdpConfig c;
    c.host = QStringLiteral("127.0.0.1");
    c.port = m_port;
    c.pinSha256 = std::move(pin);
    c.configDir = m_configDir->path();
    c.connectTimeoutMs = 10000;
    return c;
  }
  void connectSession(RdpSession& session);

  QTemporaryDir m_home;
  std::unique_ptr<QTemporaryDir> m_configDir;
  QProcess m_xvfb;
  QProcess m_shadow;
  QString m_display;
  quint16 m_port = 0;
  QByteArray m_pin;
};

void tst_ShadowInterop::initTestCase() {
  for (const char* tool : {"Xvfb", "freerdp-shadow-cli3", "xdotool"})
    if (QStandardPaths::findExecutable(QString::fromLatin1(tool)).isEmpty())
      QSKIP("Xvfb, freerdp-shadow-cli3 and xdotool are required");
  QVERIFY(m_home.isValid());
  // Xvfb picks a free display itself and prints its number once it accepts connections
  // (-displayfd): no race with another X server started at the same time. -noreset: by default
  // the server resets whenever its last client leaves (an xdotool call, a stopped shadow server)
  // and refuses connections meanwhile, which made the next shadow server exit with "failed to
  // open display".
  m_xvfb.start(QStringLiteral("Xvfb"),
               {QStringLiteral("-displayfd"), QStringLiteral("1"), QStringLiteral("-noreset"),
                QStringLiteral("-screen"), QStringLiteral("0"), QStringLiteral("800x600x24"),
                QStringLiteral("-nolisten"), QStringLiteral("tcp")});
  QVERIFY(m_xvfb.waitForStarted());
  QByteArray printed;
  QTRY_VERIFY_WITH_TIMEOUT((printed += m_xvfb.readAllStandardOutput()).contains('\n'), 20000);
  bool numeric = false;
  const int display = printed.trimmed().toInt(&numeric);
  QVERIFY2(numeric, printed.constData());
  m_display = QStringLiteral(":%1").arg(display);
  QFile sam(m_home.filePath(QStringLiteral("SAM")));
  QVERIFY(sam.open(QIODevice::WriteOnly));
  sam.write(kSamLine);
  sam.close();
  QVERIFY(startShadow());
  // The shadow server generates its certificate under $XDG_CONFIG_HOME/freerdp/shadow.
  QFile crt(m_home.filePath(QStringLiteral("freerdp/shadow/shadow.crt")));
  QVERIFY2(crt.open(QIODevice::ReadOnly), qPrintable(crt.fileName()));
  const auto pin = CertificatePin::leafSha256FromPem(crt.readAll());
  QVERIFY(pin);
  m_pin = *pin;
  qInstallMessageHandler(&captureMessages);
}

void tst_ShadowInterop::cleanupTestCase() {
  qInstallMessageHandler(nullptr);
  stopShadow();
  if (m_xvfb.state() != QProcess::NotRunning) {
    m_xvfb.terminate();
    m_xvfb.waitForFinished(5000);
  }
  QMutexLocker lock(&s_logMutex);
  for (const QString& line : std::as_const(s_log))
    QVERIFY2(!line.contains(QLatin1String(kPassword)), "the password reached a log line");
}

void tst_ShadowInterop::init() {
  m_configDir = std::make_unique<QTemporaryDir>();
  QVERIFY(m_configDir->isValid());
  if (m_shadow.state() == QProcess::NotRunning)
    QVERIFY(startShadow());
}

void tst_ShadowInterop::cleanup() {
  // FreeRDP must not have written anything (known_hosts, caches, dumps) to its config dir.
  const QStringList written =
      QDir(m_configDir->path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden);
  QVERIFY2(written.isEmpty(), qPrintable(written.join(u',')));
}

bool tst_ShadowInterop::startShadow(const QStringList& extra) {
  // The port comes from a probe socket that is closed again, so a test running in parallel can
  // take it before the server binds; the server then exits. Such a start is retried on a new
  // port; whatever the server printed is kept for the failure message.
  const QString errors = m_home.filePath(QStringLiteral("shadow.stderr"));
  for (int attempt = 1; attempt <= 3; ++attempt) {
    m_port = freePort();
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("DISPLAY"), m_display);
    env.insert(QStringLiteral("HOME"), m_home.path());
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), m_home.path());
    m_shadow.setProcessEnvironment(env);
    m_shadow.setStandardErrorFile(errors); // its own (expected) errors; no secret reaches it
    m_shadow.setStandardOutputFile(QProcess::nullDevice());
    const QStringList args =
        QStringList{QStringLiteral("/bind-address:127.0.0.1"), QStringLiteral("/port:%1").arg(m_port),
                    QStringLiteral("/sam-file:%1").arg(m_home.filePath(QStringLiteral("SAM"))),
                    QStringLiteral("/log-level:ERROR")} +
        extra;
    m_shadow.start(QStringLiteral("freerdp-shadow-cli3"), args);
    if (!m_shadow.waitForStarted()) {
      qWarning("freerdp-shadow-cli3 did not start: %s", qPrintable(m_shadow.errorString()));
      return false;
    }
    QElapsedTimer t;
    t.start();
    // Polling a child process's startup (its listening port), not synchronising our own code;
    // the bound is generous because the first start generates the server's key pair.
    while (t.elapsed() < 30000 && m_shadow.state() == QProcess::Running) {
      QTcpSocket probe;
      probe.connectToHost(QHostAddress::LocalHost, m_port);
      if (probe.waitForConnected(200))
        return true;
      m_shadow.waitForFinished(50);
    }
    QFile printed(errors);
    const QByteArray tail = printed.open(QIODevice::ReadOnly) ? printed.readAll().right(2000) : QByteArray();
    qWarning("freerdp-shadow-cli3 attempt %d on port %u: %s after %lld ms; it printed:\n%s", attempt,
             unsigned(m_port),
             m_shadow.state() == QProcess::Running
                 ? "not listening"
                 : qPrintable(QStringLiteral("exited (status %1)").arg(m_shadow.exitCode())),
             qint64(t.elapsed()), tail.constData());
    stopShadow();
  }
  return false;
}

void tst_ShadowInterop::stopShadow() {
  if (m_shadow.state() != QProcess::NotRunning) {
    m_shadow.kill();
    m_shadow.waitForFinished(5000);
  }
}

void tst_ShadowInterop::connectSession(RdpSession& session) {
  QSignalSpy connected(&session, &RdpSession::connected);
  QSignalSpy failed(&session, &RdpSession::failed);
  session.start(config(m_pin), credentials(kUser, kPassword));
  QTRY_VERIFY_WITH_TIMEOUT(connected.count() == 1 || failed.count() == 1, 15000);
  if (!failed.isEmpty())
    QFAIL(qPrintable(failed.first().first().value<Failure>().toString()));
}

void tst_ShadowInterop::probeLearnsThePinWithoutCredentials() {
  const auto learned =
      CertificateProbe::probe(QStringLiteral("127.0.0.1"), m_port, {}, 5000, m_configDir->path());
  QVERIFY2(learned.ok(), learned.ok() ? "" : qPrintable(learned.failure().toString()));
  QCOMPARE(learned.value(), m_pin);
  const auto pinned =
      CertificateProbe::probe(QStringLiteral("127.0.0.1"), m_port, m_pin, 5000, m_configDir->path());
  QVERIFY(pinned.ok());
}

void tst_ShadowInterop::probeRefusesAWrongPin() {
  QByteArray wrong = m_pin;
  wrong[0] = char(wrong[0] ^ 0x01);
  const auto outcome =
      CertificateProbe::probe(QStringLiteral("127.0.0.1"), m_port, wrong, 5000, m_configDir->path());
  QVERIFY(!outcome.ok());
  QCOMPARE(outcome.code(), Refusal::GuestCertMismatch);
}

void tst_ShadowInterop::connectsWithThePinAndReceivesFrames() {
  RdpSession session;
  SessionFrames sessionFrames(session);
  QSignalSpy frames(&sessionFrames, &SessionFrames::frameUpdated);
  connectSession(session);
  QTRY_VERIFY_WITH_TIMEOUT(!frames.isEmpty(), 10000);
  const auto update = frames.last().first().value<FrameUpdate>();
  QCOMPARE(update.frame.size(), QSize(800, 600));
  QVERIFY(!update.dirty.isEmpty());
  QVERIFY(update.serial >= 1);
  const auto trace = session.connectTrace();
  QVERIFY(trace.certificateChecked && trace.certificateAccepted);
  // Only the X.224 connection request precedes the certificate decision.
  QCOMPARE(trace.pdusBeforeCertificate, 1);
  QVERIFY(trace.pdusAfterCertificate > 0);
}

// freerdp-shadow-cli3 offers RDPGFX: the session opens it over drdynvc (the only static
// channel), the GDI decodes it into the same frames, and the lock's guest sync is confirmed
// by the guest: shadow answers neither Refresh Rect nor Suppress Output, but the
// CapsAdvertise sent again (gfx_caps), then resets the graphics and repaints. The next lock
// skips the rungs that went unanswered, and the picture keeps coming after each.
void tst_ShadowInterop::opensTheGraphicsPipelineAndSyncsOverIt() {
  RdpSession session;
  SessionFrames sessionFrames(session);
  QSignalSpy frames(&sessionFrames, &SessionFrames::frameUpdated);
  connectSession(session);
  QTRY_VERIFY_WITH_TIMEOUT(session.channelReport().gfxFrames > 0 && !frames.isEmpty(), 15000);
  QCOMPARE(frames.last().first().value<FrameUpdate>().frame.size(), QSize(800, 600));
  GuestSync::Timing timing;
  timing.deadline = std::chrono::milliseconds(10000);
  timing.quiet = std::chrono::milliseconds(300);
  timing.answerWait = std::chrono::milliseconds(1500);
  const quint64 framesBeforeSync = session.channelReport().gfxFrames;
  const Outcome<GuestSync::Result> sync = syncOnce(session, timing);
  QVERIFY2(sync.ok(), sync.ok() ? "" : qPrintable(sync.failure().toString()));
  qInfo("FIGURE guest sync over GFX: by %s, asked %d, answered %d settled %d in %lld ms (answer %lld ms)",
        qPrintable(GuestSync::confirmationName(sync->confirmedBy)), int(sync->rungsAsked),
        int(sync->answered), int(sync->settled), sync->elapsedMs, sync->answerMs);
  QVERIFY(sync->answered);
  QCOMPARE(GuestSync::confirmationName(sync->confirmedBy), QStringLiteral("gfx_caps"));
  QVERIFY(sync->rungsAsked & syncRungBit(SyncConfirmation::GfxCaps));
  // After the CapsConfirm shadow resets the graphics and creates its surface again: the
  // session stays whole and frames keep coming.
  const quint64 framesAfterSync = session.channelReport().gfxFrames;
  QTRY_VERIFY_WITH_TIMEOUT(session.channelReport().gfxFrames > framesAfterSync, 15000);
  QCOMPARE(session.state(), RdpSession::State::Connected);

  const Outcome<GuestSync::Result> again = syncOnce(session, timing);
  QVERIFY2(again.ok(), again.ok() ? "" : qPrintable(again.failure().toString()));
  qInfo("FIGURE guest sync over GFX, next lock: by %s, asked %d, skipped %d in %lld ms (answer %lld ms)",
        qPrintable(GuestSync::confirmationName(again->confirmedBy)), int(again->rungsAsked),
        int(again->rungsSkipped), again->elapsedMs, again->answerMs);
  QCOMPARE(GuestSync::confirmationName(again->confirmedBy), QStringLiteral("gfx_caps"));
  QCOMPARE(int(again->rungsAsked), int(syncRungBit(SyncConfirmation::GfxCaps)));
  QCOMPARE(int(again->rungsSkipped), int(sync->rungsAsked & ~syncRungBit(SyncConfirmation::GfxCaps)));
  session.abort();
  const ChannelReport::Snapshot report = session.channelReport();
  qInfo("channels: %s", QJsonDocument(report.closedJson()).toJson(QJsonDocument::Compact).constData());
  QCOMPARE(report.staticRequested, QStringList{QStringLiteral("drdynvc")});
  QCOMPARE(report.staticJoined, QStringList{QStringLiteral("drdynvc")});
  QVERIFY(report.gfxOpened);
  QCOMPARE(report.dynamicOpened, QStringList{QStringLiteral("Microsoft::Windows::RDS::Graphics")});
  QVERIFY(report.gfxCapsVersion != 0);
  QVERIFY(report.gfxFrames >= framesBeforeSync);
  QVERIFY(!report.gfxCodecsUsed.isEmpty());
  for (const QString& codec : report.gfxCodecsUsed)
    QVERIFY2(!codec.startsWith(QStringLiteral("avc")), qPrintable(codec));
  QCOMPARE(report.closedJson().value(QStringLiteral("gfx")).toBool(), true);
}

// freerdp-shadow-cli3 without RDPGFX (-gfx) sends legacy bitmap updates, and there its
// Refresh Rect handler marks the area invalid and repaints it: the lock is confirmed by the
// first rung, which the graphics pipeline's encoder never answers.
void tst_ShadowInterop::syncsOnTheLegacyPathWithoutTheGraphicsPipeline() {
  stopShadow();
  QVERIFY(startShadow({QStringLiteral("-gfx")}));
  RdpSession session;
  SessionFrames sessionFrames(session);
  QSignalSpy frames(&sessionFrames, &SessionFrames::frameUpdated);
  connectSession(session);
  QTRY_VERIFY_WITH_TIMEOUT(!frames.isEmpty(), 15000);
  QVERIFY(!session.channelReport().gfxOpened);
  GuestSync::Timing timing;
  timing.deadline = std::chrono::milliseconds(10000);
  timing.answerWait = std::chrono::milliseconds(1500);
  timing.mayRestartGraphics = true;
  QStringList by;
  for (int lock = 0; lock < 2; ++lock) {
    const Outcome<GuestSync::Result> sync = syncOnce(session, timing);
    QVERIFY2(sync.ok(), sync.ok() ? "" : qPrintable(sync.failure().toString()));
    qInfo(
        "FIGURE guest sync on the legacy path, lock %d: by %s, offered %d, asked %d, in %lld ms (answer %lld "
        "ms)",
        lock + 1, qPrintable(GuestSync::confirmationName(sync->confirmedBy)), int(sync->rungsOffered),
        int(sync->rungsAsked), sync->elapsedMs, sync->answerMs);
    QVERIFY(sync->answered);
    QVERIFY(!(sync->rungsAsked & syncRungBit(SyncConfirmation::GfxCaps))); // no pipeline to restart
    by.append(GuestSync::confirmationName(sync->confirmedBy));
  }
  QCOMPARE(by, (QStringList{QStringLiteral("refresh_rect"), QStringLiteral("refresh_rect")}));
  QCOMPARE(session.state(), RdpSession::State::Connected);
  session.abort();
  stopShadow(); // the next test gets the default server again (init starts it)
}

// A server that reads nothing more (stopped with SIGSTOP after the session opened: the
// hostile lane's frozen guest, staged on a server nobody here wrote) answers no rung of the
// ladder on either graphics path, so only the settle could vouch for it, which the strict
// lock refuses (GUEST_UNCONFIRMED). Let go again, it answers the next lock as before.
void tst_ShadowInterop::aFrozenServerAnswersNoRung_data() {
  QTest::addColumn<bool>("gfx");
  QTest::newRow("RDPGFX") << true;
  QTest::newRow("legacy (-gfx)") << false;
}

void tst_ShadowInterop::aFrozenServerAnswersNoRung() {
  QFETCH(bool, gfx);
  stopShadow();
  QVERIFY(startShadow(gfx ? QStringList() : QStringList{QStringLiteral("-gfx")}));
  RdpSession session;
  SessionFrames sessionFrames(session);
  QSignalSpy frames(&sessionFrames, &SessionFrames::frameUpdated);
  connectSession(session);
  QTRY_VERIFY_WITH_TIMEOUT(!frames.isEmpty(), 15000);
  QCOMPARE(session.channelReport().gfxOpened, gfx);
  GuestSync::Timing timing;
  timing.deadline = std::chrono::milliseconds(10000);
  timing.quiet = std::chrono::milliseconds(300);
  timing.answerWait = std::chrono::milliseconds(1000);
  const pid_t pid = pid_t(m_shadow.processId());
  QVERIFY(pid > 0);
  QCOMPARE(::kill(pid, SIGSTOP), 0);
  const Outcome<GuestSync::Result> frozen = syncOnce(session, timing);
  QCOMPARE(::kill(pid, SIGCONT), 0);
  QVERIFY2(frozen.ok(), frozen.ok() ? "" : qPrintable(frozen.failure().toString()));
  qInfo("FIGURE frozen shadow (%s): by %s, offered %d, asked %d, settled %d in %lld ms",
        gfx ? "RDPGFX" : "legacy", qPrintable(GuestSync::confirmationName(frozen->confirmedBy)),
        int(frozen->rungsOffered), int(frozen->rungsAsked), int(frozen->settled), frozen->elapsedMs);
  QVERIFY(!frozen->answered);
  QCOMPARE(frozen->confirmedBy, SyncConfirmation::SettleOnly);
  // Every rung the server offers over this path was asked and went unanswered.
  const quint8 expected =
      quint8(syncRungBit(SyncConfirmation::RefreshRect) | syncRungBit(SyncConfirmation::SuppressOutput) |
             (gfx ? syncRungBit(SyncConfirmation::GfxCaps) : 0));
  QCOMPARE(int(frozen->rungsAsked), int(expected));

  const Outcome<GuestSync::Result> thawed = syncOnce(session, timing);
  QVERIFY2(thawed.ok(), thawed.ok() ? "" : qPrintable(thawed.failure().toString()));
  qInfo("FIGURE shadow let go again (%s): by %s in %lld ms", gfx ? "RDPGFX" : "legacy",
        qPrintable(GuestSync::confirmationName(thawed->confirmedBy)), thawed->elapsedMs);
  QVERIFY(thawed->answered);
  QCOMPARE(session.state(), RdpSession::State::Connected);
  session.abort();
  stopShadow(); // the next test gets the default server again (init starts it)
}

void tst_ShadowInterop::pointerMoveReachesTheDisplay() {
  RdpSession session;
  connectSession(session);
  QVERIFY(session.sendPointer(123, 77, 0, 0).ok());
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert(QStringLiteral("DISPLAY"), m_display);
  const auto location = [&] {
    QProcess xdotool;
    xdotool.setProcessEnvironment(env);
    xdotool.start(QStringLiteral("xdotool"), {QStringLiteral("getmouselocation")});
    xdotool.waitForFinished(5000);
    return QString::fromUtf8(xdotool.readAllStandardOutput());
  };
  QTRY_VERIFY_WITH_TIMEOUT(location().startsWith(QStringLiteral("x:123 y:77 ")), 5000);
  // A click (set then clear) is two sends; both must be written and flushed.
  QVERIFY(session.sendPointer(200, 100, PointerEncoder::Left, 0).ok());
  QVERIFY(session.sendPointer(200, 100, 0, 0).ok());
  QVERIFY(session.sendKey(0x1E, true).ok());
  QVERIFY(session.sendKey(0x1E, false).ok());
  QTRY_VERIFY_WITH_TIMEOUT(location().startsWith(QStringLiteral("x:200 y:100 ")), 5000);
}

void tst_ShadowInterop::refusesAWrongPinBeforeAnyCredentialPdu() {
  QByteArray wrong = m_pin;
  wrong[31] = char(wrong[31] ^ 0x80);
  RdpSession session;
  QSignalSpy failed(&session, &RdpSession::failed);
  QSignalSpy connected(&session, &RdpSession::connected);
  session.start(config(wrong), credentials(kUser, kPassword));
  QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
  QCOMPARE(failed.first().first().value<Failure>().code, Refusal::GuestCertMismatch);
  QCOMPARE(connected.count(), 0);
  const auto trace = session.connectTrace();
  QVERIFY(trace.certificateChecked);
  QVERIFY(!trace.certificateAccepted);
  // Nothing (no CredSSP/NTLM, no MCS) was written after the certificate was seen.
  QCOMPARE(trace.pdusAfterCertificate, 0);
}

void tst_ShadowInterop::wrongPasswordIsAuthFailed() {
  RdpSession session;
  QSignalSpy failed(&session, &RdpSession::failed);
  session.start(config(m_pin), credentials(kUser, "not-the-password"));
  QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 15000);
  QCOMPARE(failed.first().first().value<Failure>().code, Refusal::AuthFailed);
}

void tst_ShadowInterop::refusesANonLoopbackHost() {
  RdpSession session;
  QSignalSpy failed(&session, &RdpSession::failed);
  RdpConfig c = config(m_pin);
  c.host = QStringLiteral("localhost");
  session.start(c, credentials(kUser, kPassword));
  QTRY_COMPARE(failed.count(), 1);
  QCOMPARE(failed.first().first().value<Failure>().code, Refusal::RdpRuleNotLoopback);
}

void tst_ShadowInterop::unreachablePortIsRdpUnreachable() {
  RdpSession session;
  QSignalSpy failed(&session, &RdpSession::failed);
  RdpConfig c = config(m_pin);
  c.port = freePort();
  session.start(c, credentials(kUser, kPassword));
  QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
  QCOMPARE(failed.first().first().value<Failure>().code, Refusal::RdpUnreachable);
}

void tst_ShadowInterop::abortDuringConnectReturnsQuickly_data() {
  QTest::addColumn<int>("delayMs");
  QTest::newRow("immediately") << 0;
  QTest::newRow("during TCP/TLS") << 5;
  QTest::newRow("during NLA") << 30;
  QTest::newRow("during capabilities") << 80;
}

void tst_ShadowInterop::abortDuringConnectReturnsQuickly() {
  QFETCH(int, delayMs);
  RdpSession session;
  QSignalSpy closed(&session, &RdpSession::closed);
  QSignalSpy failed(&session, &RdpSession::failed);
  session.start(config(m_pin), credentials(kUser, kPassword));
  QTest::qWait(delayMs); // chooses where in the handshake the abort lands
  QElapsedTimer timer;
  timer.start();
  session.abort();
  const qint64 elapsed = timer.elapsed();
  qInfo("abort after %d ms took %lld ms", delayMs, elapsed);
  // FreeRDP 3.10 polls its socket in 100 ms slices without watching the abort event;
  // abort() shuts the socket down, which ends such a poll at once. The 100 ms target is a
  // reported figure; the assertion is only that abort never hangs.
  QVERIFY2(elapsed < 2000, qPrintable(QString::number(elapsed)));
  QTRY_COMPARE(closed.count(), 1);
  QCOMPARE(failed.count(), 0);
  QCOMPARE(session.state(), RdpSession::State::Finished);
}

void tst_ShadowInterop::abortAfterConnectEmitsClosed() {
  RdpSession session;
  QSignalSpy closed(&session, &RdpSession::closed);
  QSignalSpy lost(&session, &RdpSession::lost);
  connectSession(session);
  QElapsedTimer timer;
  timer.start();
  session.abort();
  qInfo("abort while connected took %lld ms", timer.elapsed());
  QVERIFY(timer.elapsed() < 2000); // never hangs; the 100 ms target is a reported figure
  QTRY_COMPARE(closed.count(), 1);
  QCOMPARE(lost.count(), 0);
  QVERIFY(!session.sendKey(0x1E, true).ok());
}

void tst_ShadowInterop::serverDeathIsLostWithinOneSecond() {
  RdpSession session;
  QSignalSpy lost(&session, &RdpSession::lost);
  connectSession(session);
  QElapsedTimer timer;
  timer.start();
  ::kill(pid_t(m_shadow.processId()), SIGKILL);
  QTRY_COMPARE_WITH_TIMEOUT(lost.count(), 1, 1000);
  qInfo("RDP_LOST detected %lld ms after SIGKILL", timer.elapsed());
  QCOMPARE(lost.first().first().value<Failure>().code, Refusal::RdpLost);
  m_shadow.waitForFinished(5000);
  const Status afterLoss = session.sendKey(0x1E, true);
  QVERIFY(!afterLoss.ok());
  QCOMPARE(afterLoss.code(), Refusal::InputSendFailed);
}

QTEST_GUILESS_MAIN(tst_ShadowInterop)
#include "tst_shadowinterop.moc"
