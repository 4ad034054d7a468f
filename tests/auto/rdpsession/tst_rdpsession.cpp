// RdpSession: its pure parts (pointer edge encoding, certificate pinning) and the whole
// session against the project's test guest (tests/fixtures/testguest/README.md).
#include "GuestProcess.h"
#include "SessionFrames.h"
#include "SessionRig.h"
#include "rdp/AbortSocket.h"
#include "rdp/CertificatePin.h"
#include "rdp/ChannelReport.h"
#include "rdp/FrontGuard.h"
#include "rdp/PointerEncoder.h"
#include "rdp/RdpSession.h"
#include "rdp/gfx/GfxCaps.h"
#include "testguest/IdentityMarker.h"

#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMutex>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTemporaryFile>
#include <QTest>
#include <QTimer>

#include <algorithm>
#include <arpa/inet.h>
#include <cstdio>
#include <ctime>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <poll.h>
#include <random>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace gc;
using sessionrig::credentials;
using sessionrig::lastFrame;

namespace {
// MS-RDPBCGR pointer flags (kept literal here so the test does not include FreeRDP).
constexpr quint16 Move = 0x0800, Down = 0x8000, B1 = 0x1000, B2 = 0x2000, B3 = 0x4000, Wheel = 0x0200;
// MS-RDPBCGR keyboard flags.
constexpr int KbdExtended = 0x0100, KbdRelease = 0x8000;

// A self-signed certificate (winpr-makecert3) and its DER SHA-256, computed with
// `openssl x509 -outform der | sha256sum`.
const char kPem[] = "-----BEGIN CERTIFICATE-----\n"
                    "MIIBdTCCARugAwIBAgIUPN0vsTwvyXhwRkMqmDDsG/F3HNMwCgYIKoZIzj0EAwIw\n"
                    "EDEOMAwGA1UEAwwFZ3Vlc3QwHhcNMjUwMTAxMDAwMDAwWhcNMzUwMTAxMDAwMDAw\n"
                    "WjAQMQ4wDAYDVQQDDAVndWVzdDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABEL1\n"
                    "-----END CERTIFICATE-----\n";

// The guest's account. The password doubles as the sentinel no log line may contain.
const char kUser[] = "tester";
const char kPassword[] = "S3ntinel-pw-7f3a";
constexpr quint32 kMarker = 0x5ec0de42;
// The pointer position that opens every input comparison: nothing else goes there.
constexpr quint16 kOpenX = 1011, kOpenY = 677;

QMutex s_logMutex;
QStringList s_log;
QStringList s_critical; // the critical lines among them
void captureMessages(QtMsgType type, const QMessageLogContext&, const QString& message) {
  QMutexLocker lock(&s_logMutex);
  s_log.append(message);
  if (type == QtCriticalMsg || type == QtFatalMsg)
    s_critical.append(message);
  fprintf(stderr, "%s\n", qPrintable(message));
}
qsizetype criticalCount() {
  QMutexLocker lock(&s_logMutex);
  return s_critical.size();
}
QStringList criticalsSince(qsizetype from) {
  QMutexLocker lock(&s_logMutex);
  return s_critical.mid(from);
}

qint64 monotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts); // the guest's t_ns clock
  return qint64(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::optional<quint32> markerIn(const QImage& frame) {
  if (frame.isNull())
    return std::nullopt;
  return testguest::findMarker(frame.constBits(), int(frame.bytesPerLine()), frame.width(), frame.height());
}

QString figures(QList<double> v, const char* unit) {
  std::sort(v.begin(), v.end());
  if (v.isEmpty())
    return QStringLiteral("no samples");
  const auto at = [&](double q) { return v[qMin(v.size() - 1, qsizetype(q * double(v.size() - 1) + 0.5))]; };
  return QStringLiteral("n=%1 min=%2 median=%3 p99=%4 max=%5 %6")
      .arg(v.size())
      .arg(v.first(), 0, 'f', 2)
      .arg(at(0.5), 0, 'f', 2)
      .arg(at(0.99), 0, 'f', 2)
      .arg(v.last(), 0, 'f', 2)
      .arg(QLatin1String(unit));
}

// One input event as the guest reports it (README "stdout": kind, code, flags, x, y).
struct GuestInput {
  QString kind;
  int code = 0;
  int flags = 0;
  int x = 0;
  int y = 0;
  bool operator==(const GuestInput&) const = default;
};
QString describe(const GuestInput& e) {
  return QStringLiteral("%1 code=0x%2 flags=0x%3 (%4,%5)")
      .arg(e.kind)
      .arg(e.code, 0, 16)
      .arg(e.flags, 0, 16)
      .arg(e.x)
      .arg(e.y);
}

// The guest's input events after the opening pointer move (the first move there), with their `n`.
// Empty optional while the opening move has not been reported.
std::optional<QList<std::pair<int, GuestInput>>> inputsAfterOpening(const GuestProcess& guest) {
  const QList<QJsonObject> all = guest.events(QStringLiteral("input"));
  qsizetype start = -1;
  for (qsizetype i = 0; i < all.size(); ++i) {
    const QJsonObject& o = all[i];
    if (o.value(QStringLiteral("kind")).toString() == QStringLiteral("pointer") &&
        o.value(QStringLiteral("flags")).toInt() == Move && o.value(QStringLiteral("x")).toInt() == kOpenX &&
        o.value(QStringLiteral("y")).toInt() == kOpenY) {
      start = i;
      break;
    }
  }
  if (start < 0)
    return std::nullopt;
  QList<std::pair<int, GuestInput>> out;
  for (qsizetype i = start + 1; i < all.size(); ++i) {
    const QJsonObject& o = all[i];
    out.append({o.value(QStringLiteral("n")).toInt(),
                GuestInput{o.value(QStringLiteral("kind")).toString(),
                           o.value(QStringLiteral("code")).toInt(), o.value(QStringLiteral("flags")).toInt(),
                           o.value(QStringLiteral("x")).toInt(), o.value(QStringLiteral("y")).toInt()}});
  }
  return out;
}

// Reads the guest's stdout until `ready` holds; no event loop needed (RdpSession's worker
// does the RDP side). Returns false on timeout.
// One guest sync, run to its end on the event loop (no result: it did not end in `waitMs`).
std::optional<Outcome<GuestSync::Result>> syncOnce(RdpSession& session, GuestSync::Timing timing,
                                                   int waitMs = 15000) {
  std::optional<Outcome<GuestSync::Result>> out;
  session.startGuestSync(timing, [&out](const Outcome<GuestSync::Result>& r) { out = r; });
  (void)QTest::qWaitFor([&] { return out.has_value(); }, waitMs);
  return out;
}

GuestSync::Timing timing(int deadlineMs, int quietMs, int answerWaitMs) {
  GuestSync::Timing t;
  t.deadline = std::chrono::milliseconds(deadlineMs);
  t.quiet = std::chrono::milliseconds(quietMs);
  t.answerWait = std::chrono::milliseconds(answerWaitMs);
  return t;
}

template <typename Pred> bool pumpGuestUntil(GuestProcess& guest, Pred ready, int timeoutMs = 5000) {
  QElapsedTimer t;
  t.start();
  while (!ready()) {
    if (t.elapsed() > timeoutMs || guest.process().state() == QProcess::NotRunning)
      return ready();
    guest.process().waitForReadyRead(20);
  }
  return true;
}

} // namespace

class tst_RdpSession : public QObject {
  Q_OBJECT

private slots:
  void initTestCase();
  void cleanupTestCase();
  void init();
  void cleanup();

  // Pure parts.
  void encodesPointerEdges_data();
  void encodesPointerEdges();
  void pinComparisonNeedsExactly32EqualBytes_data();
  void pinComparisonNeedsExactly32EqualBytes();
  void unparsableCertificateHasNoPin();
  void inputBeforeConnectIsRefused();
  void heldWritesLeaveTogetherWhenTheHoldEnds();
  void aCornerRungWaitsForThePipelinesFirstFrame();
  void aPipelineThatNeverOpensIsWaitedForOnce();

  // Against the test guest.
  void showsTheGuestsIdentityMarker();
  void followsAGuestDesktopResize();
  void requestsOnlyTheGraphicsPipelineChannel();
  void fallsBackToBitmapsWithoutGfx();
  void opensGfxOnTheGuestAndRefusesEveryOtherChannel();
  void channelReportSanitisesAndBoundsNames();
  void refusesAWrongPinBeforeAnyCredential();
  void wrongPasswordIsAuthFailed();
  void guestKilledIsLostWithinOneSecond();
  void sendToAVanishedGuestIsInputSendFailed();
  void abortIsPrompt_data();
  void abortIsPrompt();
  void deliversMixedInputInOrderExactlyOnce();
  void eachSendIsOnTheWireWhenItReturns();
  void syncWithGuestAnswersAfterEveryEarlierInput();
  void syncEndsAtTheAnswerOnAScreenThatNeverSettles();
  void guestSyncNamesWhatConfirmedIt_data();
  void guestSyncNamesWhatConfirmedIt();
  void guestSyncClimbsToTheRungTheGuestAnswers_data();
  void guestSyncClimbsToTheRungTheGuestAnswers();
  void guestSyncAsksGfxCapsOfAPipelineNotYetUp_data();
  void guestSyncAsksGfxCapsOfAPipelineNotYetUp();
  void guestSyncLeavesTheEventLoopRunningAndCancels();
  void releaseHeldLeavesTheGuestNeutral();
  void finishGracefullyDeliversTheLastInputBeforeTheGuestCloses_data();
  void finishGracefullyDeliversTheLastInputBeforeTheGuestCloses();
  void finishGracefullyReachesABusyGuestOverTheGraphicsPipeline();
  void abortSendsADisconnectUltimatum();
  void abortOfAStoppedGuestIsBounded();
  void goodOpenAndCloseLogNoCriticalLine();
  void realFailuresStillLogCritical_data();
  void realFailuresStillLogCritical();
  void reportsTheNegotiatedSecurityProtocol_data();
  void reportsTheNegotiatedSecurityProtocol();
  void frontPassesANormalSessionInBothGraphicsModes_data();
  void frontPassesANormalSessionInBothGraphicsModes();
  void frontClosesWhenTheGuestOutgrowsTheGrant();

private:
  bool startGuest(GuestProcess& guest, const QString& password = QString::fromLatin1(kPassword),
                  const QStringList& extraArgs = {});
  RdpConfig config(const GuestProcess& guest) const;
  bool connectSession(RdpSession& session, const GuestProcess& guest);
  // A started guest, a connected session and the opening pointer move the guest has seen:
  // inputsAfterOpening() then lists exactly what the test sends next.
  bool openInputSession(GuestProcess& guest, RdpSession& session, const QStringList& guestArgs = {});

  QTemporaryDir m_certDir;                    // one guest certificate for the whole suite
  QTemporaryDir m_home;                       // HOME/XDG_CONFIG_HOME of this process
  std::unique_ptr<QTemporaryDir> m_configDir; // RdpConfig::configDir, fresh per test
  QProcessEnvironment m_guestEnv;             // the environment before HOME was moved
  QTemporaryFile m_stderr;                    // everything written to fd 2 meanwhile
  int m_realStderr = -1;
};

void tst_RdpSession::initTestCase() {
  QVERIFY(m_certDir.isValid() && m_home.isValid());
  QVERIFY2(QFile::exists(GuestProcess::binary()), qPrintable(GuestProcess::binary()));
  // FreeRDP must not fall back to ~/.config/freerdp either: point HOME at an empty dir
  // that cleanup() checks. The guest keeps the original environment.
  m_guestEnv = QProcessEnvironment::systemEnvironment();
  qputenv("HOME", QFile::encodeName(m_home.path()));
  qputenv("XDG_CONFIG_HOME", QFile::encodeName(m_home.path()));
  // FreeRDP/WinPR/OpenSSL may also write to fd 2 directly, past any Qt handler.
  QVERIFY(m_stderr.open());
  fflush(stderr);
  m_realStderr = ::dup(2);
  QVERIFY(m_realStderr >= 0 && ::dup2(int(m_stderr.handle()), 2) == 2);
  qInstallMessageHandler(&captureMessages);
}

void tst_RdpSession::cleanupTestCase() {
  qInstallMessageHandler(nullptr);
  fflush(stderr);
  ::dup2(m_realStderr, 2);
  ::close(m_realStderr);
  m_stderr.seek(0);
  const QByteArray written = m_stderr.readAll();
  fwrite(written.constData(), 1, size_t(written.size()), stderr);
  QVERIFY(!written.isEmpty());
  QVERIFY2(!written.contains(kPassword), "the password reached stderr");
  QMutexLocker lock(&s_logMutex);
  QVERIFY(!s_log.isEmpty()); // the capture did see FreeRDP's (routed) warnings
  for (const QString& line : std::as_const(s_log))
    QVERIFY2(!line.contains(QLatin1String(kPassword)), "the password reached a log line");
}

void tst_RdpSession::init() {
  m_configDir = std::make_unique<QTemporaryDir>();
  QVERIFY(m_configDir->isValid());
}

void tst_RdpSession::cleanup() {
  // FreeRDP must not have written anything (known_hosts, caches, dumps) anywhere of ours.
  for (const QString& dir : {m_configDir->path(), m_home.path()}) {
    const QStringList written = QDir(dir).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden);
    QVERIFY2(written.isEmpty(), qPrintable(dir + QStringLiteral(": ") + written.join(u',')));
  }
}

bool tst_RdpSession::startGuest(GuestProcess& guest, const QString& password, const QStringList& extraArgs) {
  guest.process().setProcessEnvironment(m_guestEnv);
  return guest.start(QStringList{QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--marker"),
                                 QStringLiteral("0x%1").arg(kMarker, 8, 16, QLatin1Char('0')),
                                 QStringLiteral("--cert-dir"), m_certDir.path()} +
                         extraArgs,
                     QString::fromLatin1(kUser), password);
}

RdpConfig tst_RdpSession::config(const GuestProcess& guest) const {
  return sessionrig::loopbackConfig(guest, m_configDir->path());
}

bool tst_RdpSession::connectSession(RdpSession& session, const GuestProcess& guest) {
  return sessionrig::connect(session, config(guest), credentials(kUser, kPassword));
}

bool tst_RdpSession::openInputSession(GuestProcess& guest, RdpSession& session,
                                      const QStringList& guestArgs) {
  return startGuest(guest, QString::fromLatin1(kPassword), guestArgs) && connectSession(session, guest) &&
         session.sendPointer(kOpenX, kOpenY, 0, 0).ok() &&
         pumpGuestUntil(guest, [&] { return inputsAfterOpening(guest).has_value(); });
}

// ---------------------------------------------------------------------------------------
// Pure parts.

void tst_RdpSession::encodesPointerEdges_data() {
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
  QTest::newRow("wheel clamps") << 0 << 0 << false << -1000 << QList<quint16>{quint16(Wheel | 0x0100 | 0x01)};
  QTest::newRow("bits above middle ignored") << 0 << 0xF8 << false << 0 << QList<quint16>{Move};
}

void tst_RdpSession::encodesPointerEdges() {
  QFETCH(int, previous);
  QFETCH(int, buttons);
  QFETCH(bool, moved);
  QFETCH(int, wheel);
  QFETCH(QList<quint16>, expected);
  QCOMPARE(PointerEncoder::encode(quint8(previous), quint8(buttons), moved, qint16(wheel)), expected);
}

void tst_RdpSession::pinComparisonNeedsExactly32EqualBytes_data() {
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

void tst_RdpSession::pinComparisonNeedsExactly32EqualBytes() {
  QFETCH(QByteArray, actual);
  QFETCH(QByteArray, pin);
  QFETCH(bool, matches);
  QCOMPARE(CertificatePin::matches(actual, pin), matches);
}

void tst_RdpSession::unparsableCertificateHasNoPin() {
  QVERIFY(!CertificatePin::leafSha256FromPem(QByteArrayView("not a certificate")));
  QVERIFY(!CertificatePin::leafSha256FromPem(QByteArrayView(kPem))); // truncated body
}

void tst_RdpSession::inputBeforeConnectIsRefused() {
  RdpSession session;
  const Status key = session.sendKey(0x1E, true);
  QVERIFY(!key.ok());
  QCOMPARE(key.code(), Refusal::InputSendFailed);
  QCOMPARE(session.sendKey(0xE048, true).code(), Refusal::InputSendFailed);
  QCOMPARE(session.sendKey(0xE11D, true).code(), Refusal::InputInvalid);
  QCOMPARE(session.sendPointer(1, 1, 0, 0).code(), Refusal::InputSendFailed);
}

// A run of inputs is written under a hold so that the guest wakes once for it: what is
// written while held stays unsent in the kernel, and all of it leaves when the hold ends.
void tst_RdpSession::heldWritesLeaveTogetherWhenTheHoldEnds() {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  QVERIFY(listener >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  QCOMPARE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  QCOMPARE(::listen(listener, 1), 0);
  QCOMPARE(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  QCOMPARE(::connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const int peer = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  QVERIFY(peer >= 0);
  ::close(listener);
  const auto unsent = [client] {
    int n = -1;
    return ::ioctl(client, SIOCOUTQNSD, &n) == 0 ? n : -1;
  };

  AbortSocket socket;
  QVERIFY(socket.adopt(client));
  socket.holdSegments(true);
  const char run[40] = "forty bytes of small writes, held back.";
  for (int i = 0; i < 4; ++i)
    QCOMPARE(::send(client, run + 10 * i, 10, MSG_NOSIGNAL), ssize_t(10));
  QCOMPARE(unsent(), 40);
  socket.holdSegments(false);
  QCOMPARE(unsent(), 0);

  char got[40] = {};
  std::size_t have = 0;
  while (have < sizeof got) {
    pollfd p{peer, POLLIN, 0};
    QVERIFY(::poll(&p, 1, 30000) == 1);
    const ssize_t n = ::recv(peer, got + have, sizeof got - have, 0);
    QVERIFY(n > 0);
    have += std::size_t(n);
  }
  QCOMPARE(QByteArray(got, 40), QByteArray(run, 40));
  socket.close();
  ::close(client);
  ::close(peer);
}

// A corner rung's answer is an update that covers the corner. While the graphics pipeline is
// coming up, its first frame (the whole surface, decided before the request) is certain to
// come and would pass for the answer: the rung waits for it, longer than for a pause in an
// ordinary stream, and is asked once it has come.
void tst_RdpSession::aCornerRungWaitsForThePipelinesFirstFrame() {
  using Clock = GuestSync::Clock;
  GuestSync sync;
  bool comingUp = true;
  int looked = 0;
  Clock::time_point lastLook{};
  std::optional<Clock::time_point> askedAt;
  std::optional<Clock::time_point> cameAt;
  sync.setAsk(
      [&](SyncConfirmation rung) {
        if (rung == SyncConfirmation::RefreshRect)
          askedAt = Clock::now();
        return GuestSync::Request::Written;
      },
      [] {},
      [&] {
        ++looked;
        lastLook = Clock::now();
        if (!comingUp && !cameAt)
          cameAt = lastLook;
        return comingUp ? GuestSync::Pipeline::ComingUp : GuestSync::Pipeline::Steady;
      });
  const quint8 offered = syncRungBit(SyncConfirmation::RefreshRect);
  const Clock::time_point began = Clock::now();
  sync.start(QRect(0, 0, 16, 16), offered, false, timing(30000, 200, 20000), [](const auto&) {});
  // It looked (the ladder, then the pause) and did not ask; it still has not when it looks
  // again well past the wait for an ordinary pause.
  QVERIFY(looked >= 2);
  QVERIFY(QTest::qWaitFor(
      [&] { return askedAt.has_value() || lastLook > began + 2 * GuestSync::kStreamGapWait; }, 30000));
  QVERIFY(!askedAt.has_value());
  comingUp = false; // the first frame has ended
  QVERIFY(QTest::qWaitFor([&] { return askedAt.has_value(); }, 30000));
  QVERIFY(cameAt.has_value());
  QVERIFY(*askedAt >= *cameAt);
  sync.cancel();

  // With the pipeline up, an idle stream is asked at once.
  askedAt.reset();
  sync.start(QRect(0, 0, 16, 16), offered, false, timing(30000, 200, 20000), [](const auto&) {});
  QVERIFY(askedAt.has_value());
  sync.cancel();
}

// A server that says it supports the graphics pipeline and never opens it (FreeRDP's server
// library says so by default) costs one lock the wait for that pipeline, once. And the gfx_caps
// rung it cannot be asked does not stand in for the corner rungs skipped at the next lock: they
// are asked again, not nothing.
void tst_RdpSession::aPipelineThatNeverOpensIsWaitedForOnce() {
  GuestSync sync;
  QList<SyncConfirmation> asked;
  int unavailable = 0;
  sync.setAsk(
      [&](SyncConfirmation rung) {
        if (rung == SyncConfirmation::GfxCaps) {
          ++unavailable;
          return GuestSync::Request::Unavailable;
        }
        asked.append(rung);
        return GuestSync::Request::Written;
      },
      [] {}, [] { return GuestSync::Pipeline::Opening; });
  const quint8 corners =
      syncRungBit(SyncConfirmation::RefreshRect) | syncRungBit(SyncConfirmation::SuppressOutput);
  const quint8 offered = corners | syncRungBit(SyncConfirmation::GfxCaps);
  std::optional<Outcome<GuestSync::Result>> first;
  sync.start(QRect(0, 0, 16, 16), offered, false, timing(30000, 100, 300),
             [&](const Outcome<GuestSync::Result>& r) { first = r; });
  QVERIFY(asked.isEmpty()); // the first corner rung waits for the pipeline's first frame
  QVERIFY(QTest::qWaitFor([&] { return first.has_value(); }, 30000));
  QVERIFY(first->ok());
  QCOMPARE((*first)->confirmedBy, SyncConfirmation::SettleOnly);
  QCOMPARE(asked, (QList{SyncConfirmation::RefreshRect, SyncConfirmation::SuppressOutput}));
  QCOMPARE(int((*first)->rungsAsked), int(corners));
  QCOMPARE(int((*first)->rungsOffered), int(corners)); // gfx_caps turned out unavailable
  QCOMPARE(unavailable, 1);

  // Both corner rungs went unanswered; the pipeline still says Opening. The next lock tries
  // gfx_caps (not skipped: it was never asked), finds it unavailable at once, and asks the
  // corner rungs after all, the first at once: the pipeline is not waited for again.
  asked.clear();
  std::optional<Outcome<GuestSync::Result>> again;
  sync.start(QRect(0, 0, 16, 16), offered, false, timing(30000, 100, 300),
             [&](const Outcome<GuestSync::Result>& r) { again = r; });
  QCOMPARE(asked, QList{SyncConfirmation::RefreshRect});
  QCOMPARE(unavailable, 2);
  QVERIFY(QTest::qWaitFor([&] { return again.has_value(); }, 30000));
  QVERIFY(again->ok());
  QCOMPARE(asked, (QList{SyncConfirmation::RefreshRect, SyncConfirmation::SuppressOutput}));
  QCOMPARE(int((*again)->rungsAsked), int(corners));
  QCOMPARE(int((*again)->rungsSkipped), 0);
}

// ---------------------------------------------------------------------------------------
// Against the test guest.

void tst_RdpSession::showsTheGuestsIdentityMarker() {
  GuestProcess guest;
  QVERIFY(startGuest(guest));
  RdpSession session;
  SessionFrames sessionFrames(session);
  QSignalSpy frames(&sessionFrames, &SessionFrames::frameUpdated);
  QVERIFY(connectSession(session, guest));
  // The pixels the session hands out carry the marker of exactly this guest.
  QTRY_VERIFY_WITH_TIMEOUT(markerIn(lastFrame(frames)), 10000);
  const auto update = frames.last().first().value<FrameUpdate>();
  QCOMPARE(update.frame.size(), QSize(1024, 768));
  QCOMPARE(*markerIn(update.frame), kMarker);
  QVERIFY(update.serial >= 1);
  const auto trace = session.connectTrace();
  QVERIFY(trace.certificateChecked && trace.certificateAccepted);
  QCOMPARE(trace.pdusBeforeCertificate, 1); // only the X.224 connection request
  QVERIFY(trace.pdusAfterCertificate > 0);
}

void tst_RdpSession::followsAGuestDesktopResize() {
  GuestProcess guest;
  QVERIFY(startGuest(guest));
  RdpSession session;
  SessionFrames sessionFrames(session);
  QSignalSpy frames(&sessionFrames, &SessionFrames::frameUpdated);
  QSignalSpy resized(&session, &RdpSession::desktopResized);
  QSignalSpy lost(&session, &RdpSession::lost);
  qsizetype framesBeforeResize = -1;
  connect(&session, &RdpSession::desktopResized, this, [&] { framesBeforeResize = frames.count(); });
  QVERIFY(connectSession(session, guest));
  QTRY_VERIFY_WITH_TIMEOUT(!frames.isEmpty(), 10000);
  guest.command("{\"cmd\":\"resize\",\"width\":800,\"height\":600}");
  QTRY_COMPARE_WITH_TIMEOUT(resized.count(), 1, 10000);
  QCOMPARE(resized.first().first().toSize(), QSize(800, 600));
  // The guest's size wins; after the resize every frame is the new size and still ours.
  QTRY_VERIFY_WITH_TIMEOUT(
      lastFrame(frames).size() == QSize(800, 600) && markerIn(lastFrame(frames)) == kMarker, 10000);
  for (qsizetype i = framesBeforeResize; i < frames.count(); ++i)
    QCOMPARE(frames.at(i).first().value<FrameUpdate>().frame.size(), QSize(800, 600));
  QCOMPARE(lost.count(), 0);
  QVERIFY(pumpGuestUntil(guest, [&] { return guest.events(QStringLiteral("activated")).size() == 2; }));
}

void tst_RdpSession::requestsOnlyTheGraphicsPipelineChannel() {
  GuestProcess guest;
  QVERIFY(startGuest(guest));
  RdpSession session;
  QVERIFY(connectSession(session, guest));
  QTRY_COMPARE_WITH_TIMEOUT(guest.events(QStringLiteral("channels")).size(), 1, 10000);
  // What the guest saw in the MCS Connect Initial: drdynvc and nothing else, GFX advertised.
  const QJsonObject channels = guest.events(QStringLiteral("channels")).first();
  QCOMPARE(channels.value(QStringLiteral("names")).toArray(), QJsonArray{QStringLiteral("drdynvc")});
  QCOMPARE(channels.value(QStringLiteral("dynamic")).toBool(false), true);
  QCOMPARE(channels.value(QStringLiteral("gfx")).toBool(false), true);
  // And what the session itself reports, from the same connection.
  const ChannelReport::Snapshot report = session.channelReport();
  QCOMPARE(report.staticRequested, QStringList{QStringLiteral("drdynvc")});
  for (const QString& codec : report.advertisedCodecs)
    QVERIFY2(!codec.startsWith(QStringLiteral("avc")), qPrintable(codec));
}

void tst_RdpSession::fallsBackToBitmapsWithoutGfx() {
  // The test guest (without its GFX mode) never opens drdynvc's RDPGFX: the legacy bitmap
  // path must still deliver the guest's pixels.
  GuestProcess guest;
  QVERIFY(startGuest(guest));
  RdpSession session;
  SessionFrames sessionFrames(session);
  QSignalSpy frames(&sessionFrames, &SessionFrames::frameUpdated);
  QVERIFY(connectSession(session, guest));
  QTRY_VERIFY_WITH_TIMEOUT(markerIn(lastFrame(frames)), 10000);
  const auto sync = syncOnce(session, timing(5000, 200, 1500));
  QVERIFY(sync && sync->ok());
  session.abort();
  const ChannelReport::Snapshot report = session.channelReport();
  QCOMPARE(report.gfxOpened, false);
  QCOMPARE(report.gfxFrames, quint64(0));
  QVERIFY(report.dynamicOpened.isEmpty());
  QCOMPARE(report.refusedTotal(), 0);
  QCOMPARE(report.closedJson().value(QStringLiteral("gfx")).toBool(true), false);
}

void tst_RdpSession::opensGfxOnTheGuestAndRefusesEveryOtherChannel() {
  // The test guest's GFX mode: RDPGFX over drdynvc, plus create requests for channels the
  // console never opens (clipboard, audio, drive, display control).
  const QStringList offered{QStringLiteral("CLIPRDR"), QStringLiteral("AUDIO_PLAYBACK_DVC"),
                            QStringLiteral("rdpdr"),
                            QStringLiteral("Microsoft::Windows::RDS::DisplayControl")};
  GuestProcess guest;
  QVERIFY(startGuest(guest, QString::fromLatin1(kPassword),
                     {QStringLiteral("--graphics"), QStringLiteral("gfx"), QStringLiteral("--offer-dvc"),
                      offered.join(u',')}));
  RdpSession session;
  SessionFrames sessionFrames(session);
  QSignalSpy frames(&sessionFrames, &SessionFrames::frameUpdated);
  QVERIFY(connectSession(session, guest));
  QVERIFY(pumpGuestUntil(
      guest, [&] { return !guest.events(QStringLiteral("graphics")).isEmpty(); }, 15000));
  const QJsonObject graphics = guest.events(QStringLiteral("graphics")).first();
  QCOMPARE(graphics.value(QStringLiteral("path")).toString(), QStringLiteral("gfx"));
  // The guest's pixels arrive through the pipeline into the same frames.
  QTRY_VERIFY_WITH_TIMEOUT(session.channelReport().gfxFrames > 0 && !frames.isEmpty() &&
                               markerIn(lastFrame(frames)) == kMarker,
                           15000);
  QVERIFY(pumpGuestUntil(
      guest, [&] { return guest.events(QStringLiteral("dvc_create")).size() >= offered.size() + 1; }, 15000));
  const auto sync = syncOnce(session, timing(8000, 200, 3000));
  QVERIFY(sync && sync->ok());
  session.abort();

  // What the guest saw: only drdynvc asked for and joined; RDPGFX opened, every other refused.
  const QJsonObject channels = guest.events(QStringLiteral("channels")).first();
  QCOMPARE(channels.value(QStringLiteral("names")).toArray(), QJsonArray{QStringLiteral("drdynvc")});
  QCOMPARE(channels.value(QStringLiteral("joined")).toArray(), QJsonArray{QStringLiteral("drdynvc")});
  QMap<QString, QString> guestSaw;
  for (const QJsonObject& e : guest.events(QStringLiteral("dvc_create")))
    guestSaw.insert(e.value(QStringLiteral("name")).toString(), e.value(QStringLiteral("result")).toString());
  QCOMPARE(guestSaw.value(QStringLiteral("Microsoft::Windows::RDS::Graphics")), QStringLiteral("opened"));
  for (const QString& name : offered)
    QCOMPARE(guestSaw.value(name), QStringLiteral("refused"));

  // What the session reports, computed from the same connection.
  const ChannelReport::Snapshot report = session.channelReport();
  QCOMPARE(report.staticJoined, QStringList{QStringLiteral("drdynvc")});
  QVERIFY(report.gfxOpened);
  QCOMPARE(report.dynamicOpened, QStringList{QStringLiteral("Microsoft::Windows::RDS::Graphics")});
  QCOMPARE(report.refused.size(), offered.size());
  for (const QString& name : offered)
    QCOMPARE(report.refused.value(name), 1);
  QCOMPARE(report.refusedTotal(), int(offered.size()));
  for (const QString& codec : report.gfxCodecsUsed)
    QVERIFY2(!codec.startsWith(QStringLiteral("avc")), qPrintable(codec));
}

void tst_RdpSession::channelReportSanitisesAndBoundsNames() {
  ChannelReport report;
  report.noteRefused("CLIPRDR");
  report.noteRefused("CLIPRDR");
  report.noteRefused(QByteArrayView("a\x01"
                                    "b\n"
                                    "c\xff",
                                    6));
  report.noteRefused(QByteArray(500, 'x'));
  for (int i = 0; i < 3 * ChannelReport::kMaxDistinctNames; ++i)
    report.noteRefused(QByteArray("name") + QByteArray::number(i));
  const ChannelReport::Snapshot s = report.snapshot();
  QCOMPARE(s.refused.size(), ChannelReport::kMaxDistinctNames);
  QCOMPARE(s.refused.value(QStringLiteral("CLIPRDR")), 2);
  QCOMPARE(s.refused.value(QStringLiteral("a?b?c?")), 1);
  const QString longName = QString(ChannelReport::kMaxNameLength, u'x') + u'~';
  QCOMPARE(s.refused.value(longName), 1);
  // 3 names kept above, the first 13 generated ones fill the table, the rest overflow.
  QCOMPARE(s.refusedOverflow, 3 * ChannelReport::kMaxDistinctNames - (ChannelReport::kMaxDistinctNames - 3));
  QCOMPARE(s.refusedTotal(), 4 + 3 * ChannelReport::kMaxDistinctNames);
  const QJsonObject closed = s.closedJson();
  QCOMPARE(closed.value(QStringLiteral("code")).toString(), QStringLiteral("RDP_CHANNEL_REFUSED"));
  QCOMPARE(closed.value(QStringLiteral("dynamic_refused_total")).toInt(), s.refusedTotal());
  for (const QString& name : s.refused.keys())
    for (QChar c : name)
      QVERIFY(c.unicode() >= 0x20 && c.unicode() < 0x7F);
}

void tst_RdpSession::refusesAWrongPinBeforeAnyCredential() {
  GuestProcess guest;
  QVERIFY(startGuest(guest));
  RdpConfig c = config(guest);
  c.pinSha256[31] = char(c.pinSha256[31] ^ 0x80);
  RdpSession session;
  QSignalSpy failed(&session, &RdpSession::failed);
  QSignalSpy connected(&session, &RdpSession::connected);
  session.start(c, credentials(kUser, kPassword));
  QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
  QCOMPARE(failed.first().first().value<Failure>().code, Refusal::GuestCertMismatch);
  QCOMPARE(connected.count(), 0);
  const auto trace = session.connectTrace();
  QVERIFY(trace.certificateChecked);
  QVERIFY(!trace.certificateAccepted);
  QCOMPARE(trace.pdusAfterCertificate, 0); // no CredSSP/NTLM, no MCS after the decision
  // The guest's view: a TCP client that went away; no logon, no activation, no input.
  QTRY_COMPARE_WITH_TIMEOUT(guest.events(QStringLiteral("client_disconnected")).size(), 1, 10000);
  QCOMPARE(
      guest.events(QStringLiteral("client_disconnected")).first().value(QStringLiteral("reason")).toString(),
      QStringLiteral("closed"));
  for (const char* none : {"auth_failed", "channels", "activated", "input", "sync"})
    QVERIFY2(guest.events(QString::fromLatin1(none)).isEmpty(), none);
}

void tst_RdpSession::wrongPasswordIsAuthFailed() {
  GuestProcess guest;
  QVERIFY(startGuest(guest, QStringLiteral("the-guests-real-pw")));
  RdpSession session;
  QSignalSpy failed(&session, &RdpSession::failed);
  session.start(config(guest), credentials(kUser, kPassword));
  QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 15000);
  QCOMPARE(failed.first().first().value<Failure>().code, Refusal::AuthFailed);
  QTRY_COMPARE_WITH_TIMEOUT(guest.events(QStringLiteral("auth_failed")).size(), 1, 10000);
  QVERIFY(guest.events(QStringLiteral("activated")).isEmpty());
}

void tst_RdpSession::guestKilledIsLostWithinOneSecond() {
  GuestProcess guest;
  QVERIFY(startGuest(guest));
  RdpSession session;
  QSignalSpy lost(&session, &RdpSession::lost);
  QSignalSpy closed(&session, &RdpSession::closed);
  QVERIFY(connectSession(session, guest));
  QElapsedTimer timer;
  timer.start();
  guest.process().kill();   // SIGKILL: the kernel closes the socket, no RDP goodbye
  QVERIFY(lost.wait(1000)); // returns on the emission, unlike QTRY's 50 ms polling
  qInfo("FIGURE rdp_lost_ms=%.2f", double(timer.nsecsElapsed()) / 1e6);
  QCOMPARE(lost.count(), 1);
  QCOMPARE(lost.first().first().value<Failure>().code, Refusal::RdpLost);
  QCOMPARE(session.state(), RdpSession::State::Finished);
  QCOMPARE(session.sendKey(0x1E, true).code(), Refusal::InputSendFailed);
  QCOMPARE(closed.count(), 0);
}

void tst_RdpSession::sendToAVanishedGuestIsInputSendFailed() {
  GuestProcess guest;
  QVERIFY(startGuest(guest));
  RdpSession session;
  QVERIFY(connectSession(session, guest));
  guest.process().kill();
  QVERIFY(guest.process().waitForFinished(5000));
  // Sends race the worker noticing the loss: the first writes may still land in the
  // kernel's buffer, then the peer's RST fails them. Every send either succeeded or is
  // INPUT_SEND_FAILED, and within a second they fail.
  QElapsedTimer timer;
  timer.start();
  Status last = success();
  int sends = 0;
  while (last.ok() && timer.elapsed() < 1000) {
    last = (sends % 2) ? session.sendPointer(quint16(sends % 500), 5, 0, 0)
                       : session.sendKey(0x1E, sends % 4 == 0);
    ++sends;
  }
  QVERIFY2(!last.ok(), "sends kept succeeding after the guest died");
  QCOMPARE(last.code(), Refusal::InputSendFailed);
  qInfo("first failed send after %d sends, %lld ms", sends, timer.elapsed());
}

void tst_RdpSession::abortIsPrompt_data() {
  QTest::addColumn<QString>("moment");
  QTest::newRow("during connect") << QStringLiteral("connect");
  QTest::newRow("while connected") << QStringLiteral("connected");
  // A server that accepted the TCP connection and says nothing: FreeRDP sits in its
  // blocking read of the X.224 answer, polling in 100 ms slices.
  QTest::newRow("while the server is silent") << QStringLiteral("silent");
}

void tst_RdpSession::abortIsPrompt() {
  QFETCH(QString, moment);
  const bool whileConnected = moment == QStringLiteral("connected");
  const bool silent = moment == QStringLiteral("silent");
  GuestProcess guest;
  QTcpServer mute; // never accepts: the kernel's backlog completes the TCP handshake
  RdpConfig target;
  qint64 connectMs = 0;
  if (silent) {
    QVERIFY(mute.listen(QHostAddress::LocalHost, 0));
    target.host = QStringLiteral("127.0.0.1");
    target.port = mute.serverPort();
    target.pinSha256 = QByteArray(32, '\x5a');
    target.configDir = m_configDir->path();
    connectMs = 200;
  } else {
    QVERIFY(startGuest(guest));
    target = config(guest);
    // Spread the aborts over the whole handshake: measure one connect first.
    RdpSession session;
    QElapsedTimer t;
    t.start();
    QVERIFY(connectSession(session, guest));
    connectMs = t.elapsed();
  }
  const auto guestIdle = [&] {
    const qsizetype accepted = guest.events(QStringLiteral("client_connected")).size();
    return guest.events(QStringLiteral("client_disconnected")).size() +
               guest.events(QStringLiteral("client_rejected")).size() >=
           accepted;
  };
  QList<double> latencies;
  constexpr int kRuns = 20;
  for (int run = 0; run < kRuns; ++run) {
    if (!silent)
      QVERIFY(pumpGuestUntil(guest, guestIdle));
    const qsizetype acceptedBefore = guest.events(QStringLiteral("client_connected")).size();
    RdpSession session;
    QSignalSpy closed(&session, &RdpSession::closed);
    QSignalSpy failed(&session, &RdpSession::failed);
    QSignalSpy lost(&session, &RdpSession::lost);
    if (whileConnected) {
      QVERIFY(connectSession(session, guest));
    } else {
      session.start(target, credentials(kUser, kPassword));
      // Chooses where in the handshake the abort lands (not a synchronisation).
      QTest::qWait(int(connectMs * run / kRuns));
    }
    QElapsedTimer timer;
    timer.start();
    session.abort();
    latencies.append(double(timer.nsecsElapsed()) / 1e6);
    QTRY_COMPARE(closed.count(), 1);
    QCOMPARE(lost.count(), 0);
    QCOMPARE(session.state(), RdpSession::State::Finished);
    if (whileConnected || silent)
      QCOMPARE(failed.count(), 0);
    QCOMPARE(session.sendKey(0x1E, true).code(), Refusal::InputSendFailed);
    // Before the next run, let the guest see this client go (else it would answer "busy").
    if (!silent && session.connectTrace().socketConnected)
      QVERIFY(pumpGuestUntil(guest, [&] {
        return guest.events(QStringLiteral("client_connected")).size() > acceptedBefore && guestIdle();
      }));
  }
  qInfo("FIGURE abort_%s_ms %s (connect takes ~%lld ms)", qPrintable(moment),
        qPrintable(figures(latencies, "ms")), connectMs);
  // The 100 ms target is a figure (reported above, and in tests/bench), not a wall-clock
  // assertion: on the shared 2-core CI machine under ASan single runs reach ~170 ms. What
  // the test asserts is that abort never hangs: every run ends well inside 2 s.
  std::sort(latencies.begin(), latencies.end());
  QVERIFY2(latencies.last() < 2000.0, qPrintable(figures(latencies, "ms")));
}

void tst_RdpSession::deliversMixedInputInOrderExactlyOnce() {
  GuestProcess guest;
  RdpSession session;
  QVERIFY(openInputSession(guest, session));

  // 200 sends: plain and extended (0xE0xx) keys, moves, button edges and wheel turns.
  std::mt19937 rng(20240611);
  const quint16 keys[] = {0x1E,   0x30,   0x2E,   0x1C,   0x39,   0x2A,   0x01,   0x0E,   0x3B,   0x45,
                          0xE048, 0xE050, 0xE04B, 0xE04D, 0xE01C, 0xE01D, 0xE038, 0xE05B, 0xE053, 0xE035};
  QList<GuestInput> expected;
  quint8 buttons = 0;
  int x = kOpenX, y = kOpenY;
  for (int i = 0; i < 200; ++i) {
    const int what = int(rng() % 4);
    if (what == 0) {
      const quint16 key = keys[rng() % std::size(keys)];
      const bool down = rng() % 2;
      QVERIFY(session.sendKey(key, down).ok());
      const bool extended = (key >> 8) == 0xE0;
      expected.append({QStringLiteral("key"), extended ? (0xE000 | (key & 0xFF)) : key,
                       (extended ? KbdExtended : 0) | (down ? 0 : KbdRelease), 0, 0});
      continue;
    }
    quint8 next = buttons;
    qint16 wheel = 0;
    const bool moves = what == 1;
    if (what == 2)
      next = quint8(buttons ^ (1u << (rng() % 3))); // one edge of left/right/middle
    if (what == 3)
      wheel = (rng() % 2) ? 120 : -120;
    const int nx = moves ? int(rng() % 1000) : x;
    const int ny = moves ? int(rng() % 700) : y;
    QVERIFY(session.sendPointer(quint16(nx), quint16(ny), next, wheel).ok());
    for (quint16 flags : PointerEncoder::encode(buttons, next, nx != x || ny != y, wheel))
      expected.append({QStringLiteral("pointer"), 0, flags, nx, ny});
    buttons = next;
    x = nx;
    y = ny;
  }

  QList<std::pair<int, GuestInput>> seen;
  pumpGuestUntil(
      guest,
      [&] {
        seen = inputsAfterOpening(guest).value_or(QList<std::pair<int, GuestInput>>());
        return seen.size() >= expected.size();
      },
      15000);
  // Nothing more trickles in later (exactly once).
  pumpGuestUntil(
      guest, [&] { return inputsAfterOpening(guest)->size() > expected.size(); }, 300);
  seen = inputsAfterOpening(guest).value_or(QList<std::pair<int, GuestInput>>());
  // In order, with consecutive numbers (nothing else interleaved).
  for (qsizetype i = 0; i < qMin(seen.size(), expected.size()); ++i) {
    QVERIFY2(seen[i].second == expected[i], qPrintable(QStringLiteral("#%1: guest %2, sent %3")
                                                           .arg(i)
                                                           .arg(describe(seen[i].second))
                                                           .arg(describe(expected[i]))));
    if (i > 0)
      QCOMPARE(seen[i].first, seen[i - 1].first + 1);
  }
  QCOMPARE(seen.size(), expected.size());
}

void tst_RdpSession::eachSendIsOnTheWireWhenItReturns() {
  GuestProcess guest;
  RdpSession session;
  QVERIFY(openInputSession(guest, session));

  // After each send returns, nothing else is sent; the guest must still receive it, so the
  // bytes cannot be waiting in a client-side buffer for a later write or flush.
  QList<double> returnUs, deliveredUs;
  constexpr int kSends = 100;
  for (int i = 0; i < kSends; ++i) {
    const qint64 before = monotonicNs();
    const Status sent =
        (i % 4 == 3) ? session.sendPointer(quint16(10 + i), 400, 0, 0) : session.sendKey(0x1E, i % 2 == 0);
    const qint64 returned = monotonicNs();
    QVERIFY(sent.ok());
    QVERIFY2(pumpGuestUntil(guest, [&] { return inputsAfterOpening(guest)->size() == i + 1; }),
             qPrintable(QStringLiteral("send #%1 never reached the guest").arg(i)));
    const qint64 decoded =
        qint64(guest.events(QStringLiteral("input")).last().value(QStringLiteral("t_ns")).toDouble());
    if (i % 4 != 3)
      returnUs.append(double(returned - before) / 1e3);
    deliveredUs.append(double(decoded - before) / 1e3);
  }
  qInfo("FIGURE sendKey_return_us %s", qPrintable(figures(returnUs, "us")));
  qInfo("FIGURE send_to_guest_decode_us %s", qPrintable(figures(deliveredUs, "us")));
}

void tst_RdpSession::syncWithGuestAnswersAfterEveryEarlierInput() {
  GuestProcess guest;
  RdpSession session;
  QVERIFY(openInputSession(guest, session));
  for (int i = 0; i < 40; ++i)
    QVERIFY(session.sendKey(0x1E, i % 2 == 0).ok());

  const auto sync = syncOnce(session, timing(10000, 50, 5000));

  QVERIFY(sync.has_value());
  QVERIFY2(sync->ok(), sync->ok() ? "" : qPrintable(sync->failure().toString()));
  QVERIFY((*sync)->refreshSupported);
  QVERIFY((*sync)->answered);
  QCOMPARE((*sync)->confirmedBy, GuestSync::Confirmation::RefreshRect);
  QVERIFY(!(*sync)->settled || (*sync)->elapsedMs >= 50); // settled: quiet for `quiet` by the answer
  // The guest handled the refresh after every input written before the call.
  QVERIFY(pumpGuestUntil(guest, [&] { return !guest.events(QStringLiteral("refresh")).isEmpty(); }));
  const double refreshedAt =
      guest.events(QStringLiteral("refresh")).first().value(QStringLiteral("t_ns")).toDouble();
  const auto inputs = guest.events(QStringLiteral("input"));
  QVERIFY(inputs.size() >= 41);
  for (const QJsonObject& input : inputs)
    QVERIFY(input.value(QStringLiteral("t_ns")).toDouble() <= refreshedAt);
  qInfo("FIGURE guest_sync_ms %lld (answer after %lld ms)", (*sync)->elapsedMs, (*sync)->answerMs);
}

// An answer confirms the drained input by itself: the sync does not wait for the screen to
// settle after it, so a desktop that keeps changing (a clock, a video) locks as fast as an
// idle one rather than at the deadline.
void tst_RdpSession::syncEndsAtTheAnswerOnAScreenThatNeverSettles() {
  GuestProcess guest;
  RdpSession session;
  QVERIFY(openInputSession(guest, session));
  guest.command("{\"cmd\":\"workload\",\"mode\":\"typing\"}");
  constexpr int kDeadlineMs = 30000;
  const auto sync = syncOnce(session, timing(kDeadlineMs, 200, 10000), 2 * kDeadlineMs);
  guest.command("{\"cmd\":\"workload\",\"mode\":\"idle\"}");

  QVERIFY(sync.has_value());
  QVERIFY2(sync->ok(), sync->ok() ? "" : qPrintable(sync->failure().toString()));
  QVERIFY((*sync)->answered);
  QCOMPARE((*sync)->confirmedBy, GuestSync::Confirmation::RefreshRect);
  QVERIFY((*sync)->elapsedMs < kDeadlineMs); // ended by the answer, not by the deadline
  QVERIFY((*sync)->answerMs <= (*sync)->elapsedMs);
  qInfo("FIGURE guest_sync on a changing screen: %lld ms (answer after %lld ms)", (*sync)->elapsedMs,
        (*sync)->answerMs);
}

// Only an update that covers the whole requested corner counts as the answer. A guest that
// advertises Refresh Rect and never answers, or sends damage that only touches the corner,
// is locked by the settle alone, and the result says so.
void tst_RdpSession::guestSyncNamesWhatConfirmedIt_data() {
  QTest::addColumn<QString>("mode");
  QTest::addColumn<bool>("answered");
  QTest::newRow("answering guest") << "answer" << true;
  QTest::newRow("advertises but never answers") << "ignore" << false;
  QTest::newRow("damage over the corner, not covering it") << "corner_damage" << false;
}
void tst_RdpSession::guestSyncNamesWhatConfirmedIt() {
  QFETCH(QString, mode);
  QFETCH(bool, answered);
  GuestProcess guest;
  RdpSession session;
  QVERIFY(openInputSession(guest, session));
  // Everything the guest sent before the request has been processed: a paint it sends after
  // its activation frame is shown (a late band over the corner would cover it).
  const QRect corner(1024 - 16, 768 - 16, 16, 16);
  const QPoint probe(980, 700);
  bool probeShown = false, requested = false, cornerTouched = false, cornerCovered = false;
  SessionFrames sessionFrames(session);
  QObject::connect(&sessionFrames, &SessionFrames::frameUpdated, &session, [&](const FrameUpdate& u) {
    probeShown = probeShown || (u.frame.pixel(probe) & 0xFFFFFF) == 0x12AB34;
    if (!requested)
      return;
    // What reached the client after the request, around the corner (the guest's last 16x16).
    for (const QRect& r : u.dirty) {
      cornerTouched = cornerTouched || r.intersects(corner);
      cornerCovered = cornerCovered || r.contains(corner);
    }
  });
  // The guest sends a paint only to an activated client (else it waits for the next full
  // update): the client's first input may reach it before its activation completes.
  QVERIFY(guest.waitForEvent(QStringLiteral("activated")));
  guest.command("{\"cmd\":\"paint\",\"x\":980,\"y\":700,\"w\":4,\"h\":4,\"color\":\"#12ab34\",\"id\":1}");
  QVERIFY(guest.waitForEvent(QStringLiteral("painted")));
  QVERIFY(guest.events(QStringLiteral("painted")).last().value(QStringLiteral("sent")).toBool());
  QTRY_VERIFY_WITH_TIMEOUT(probeShown, 15000);
  guest.command(QStringLiteral("{\"cmd\":\"refresh\",\"mode\":\"%1\"}").arg(mode).toUtf8());
  QVERIFY(guest.waitForEvent(QStringLiteral("refresh_mode")));
  requested = true;
  constexpr int kAnswerWaitMs = 400;
  QElapsedTimer t;
  t.start();
  const auto sync = syncOnce(session, timing(10000, 100, kAnswerWaitMs));
  const qint64 ms = t.elapsed();

  QVERIFY(sync.has_value());
  QVERIFY2(sync->ok(), sync->ok() ? "" : qPrintable(sync->failure().toString()));
  QVERIFY(guest.waitForEvent(QStringLiteral("refresh")));
  QCOMPARE(guest.events(QStringLiteral("refresh")).last().value(QStringLiteral("reply")).toString(), mode);
  QVERIFY((*sync)->refreshSupported);
  QCOMPARE((*sync)->answered, answered);
  QCOMPARE(GuestSync::confirmationName((*sync)->confirmedBy),
           answered ? QStringLiteral("refresh_rect") : QStringLiteral("settle_only"));
  if (!answered)
    QVERIFY((*sync)->settled); // without an answer only the settle confirms
  if (mode == QLatin1String("corner_damage")) {
    QTRY_VERIFY(cornerTouched); // the damage did arrive over the corner ...
    QVERIFY(!cornerCovered);    // ... and never covered it
  }
  if (!answered)
    QVERIFY(ms >= kAnswerWaitMs); // the bounded wait for the answer came first
  qInfo("FIGURE guest_sync_%s_ms %lld", qPrintable(mode), ms);
}

// The ladder: each rung the server advertised is asked in turn (refresh_rect, suppress_output,
// gfx_caps over RDPGFX) until one is answered; the result names the rung, the rungs asked, and
// at the next lock those that went unanswered are left out. A guest that answers none (frozen)
// is confirmed by the settle alone, whatever the rungs, and asks every rung again next time.
void tst_RdpSession::guestSyncClimbsToTheRungTheGuestAnswers_data() {
  QTest::addColumn<bool>("gfx");
  QTest::addColumn<QString>("refresh");
  QTest::addColumn<QString>("suppress");
  QTest::addColumn<QString>("readvertise");
  QTest::addColumn<QString>("by");
  QTest::addColumn<QStringList>("asked");
  const QString R = QStringLiteral("refresh_rect"), S = QStringLiteral("suppress_output"),
                G = QStringLiteral("gfx_caps");
  QTest::newRow("refresh_rect (test guest, xrdp)") << false << "answer"
                                                   << "ignore"
                                                   << "confirm" << R << QStringList{R};
  QTest::newRow("suppress_output") << false << "ignore"
                                   << "repaint"
                                   << "confirm" << S << QStringList{R, S};
  QTest::newRow("gfx_caps, CapsConfirm alone (GRD)") << true << "ignore"
                                                     << "ignore"
                                                     << "confirm" << G << QStringList{R, S, G};
  QTest::newRow("gfx_caps, CapsConfirm then reset and repaint (shadow)")
      << true << "ignore"
      << "ignore"
      << "reset" << G << QStringList{R, S, G};
  QTest::newRow("frozen, legacy") << false << "ignore"
                                  << "ignore"
                                  << "ignore"
                                  << "settle_only" << QStringList{R, S};
  QTest::newRow("frozen, RDPGFX") << true << "ignore"
                                  << "ignore"
                                  << "ignore"
                                  << "settle_only" << QStringList{R, S, G};
}
void tst_RdpSession::guestSyncClimbsToTheRungTheGuestAnswers() {
  QFETCH(bool, gfx);
  QFETCH(QString, refresh);
  QFETCH(QString, suppress);
  QFETCH(QString, readvertise);
  QFETCH(QString, by);
  QFETCH(QStringList, asked);
  GuestProcess guest;
  RdpSession session;
  QVERIFY(openInputSession(guest, session,
                           gfx ? QStringList{QStringLiteral("--graphics"), QStringLiteral("gfx")}
                               : QStringList{}));
  QVERIFY(guest.waitForEvent(QStringLiteral("activated")));
  if (gfx) {
    QTRY_VERIFY_WITH_TIMEOUT(session.channelReport().gfxOpened, 15000);
  }
  // Everything the guest sent before the lock has been shown (a paint after its activation
  // frame is): a late full frame cannot arrive after a request and pass for its answer.
  QPoint probe(980, 700);
  quint32 probeColour = 0x12AB34;
  bool probeShown = false;
  SessionFrames sessionFrames(session);
  QObject::connect(&sessionFrames, &SessionFrames::frameUpdated, &session, [&](const FrameUpdate& u) {
    probeShown = probeShown || (u.frame.pixel(probe) & 0xFFFFFF) == probeColour;
  });
  guest.command("{\"cmd\":\"paint\",\"x\":980,\"y\":700,\"w\":4,\"h\":4,\"color\":\"#12ab34\",\"id\":1}");
  QTRY_VERIFY_WITH_TIMEOUT(probeShown, 15000);
  guest.command(QStringLiteral("{\"cmd\":\"refresh\",\"mode\":\"%1\"}").arg(refresh).toUtf8());
  guest.command(QStringLiteral("{\"cmd\":\"suppress\",\"mode\":\"%1\"}").arg(suppress).toUtf8());
  guest.command(QStringLiteral("{\"cmd\":\"gfx_readvertise\",\"mode\":\"%1\"}").arg(readvertise).toUtf8());
  QVERIFY(guest.waitForEvent(QStringLiteral("readvertise_mode")));
  const auto names = [](quint8 set) {
    QStringList out;
    for (const SyncConfirmation c :
         {SyncConfirmation::RefreshRect, SyncConfirmation::SuppressOutput, SyncConfirmation::GfxCaps}) {
      if (set & syncRungBit(c))
        out.append(syncConfirmationName(c));
    }
    return out;
  };
  constexpr int kAnswerWaitMs = 400;
  const auto sync = syncOnce(session, timing(10000, 100, kAnswerWaitMs));

  QVERIFY(sync.has_value());
  QVERIFY2(sync->ok(), sync->ok() ? "" : qPrintable(sync->failure().toString()));
  QCOMPARE(GuestSync::confirmationName((*sync)->confirmedBy), by);
  QCOMPARE((*sync)->answered, by != QLatin1String("settle_only"));
  QCOMPARE(names((*sync)->rungsAsked), asked);
  QCOMPARE(names((*sync)->rungsSkipped), QStringList{});
  if (!(*sync)->answered)
    QVERIFY((*sync)->settled); // without an answer only the settle confirms
  if ((*sync)->answered)
    QVERIFY((*sync)->answerMs >= 0 && (*sync)->answerMs < kAnswerWaitMs);
  if (gfx && asked.contains(QStringLiteral("gfx_caps"))) {
    // The guest saw exactly one re-advertise, with the connect's list.
    QVERIFY(guest.waitForEvent(QStringLiteral("gfx_readvertise")));
    QCOMPARE(guest.events(QStringLiteral("gfx_readvertise")).size(), 1);
    QCOMPARE(guest.events(QStringLiteral("gfx_readvertise")).first().value(QStringLiteral("sets")).toInt(),
             int(gfx::advertisedCaps().size()));
  }
  if (readvertise == QLatin1String("reset")) {
    // ResetGraphics deleted the surface; the guest created the same id again and repainted.
    QVERIFY(guest.waitForEvent(QStringLiteral("gfx_surface"), 2));
    QVERIFY(guest.events(QStringLiteral("gfx_surface")).last().value(QStringLiteral("restart")).toBool());
  }
  // The session is whole, and the picture still reaches the client after the rung.
  probe = QPoint(500, 400);
  probeColour = 0x56CD78;
  probeShown = false;
  guest.command("{\"cmd\":\"paint\",\"x\":500,\"y\":400,\"w\":4,\"h\":4,\"color\":\"#56cd78\",\"id\":7}");
  QTRY_VERIFY_WITH_TIMEOUT(probeShown, 15000);

  // The next lock leaves out the rungs that went unanswered, unless none was answered.
  const auto again = syncOnce(session, timing(10000, 100, kAnswerWaitMs));
  QVERIFY(again.has_value() && again->ok());
  QCOMPARE(GuestSync::confirmationName((*again)->confirmedBy), by);
  if ((*sync)->answered) {
    QCOMPARE(names((*again)->rungsAsked), QStringList{by});
    QCOMPARE(names((*again)->rungsSkipped), asked.mid(0, asked.size() - 1));
  } else {
    QCOMPARE(names((*again)->rungsAsked), asked);
    QCOMPARE(names((*again)->rungsSkipped), QStringList{});
  }
  qInfo("FIGURE guest_sync ladder %s: %s after %lld ms (answer %lld ms), next lock %lld ms",
        QTest::currentDataTag(), qPrintable(by), (*sync)->elapsedMs, (*sync)->answerMs, (*again)->elapsedMs);
}

// A lock taken right after the connect, while the server is still opening the graphics
// pipeline's channel or confirming its caps, keeps its gfx_caps rung: the ladder asks it once
// the pipeline is up. The connect's CapsConfirm answers nothing (its CapsAdvertise went out
// before the input). A pipeline that never comes up leaves the rung unoffered and the settle
// alone vouches; the next lock asks the corner rungs again, not nothing.
void tst_RdpSession::guestSyncAsksGfxCapsOfAPipelineNotYetUp_data() {
  QTest::addColumn<QString>("stage");
  QTest::addColumn<bool>("release");
  QTest::addColumn<QString>("by");
  QTest::addColumn<bool>("gfxOffered");
  QTest::newRow("the caps are confirmed during the lock") << "confirm" << true << "gfx_caps" << true;
  QTest::newRow("the caps are never confirmed") << "confirm" << false << "settle_only" << false;
  QTest::newRow("the channel opens during the lock") << "open" << true << "gfx_caps" << true;
  QTest::newRow("the channel never opens") << "open" << false << "settle_only" << false;
}
void tst_RdpSession::guestSyncAsksGfxCapsOfAPipelineNotYetUp() {
  QFETCH(QString, stage);
  QFETCH(bool, release);
  QFETCH(QString, by);
  QFETCH(bool, gfxOffered);
  GuestProcess guest;
  RdpSession session;
  QVERIFY(startGuest(guest, QString::fromLatin1(kPassword),
                     {QStringLiteral("--graphics"), QStringLiteral("gfx")}));
  guest.command("{\"cmd\":\"refresh\",\"mode\":\"ignore\"}");
  guest.command(QStringLiteral("{\"cmd\":\"gfx_hold\",\"stage\":\"%1\"}").arg(stage).toUtf8());
  QVERIFY(guest.waitForEvent(QStringLiteral("hold_mode")));
  QVERIFY(connectSession(session, guest));
  QVERIFY(guest.waitForEvent(QStringLiteral("gfx_held")));
  QCOMPARE(guest.events(QStringLiteral("gfx_held")).first().value(QStringLiteral("stage")).toString(), stage);
  QCOMPARE(session.channelReport().gfxOpened, stage == QLatin1String("confirm"));
  QVERIFY(session.channelReport().gfxAdvertised);

  // The corner rungs wait for the pipeline's first frame (up to answerWait) before they are
  // asked: generous, so that frame never passes for a corner rung's answer.
  constexpr int kAnswerWaitMs = 2000;
  std::optional<Outcome<GuestSync::Result>> sync;
  session.startGuestSync(timing(20000, 100, kAnswerWaitMs),
                         [&sync](const Outcome<GuestSync::Result>& r) { sync = r; });
  if (release)
    guest.command("{\"cmd\":\"gfx_hold\",\"stage\":\"none\"}"); // after the lock began
  QVERIFY(QTest::qWaitFor([&] { return sync.has_value(); }, 30000));
  QVERIFY2(sync->ok(), sync->ok() ? "" : qPrintable(sync->failure().toString()));
  QCOMPARE(GuestSync::confirmationName((*sync)->confirmedBy), by);
  QCOMPARE(bool((*sync)->rungsOffered & syncRungBit(SyncConfirmation::GfxCaps)), gfxOffered);
  QCOMPARE(bool((*sync)->rungsAsked & syncRungBit(SyncConfirmation::GfxCaps)), gfxOffered);
  if (release) {
    // Asked once the pipeline was up: the guest saw one CapsAdvertise again.
    QVERIFY(guest.waitForEvent(QStringLiteral("gfx_readvertise")));
    QCOMPARE(guest.events(QStringLiteral("gfx_readvertise")).size(), 1);
    return;
  }
  QVERIFY((*sync)->settled);
  QVERIFY(guest.events(QStringLiteral("gfx_readvertise")).isEmpty());
  const quint8 corners =
      syncRungBit(SyncConfirmation::RefreshRect) | syncRungBit(SyncConfirmation::SuppressOutput);
  QCOMPARE(int((*sync)->rungsAsked), int(corners));

  // Both corner rungs went unanswered and the pipeline never came: the next lock asks both
  // again, rather than skipping them for a gfx_caps rung that cannot be asked.
  std::optional<Outcome<GuestSync::Result>> again;
  session.startGuestSync(timing(20000, 100, kAnswerWaitMs),
                         [&again](const Outcome<GuestSync::Result>& r) { again = r; });
  QVERIFY(QTest::qWaitFor([&] { return again.has_value(); }, 30000));
  QVERIFY2(again->ok(), again->ok() ? "" : qPrintable(again->failure().toString()));
  QCOMPARE(GuestSync::confirmationName((*again)->confirmedBy), QStringLiteral("settle_only"));
  QCOMPARE(int((*again)->rungsAsked), int(corners));
  QCOMPARE(int((*again)->rungsSkipped), 0);
  QCOMPARE(int((*again)->rungsOffered & syncRungBit(SyncConfirmation::GfxCaps)), 0);
}

// The sync is state, not a blocking call: the event loop runs while it waits (a timer fires,
// the rung is asked from it), and a cancelled sync never reports.
void tst_RdpSession::guestSyncLeavesTheEventLoopRunningAndCancels() {
  GuestProcess guest;
  RdpSession session;
  QVERIFY(openInputSession(guest, session));
  guest.command("{\"cmd\":\"workload\",\"mode\":\"typing\"}"); // the screen never settles
  // Unanswered: an answer would end the sync before the cancel.
  guest.command("{\"cmd\":\"refresh\",\"mode\":\"ignore\"}");
  QVERIFY(guest.waitForEvent(QStringLiteral("refresh_mode")));
  bool reported = false;
  QElapsedTimer t;
  t.start();
  // The rung waits up to 6 s for its answer: nothing can report before the cancel below.
  session.startGuestSync(timing(6500, 200, 6000),
                         [&](const Outcome<GuestSync::Result>&) { reported = true; });
  const qint64 returnedMs = t.elapsed();
  bool timerFired = false;
  qint64 firedMs = -1;
  QTimer::singleShot(20, &session, [&] {
    timerFired = true;
    firedMs = t.elapsed();
  });
  QTRY_VERIFY_WITH_TIMEOUT(timerFired, 5000);
  // A stream that never pauses is asked after GuestSync::kStreamGapWait, from the event loop.
  QTRY_VERIFY_WITH_TIMEOUT((guest.poll(), !guest.events(QStringLiteral("refresh")).isEmpty()), 5000);
  QVERIFY(!reported);
  session.cancelGuestSync();
  // Past the sync's own deadline: still nothing reported.
  (void)QTest::qWaitFor([&] { return reported; }, 7000);
  QVERIFY(!reported);
  guest.command("{\"cmd\":\"workload\",\"mode\":\"idle\"}");
  qInfo("FIGURE start_guest_sync_return_ms %lld, event loop served after %lld ms", returnedMs, firedMs);
  QVERIFY(returnedMs < 100);
}

// What the session sent down and did not release, it releases: keys (plain and extended)
// and buttons, once; afterwards nothing is held and a second release sends nothing.
void tst_RdpSession::releaseHeldLeavesTheGuestNeutral() {
  GuestProcess guest;
  RdpSession session;
  QVERIFY(openInputSession(guest, session));
  QVERIFY(session.sendKey(0x1D, true).ok());   // left Ctrl
  QVERIFY(session.sendKey(0x2A, true).ok());   // left Shift
  QVERIFY(session.sendKey(0x1E, true).ok());   // 'a' ...
  QVERIFY(session.sendKey(0x1E, false).ok());  // ... released by the setup itself
  QVERIFY(session.sendKey(0xE038, true).ok()); // right Alt (extended)
  QVERIFY(session.sendPointer(100, 120, 0x1, 0).ok());
  QCOMPARE(session.held().keys, 3);
  QCOMPARE(session.held().buttons, 1);

  const auto released = session.releaseHeld();
  QVERIFY(released.ok());
  QCOMPARE(released->keys, 3);
  QCOMPARE(released->buttons, 1);
  QCOMPARE(session.held().keys, 0);
  QCOMPARE(session.held().buttons, 0);
  const auto again = session.releaseHeld();
  QVERIFY(again.ok());
  QCOMPARE(again->keys + again->buttons, 0);

  const QList<GuestInput> expected{
      {QStringLiteral("key"), 0x1D, 0, 0, 0},
      {QStringLiteral("key"), 0x2A, 0, 0, 0},
      {QStringLiteral("key"), 0x1E, 0, 0, 0},
      {QStringLiteral("key"), 0x1E, KbdRelease, 0, 0},
      {QStringLiteral("key"), 0xE038, KbdExtended, 0, 0},
      {QStringLiteral("pointer"), 0, Move, 100, 120},
      {QStringLiteral("pointer"), 0, Down | B1, 100, 120},
      // the release
      {QStringLiteral("key"), 0x1D, KbdRelease, 0, 0},
      {QStringLiteral("key"), 0x2A, KbdRelease, 0, 0},
      {QStringLiteral("key"), 0xE038, KbdExtended | KbdRelease, 0, 0},
      {QStringLiteral("pointer"), 0, B1, 100, 120},
  };
  QVERIFY(pumpGuestUntil(
      guest, [&] { return inputsAfterOpening(guest)->size() >= expected.size(); }, 15000));
  pumpGuestUntil(
      guest, [&] { return inputsAfterOpening(guest)->size() > expected.size(); }, 300);
  const auto seen = *inputsAfterOpening(guest);
  QCOMPARE(seen.size(), expected.size());
  for (qsizetype i = 0; i < expected.size(); ++i) {
    GuestInput got = seen[i].second;
    if (got.kind == QLatin1String("key"))
      got.flags &= KbdExtended | KbdRelease; // the down flag's spelling does not matter here
    QVERIFY2(got == expected[i], qPrintable(QStringLiteral("#%1: guest %2, expected %3")
                                                .arg(i)
                                                .arg(describe(got))
                                                .arg(describe(expected[i]))));
  }
}

void tst_RdpSession::finishGracefullyDeliversTheLastInputBeforeTheGuestCloses_data() {
  QTest::addColumn<int>("keys");
  QTest::newRow("20 keys, then the goodbye") << 20;
  // Nothing in flight: the guest's close is the first thing the reader's wait sees.
  QTest::newRow("the goodbye alone") << 0;
}

void tst_RdpSession::finishGracefullyDeliversTheLastInputBeforeTheGuestCloses() {
  QFETCH(int, keys);
  GuestProcess guest;
  RdpSession session;
  QVERIFY(openInputSession(guest, session));
  for (int i = 0; i < keys; ++i)
    QVERIFY(session.sendKey(0x1E, i % 2 == 0).ok());

  const qsizetype before = criticalCount();
  const RdpSession::Finish finish = session.finishGracefully(std::chrono::milliseconds(5000));
  session.abort();

  QVERIFY(finish.confirmed); // the guest read to the end and closed its side
  // Its close right after the goodbye is the plan, not a failure (gnome-remote-desktop closes
  // within the reader's same wait).
  const QStringList critical = criticalsSince(before);
  QVERIFY2(critical.isEmpty(), qPrintable(critical.join(QStringLiteral(" | "))));
  QVERIFY(session.ultimatumSent());
  QVERIFY(pumpGuestUntil(guest, [&] { return inputsAfterOpening(guest)->size() == keys; }));
  QVERIFY(guest.waitForEvent(QStringLiteral("client_disconnected")));
  // After the last input: the proper goodbye (rn-user-requested), then end-of-stream.
  QCOMPARE(guest.events(QStringLiteral("client_disconnected"))
               .first()
               .value(QStringLiteral("ultimatum"))
               .toInt(-1),
           3);
  qInfo("FIGURE finish_gracefully_ms %lld", finish.elapsedMs);
}

// The live lane's lost click: a busy guest (freerdp-shadow-cli3 in a TCG VM) still had the
// action's last input unread in its socket when the session went. Over RDPGFX the guest keeps
// sending frames after our goodbye, and each one is acknowledged: written into a socket
// already shut for writing, that failed, the session dropped, and the reset destroyed what
// the guest had not read. After the goodbye nothing more is written; the session reads on
// until the guest closes.
void tst_RdpSession::finishGracefullyReachesABusyGuestOverTheGraphicsPipeline() {
  GuestProcess guest;
  RdpSession session;
  QVERIFY(openInputSession(guest, session,
                           {QStringLiteral("--graphics"), QStringLiteral("gfx"),
                            QStringLiteral("--slow-input"), QStringLiteral("40")}));
  QTRY_VERIFY_WITH_TIMEOUT(session.channelReport().gfxOpened, 15000);
  constexpr int kKeys = 20; // 20 x 40 ms: most of them still unread when the goodbye goes
  for (int i = 0; i < kKeys; ++i)
    QVERIFY(session.sendKey(0x1E, i % 2 == 0).ok());

  const RdpSession::Finish finish = session.finishGracefully(std::chrono::milliseconds(30000));
  session.abort();

  QVERIFY(guest.waitForEvent(QStringLiteral("client_disconnected"), 1, 30000));
  const auto seen = inputsAfterOpening(guest);
  QVERIFY(seen.has_value());
  QCOMPARE(seen->size(), kKeys);
  QVERIFY(finish.confirmed); // the guest read to the end and closed its side
  QCOMPARE(guest.events(QStringLiteral("client_disconnected"))
               .first()
               .value(QStringLiteral("ultimatum"))
               .toInt(-1),
           3);
  QVERIFY2(finish.writesDropped > 0, "the guest sent no frame after the goodbye: the case is not exercised");
  qInfo("FIGURE finish_gracefully_busy_gfx_ms %lld (client PDUs not written after the goodbye: %d)",
        finish.elapsedMs, finish.writesDropped);
}

// ---------------------------------------------------------------------------------------
// A clean, quiet session (issue 20 point 3).

void tst_RdpSession::abortSendsADisconnectUltimatum() {
  GuestProcess guest;
  QVERIFY(startGuest(guest));
  RdpSession session;
  QVERIFY(connectSession(session, guest));
  QVERIFY(pumpGuestUntil(guest, [&] { return !guest.events(QStringLiteral("activated")).isEmpty(); }));
  QElapsedTimer timer;
  timer.start();
  session.abort();
  qInfo("FIGURE abort_with_ultimatum_ms=%lld", timer.elapsed());
  QVERIFY(session.ultimatumSent());
  // The guest's FreeRDP peer decoded it: reason 3, rn-user-requested.
  QVERIFY(
      pumpGuestUntil(guest, [&] { return !guest.events(QStringLiteral("client_disconnected")).isEmpty(); }));
  const QJsonObject gone = guest.events(QStringLiteral("client_disconnected")).first();
  QCOMPARE(gone.value(QStringLiteral("ultimatum")).toInt(-1), 3);
}

void tst_RdpSession::abortOfAStoppedGuestIsBounded() {
  GuestProcess guest;
  QVERIFY(startGuest(guest));
  RdpSession session;
  QSignalSpy closed(&session, &RdpSession::closed);
  QVERIFY(connectSession(session, guest));
  // A guest that never answers (SIGSTOP: it reads nothing, acknowledges nothing) must not
  // hold the close beyond the disconnect bound.
  const auto pid = pid_t(guest.process().processId());
  QCOMPARE(::kill(pid, SIGSTOP), 0);
  QElapsedTimer timer;
  timer.start();
  session.abort();
  const qint64 ms = timer.elapsed();
  QCOMPARE(::kill(pid, SIGCONT), 0);
  qInfo("FIGURE abort_of_stopped_guest_ms=%lld (bound %lld ms)", ms,
        qint64(RdpSession::kDisconnectBound.count()));
  QVERIFY2(ms < RdpSession::kDisconnectBound.count() + 1000, qPrintable(QString::number(ms)));
  QTRY_COMPARE(closed.count(), 1);
  QCOMPARE(session.state(), RdpSession::State::Finished);
}

void tst_RdpSession::goodOpenAndCloseLogNoCriticalLine() {
  GuestProcess guest;
  QVERIFY(startGuest(guest));
  const qsizetype before = criticalCount();
  {
    RdpSession session;
    SessionFrames sessionFrames(session);
    QSignalSpy frames(&sessionFrames, &SessionFrames::frameUpdated);
    QSignalSpy closed(&session, &RdpSession::closed);
    QVERIFY(connectSession(session, guest));
    QTRY_VERIFY_WITH_TIMEOUT(!frames.isEmpty(), 10000);
    session.abort();
    QTRY_COMPARE(closed.count(), 1);
  }
  QVERIFY(
      pumpGuestUntil(guest, [&] { return !guest.events(QStringLiteral("client_disconnected")).isEmpty(); }));
  const QStringList critical = criticalsSince(before);
  QVERIFY2(critical.isEmpty(), qPrintable(critical.join(QStringLiteral(" | "))));
}

void tst_RdpSession::realFailuresStillLogCritical_data() {
  QTest::addColumn<QString>("failure");
  QTest::newRow("wrong pin") << QStringLiteral("pin");
  QTest::newRow("server hangs up") << QStringLiteral("hangup");
}

void tst_RdpSession::realFailuresStillLogCritical() {
  QFETCH(QString, failure);
  GuestProcess guest;
  QTcpServer hangup; // accepts, then closes at once: not an RDP server
  RdpConfig target;
  if (failure == QStringLiteral("pin")) {
    QVERIFY(startGuest(guest));
    target = config(guest);
    target.pinSha256[0] = char(target.pinSha256[0] ^ 0x01);
  } else {
    QVERIFY(hangup.listen(QHostAddress::LocalHost, 0));
    connect(&hangup, &QTcpServer::newConnection, &hangup, [&] {
      while (QTcpSocket* s = hangup.nextPendingConnection())
        s->abort();
    });
    target.host = QStringLiteral("127.0.0.1");
    target.port = hangup.serverPort();
    target.pinSha256 = QByteArray(32, '\x5a');
    target.configDir = m_configDir->path();
    target.connectTimeoutMs = 15000;
  }
  const qsizetype before = criticalCount();
  RdpSession session;
  QSignalSpy failed(&session, &RdpSession::failed);
  session.start(target, credentials(kUser, kPassword));
  QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 15000);
  const QStringList critical = criticalsSince(before);
  qInfo("critical lines for %s: %s", qPrintable(failure), qPrintable(critical.join(QStringLiteral(" | "))));
  QVERIFY(!critical.isEmpty());
}

void tst_RdpSession::reportsTheNegotiatedSecurityProtocol_data() {
  QTest::addColumn<bool>("nla");
  QTest::addColumn<QString>("expected");
  QTest::newRow("NLA guest") << true << QStringLiteral("nla");
  QTest::newRow("TLS-only guest") << false << QStringLiteral("tls");
}

void tst_RdpSession::reportsTheNegotiatedSecurityProtocol() {
  QFETCH(bool, nla);
  QFETCH(QString, expected);
  GuestProcess guest;
  guest.process().setProcessEnvironment(m_guestEnv);
  QStringList args{QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--cert-dir"),
                   m_certDir.path()};
  if (!nla)
    args << QStringLiteral("--no-nla");
  QVERIFY(guest.start(args, QString::fromLatin1(kUser), QString::fromLatin1(kPassword)));
  RdpSession session;
  QCOMPARE(session.securityProtocol(), QString());
  QVERIFY(connectSession(session, guest));
  QCOMPARE(session.securityProtocol(), expected);
}

// ---------------------------------------------------------------------------------------
// The validating fronts in front of FreeRDP (issue 24 part 1, FrontGuard).

void tst_RdpSession::frontPassesANormalSessionInBothGraphicsModes_data() {
  QTest::addColumn<QStringList>("guestArgs");
  QTest::addColumn<bool>("gfx");
  QTest::newRow("bitmaps") << QStringList{} << false;
  QTest::newRow("gfx") << QStringList{QStringLiteral("--graphics"), QStringLiteral("gfx")} << true;
}

void tst_RdpSession::frontPassesANormalSessionInBothGraphicsModes() {
  QFETCH(QStringList, guestArgs);
  QFETCH(bool, gfx);
  GuestProcess guest;
  QVERIFY(startGuest(guest, QString::fromLatin1(kPassword), guestArgs));
  RdpSession session;
  SessionFrames sessionFrames(session);
  QSignalSpy frames(&sessionFrames, &SessionFrames::frameUpdated);
  QSignalSpy lost(&session, &RdpSession::lost);
  QVERIFY(connectSession(session, guest));
  const FrontGuard* front = session.frontGuard();
  QVERIFY(front);
  QTRY_VERIFY_WITH_TIMEOUT(markerIn(lastFrame(frames)), 15000);
  if (gfx)
    QTRY_VERIFY_WITH_TIMEOUT(session.channelReport().gfxFrames > 0, 15000);
  // A motion workload: every frame of it passes through the fronts before FreeRDP.
  const FrontGuard::Counters before = front->counters();
  constexpr qsizetype kFrames = 300;
  const qsizetype start = frames.count();
  QElapsedTimer wall;
  wall.start();
  guest.command(R"({"cmd":"workload","mode":"motion"})");
  QTRY_VERIFY_WITH_TIMEOUT(frames.count() - start >= kFrames, 120000);
  const qint64 wallNs = wall.nsecsElapsed();
  guest.command(R"({"cmd":"workload","mode":"idle"})");
  const FrontGuard::Counters after = front->counters();
  QVERIFY2(!front->violation(), front->failure() ? qPrintable(front->failure()->toString()) : "");
  QVERIFY(!front->failure());
  QCOMPARE(lost.count(), 0);
  QCOMPARE(session.state(), RdpSession::State::Connected);
  const uint64_t pdus = after.pdus - before.pdus;
  const uint64_t bytes = after.bytes - before.bytes;
  const uint64_t checkNs = after.checkNs - before.checkNs + after.dynvcNs - before.dynvcNs;
  QVERIFY(pdus > 0 && bytes > 0);
  if (gfx) {
    QVERIFY(after.dynvcMessages > before.dynvcMessages); // RDPGFX arrives through DynvcFront
    QVERIFY(session.channelReport().gfxOpened);
  }
  session.abort();
  FrontGuard::Counters during = after; // the workload's checks only
  for (size_t i = 0; i < during.checkNsLog2.size(); ++i)
    during.checkNsLog2[i] -= before.checkNsLog2[i];
  qInfo("FIGURE front_%s frames %lld in %.2f s: %llu PDUs, %.1f MiB, %llu drdynvc messages; fronts %.3f ms "
        "(mean %.0f ns/PDU, median <= %llu ns, p99 <= %llu ns, longest %.1f us; %.2f ms/MiB; %.3f%% of wall "
        "time)",
        gfx ? "gfx" : "bitmaps", qlonglong(frames.count() - start), double(wallNs) / 1e9, qulonglong(pdus),
        double(bytes) / (1 << 20), qulonglong(after.dynvcMessages - before.dynvcMessages),
        double(checkNs) / 1e6, double(checkNs) / double(pdus), qulonglong(during.percentileNs(0.5)),
        qulonglong(during.percentileNs(0.99)), double(after.maxCheckNs) / 1e3,
        double(checkNs) / 1e6 / (double(bytes) / (1 << 20)), 100.0 * double(checkNs) / double(wallNs));
}

void tst_RdpSession::frontClosesWhenTheGuestOutgrowsTheGrant() {
  // The real guest resizes beyond the grant's pixel count: the Demand Active that names the
  // size is refused before FreeRDP resizes anything, and the session closes RDP_RESOURCE_LIMIT.
  GuestProcess guest;
  QVERIFY(startGuest(guest));
  RdpSession session;
  SessionFrames sessionFrames(session);
  QSignalSpy frames(&sessionFrames, &SessionFrames::frameUpdated);
  QSignalSpy resized(&session, &RdpSession::desktopResized);
  QSignalSpy lost(&session, &RdpSession::lost);
  RdpConfig c = config(guest);
  c.desktop.width = 1024;
  c.desktop.height = 768;
  c.sizeFromServer = true; // the server may choose its size, within the grant's pixel count
  session.start(c, credentials(kUser, kPassword));
  QTRY_VERIFY_WITH_TIMEOUT(!frames.isEmpty(), 20000);
  guest.command("{\"cmd\":\"resize\",\"width\":1280,\"height\":800}");
  QTRY_COMPARE_WITH_TIMEOUT(lost.count(), 1, 20000);
  const Failure failure = lost.first().first().value<Failure>();
  QCOMPARE(refusalName(failure.code), QStringLiteral("RDP_RESOURCE_LIMIT"));
  QCOMPARE(failure.message,
           QStringLiteral("slowpath.DemandActive: desktop larger than the grant's pixel count"));
  QCOMPARE(resized.count(), 0); // FreeRDP never saw the new size
  const auto v = session.frontGuard()->violation();
  QVERIFY(v);
  QCOMPARE(v->kind, front::Violation::Kind::Resource);
}

QTEST_GUILESS_MAIN(tst_RdpSession)
#include "tst_rdpsession.moc"
