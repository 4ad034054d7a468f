#include "reader/ReaderService.h"

#include "rdp/CertificateProbe.h"
#include "rdp/RdpSession.h"
#include "readerwire/ReaderSocket.h"

#include <QCoreApplication>
#include <QLoggingCategory>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace gc {

namespace {

Q_LOGGING_CATEGORY(lcReader, "gc.reader")

wire::InputDone inputDone(quint32 id, const Status& status, int written) {
  wire::InputDone done;
  done.id = id;
  done.written = quint32(std::max(written, 0));
  done.ok = status.ok();
  if (!status.ok())
    done.failure = status.failure();
  return done;
}

} // namespace

ReaderService::ReaderService(int controlFd, SharedDesktop desktop, quint32 sandbox, QObject* parent)
    : QObject(parent), m_control(controlFd), m_desktop(std::move(desktop)), m_sandbox(sandbox),
      m_notifier(controlFd, QSocketNotifier::Read) {
  m_notifier.setEnabled(false);
  connect(&m_notifier, &QSocketNotifier::activated, this, &ReaderService::readable);
}

ReaderService::~ReaderService() {
  endSession();
  m_desktop.wipe();
}

void ReaderService::start() {
  send(wire::Ready{wire::kVersion, m_sandbox});
  m_notifier.setEnabled(true);
}

void ReaderService::send(const wire::FromReader& message) {
  if (m_finishing && !std::holds_alternative<wire::Closed>(message))
    return;
  const QByteArray datagram = wire::encode(message);
  if (Status s = ReaderSocket::send(m_control, datagram); !s.ok()) {
    qCWarning(lcReader).noquote() << s.failure().toString();
    finish(1); // the console is gone or broken: nothing to serve
  }
}

void ReaderService::sendAll(std::span<const wire::InputDone> answers) {
  if (answers.empty() || m_finishing)
    return;
  std::array<QByteArray, kInputsPerWake> datagrams;
  for (std::size_t from = 0; from < answers.size(); from += datagrams.size()) {
    const auto run = answers.subspan(from, std::min(datagrams.size(), answers.size() - from));
    for (std::size_t i = 0; i < run.size(); ++i)
      datagrams[i] = wire::encode(run[i]);
    if (Status s = ReaderSocket::sendAll(m_control, std::span(datagrams.data(), run.size())); !s.ok()) {
      qCWarning(lcReader).noquote() << s.failure().toString();
      finish(1);
      return;
    }
  }
}

void ReaderService::readable() {
  // Up to kInputsPerWake datagrams per wake-up, so a long burst of input cannot starve the
  // session's posts. The inputs of one wake-up (a run the console sent ahead of their
  // answers) go to the guest under one hold, as one segment, and are answered once it left:
  // an answer still means the input is on its way. Any other message ends the wake-up, after
  // the answers before it.
  static ReaderSocket::Buffer buffer; // one reader thread; wiped after every message
  std::array<wire::InputDone, kInputsPerWake> answers;
  std::size_t answered = 0;
  bool holding = false;
  const auto answerAll = [&] {
    if (holding && m_session)
      m_session->holdWrites(false);
    holding = false;
    sendAll(std::span(answers.data(), answered));
    answered = 0;
  };
  for (std::size_t n = 0; n < kInputsPerWake; ++n) {
    int fd = -1;
    const ReaderSocket::Received r = ReaderSocket::receive(m_control, buffer, fd, true);
    if (r == ReaderSocket::Received::WouldBlock)
      break;
    if (r != ReaderSocket::Received::Datagram) {
      // The console closed its end (or broke it): it is gone; so is the reason to run.
      answerAll();
      finish(r == ReaderSocket::Received::Closed ? 0 : 1);
      return;
    }
    Outcome<wire::ToReader> message = wire::decodeToReader(buffer.view());
    buffer.wipe(); // a Start carried the credentials: they now live in locked memory only
    if (!message.ok()) {
      qCWarning(lcReader).noquote() << "a message from the console:" << message.failure().toString();
      if (fd >= 0)
        ::close(fd);
      answerAll();
      finish(1);
      return;
    }
    const bool isInput = std::visit(
        [&](const auto& m) {
          using M = std::decay_t<decltype(m)>;
          if constexpr (std::is_same_v<M, wire::Key> || std::is_same_v<M, wire::Pointer> ||
                        std::is_same_v<M, wire::Unicode>) {
            if (fd >= 0)
              ::close(std::exchange(fd, -1)); // inputs come without a descriptor
            if (!holding && m_session) {
              m_session->holdWrites(true);
              holding = true;
            }
            answers[answered++] = input(m);
            return true;
          }
          return false;
        },
        message.value());
    if (!isInput) {
      answerAll();
      handle(message.value(), fd);
      return;
    }
  }
  answerAll();
}

template <typename Input> wire::InputDone ReaderService::input(const Input& m) {
  int written = 0;
  Status s = success();
  if (m.chained && !(m_lastInput.written && m_lastInput.id + 1 == m.id))
    s = Status(Refusal::InputSendFailed, QStringLiteral("the input before it in its run was not written"));
  else if (!m_session)
    s = Status(Refusal::InputSendFailed, QStringLiteral("no session"));
  else if constexpr (std::is_same_v<Input, wire::Key>)
    s = m_session->sendKey(m.scancode, m.down);
  else if constexpr (std::is_same_v<Input, wire::Unicode>)
    s = m_session->sendUnicode(m.codeUnit, m.down);
  else
    s = m_session->sendPointer(m.x, m.y, m.buttons, m.wheel, &written, m.horizontal);
  if constexpr (!std::is_same_v<Input, wire::Pointer>)
    written = s.ok() ? 1 : 0;
  m_lastInput = {m.id, s.ok()};
  return inputDone(m.id, s, written);
}

void ReaderService::handle(wire::ToReader& message, int fd) {
  // Only Probe and Start come with a descriptor; any other one is closed unused.
  const auto unexpectedFd = [&fd] {
    if (fd >= 0)
      ::close(fd);
    fd = -1;
  };
  std::visit(
      [&](auto& m) {
        using M = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<M, wire::Probe>) {
          probe(m, fd);
        } else if constexpr (std::is_same_v<M, wire::Start>) {
          startSession(m, fd);
        } else {
          unexpectedFd();
          if constexpr (std::is_same_v<M, wire::ReleaseHeld>) {
            wire::Released released;
            released.id = m.id;
            const Outcome<RdpSession::Released> r =
                m_session
                    ? m_session->releaseHeld()
                    : Outcome<RdpSession::Released>(Refusal::InputSendFailed, QStringLiteral("no session"));
            released.ok = r.ok();
            if (r.ok()) {
              released.keys = quint32(r->keys);
              released.buttons = quint32(r->buttons);
            } else {
              released.failure = r.failure();
            }
            send(released);
          } else if constexpr (std::is_same_v<M, wire::SyncStart>) {
            const auto reply = [this](const Outcome<SyncResult>& result) {
              wire::SyncDone done;
              done.ok = result.ok();
              if (result.ok())
                done.result = result.value();
              else
                done.failure = result.failure();
              send(done);
            };
            if (m_session)
              m_session->startGuestSync(m.timing, reply);
            else
              reply(Failure{Refusal::DrainFailed, QStringLiteral("the guest session is gone")});
          } else if constexpr (std::is_same_v<M, wire::SyncCancel>) {
            if (m_session)
              m_session->cancelGuestSync();
          } else if constexpr (std::is_same_v<M, wire::Lease>) {
            if (m_session)
              m_session->requestLease(m.whenReady ? SurfaceLease::When::FrameReady
                                                  : SurfaceLease::When::Boundary);
          } else if constexpr (std::is_same_v<M, wire::Return>) {
            if (m_session)
              m_session->returnLease();
          } else if constexpr (std::is_same_v<M, wire::Pacing>) {
            if (m_session)
              m_session->setPacing(m.mode);
          } else if constexpr (std::is_same_v<M, wire::Presented>) {
            if (m_session)
              m_session->notePresented(m.upto);
          } else if constexpr (std::is_same_v<M, wire::Finish>) {
            wire::Finished finished;
            if (m_session) {
              const RdpSession::Finish f = m_session->finishGracefully(std::chrono::milliseconds(m.boundMs));
              finished.confirmed = f.confirmed;
              finished.elapsedMs = quint64(std::max<qint64>(f.elapsedMs, 0));
              finished.writesDropped = quint32(std::max(f.writesDropped, 0));
            }
            send(finished);
          } else if constexpr (std::is_same_v<M, wire::Abort>) {
            finish(0);
          } else if constexpr (std::is_same_v<M, wire::SelfTest>) {
            selfTest(m.mode);
          }
        }
      },
      message);
}

#ifdef GC_TEST_HOOKS
// What the sandbox lets this process do (errno of each attempt; 0: it was allowed), or a
// breach of the console's protocol on purpose.
void ReaderService::selfTest(quint8 mode) {
  switch (mode) {
  case wire::SelfTest::ProbeSandbox: {
    QStringList results;
    const auto note = [&results](const char* what, int rc) {
      results << QStringLiteral("%1=%2").arg(QLatin1String(what)).arg(rc < 0 ? errno : 0);
    };
    int fd = ::open("/etc/hostname", O_RDONLY | O_CLOEXEC);
    note("open_file", fd);
    if (fd >= 0)
      ::close(fd);
    fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    note("open_proc", fd);
    if (fd >= 0)
      ::close(fd);
    note("mkdir", ::mkdir("/tmp/gc-reader-selftest", 0700));
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    note("socket_inet", fd);
    if (fd >= 0)
      ::close(fd);
    fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    note("socket_unix", fd);
    if (fd >= 0)
      ::close(fd);
    note("kill_parent", ::kill(::getppid(), 0));
    note("ptrace", int(::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr)));
    char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
    note("execve", ::execve("/bin/true", argv, nullptr));
    const long child = ::syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
    if (child == 0)
      ::_exit(0);
    note("fork", int(child));
    void* code =
        ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    note("mmap_exec", code == MAP_FAILED ? -1 : 0);
    if (code != MAP_FAILED)
      ::munmap(code, 4096);
    // A page it could not map reads as "allowed": the probe proves nothing then.
    void* page = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    note("mprotect_exec", page == MAP_FAILED ? 0 : ::mprotect(page, 4096, PROT_READ | PROT_EXEC));
    if (page != MAP_FAILED)
      ::munmap(page, 4096);
    send(wire::SelfTestDone{results});
    break;
  }
  case wire::SelfTest::SendMalformed:
    (void)ReaderSocket::send(m_control, QByteArrayView("\xff\xff\x01", 3));
    break;
  case wire::SelfTest::SendUnaskedLease: {
    wire::Leased leased;
    leased.serial = 1;
    leased.size = QSize(64, 64);
    send(leased);
    break;
  }
  case wire::SelfTest::SendDamageOutside: {
    wire::Leased leased;
    leased.serial = 1;
    leased.size = QSize(64, 64);
    leased.damage = {QRect(0, 0, 65, 65)};
    send(leased);
    break;
  }
  case wire::SelfTest::Crash:
    std::abort();
  default:
    finish(1);
  }
}
#else
void ReaderService::selfTest(quint8) {
  qCWarning(lcReader) << "a test message in a release reader";
  finish(1);
}
#endif

void ReaderService::probe(const wire::Probe& probe, int fd) {
  wire::ProbeDone done;
  const Outcome<QByteArray> digest =
      CertificateProbe::probe(probe.host, probe.port, {}, int(probe.timeoutMs), {}, fd);
  done.ok = digest.ok();
  if (digest.ok())
    done.digest = digest.value();
  else
    done.failure = digest.failure();
  send(done);
}

void ReaderService::startSession(wire::Start& start, int fd) {
  if (fd < 0 || (m_session && m_session->state() != RdpSession::State::Finished)) {
    if (fd >= 0)
      ::close(fd);
    start.credentials.wipe();
    wire::Failed failed;
    failed.failure = Failure{Refusal::Internal, fd < 0 ? QStringLiteral("no socket for the session")
                                                       : QStringLiteral("a session is already running")};
    send(failed);
    return;
  }
  endSession(); // a finished attempt (a refused password) before this one
  m_session = std::make_unique<RdpSession>(m_desktop.bytes());
  RdpSession* session = m_session.get();
  connect(session, &RdpSession::connected, this, [this, session](QSize desktop) {
    wire::Connected c;
    c.desktop = desktop;
    c.security = session->securityProtocol();
    c.trace = session->connectTrace();
    c.residue = session->credentialResidue();
    c.channels = session->channelReport();
    c.inputCaps = session->inputCaps();
    send(c);
  });
  connect(session, &RdpSession::failed, this, [this, session](const Failure& failure) {
    wire::Failed f;
    f.failure = failure;
    f.trace = session->connectTrace();
    f.residue = session->credentialResidue();
    f.violation = session->violation();
    send(f);
  });
  connect(session, &RdpSession::lost, this, [this, session](const Failure& failure) {
    wire::Lost l;
    l.failure = failure;
    l.violation = session->violation();
    l.channels = session->channelReport();
    send(l);
  });
  connect(session, &RdpSession::frameReady, this, [this] { send(wire::FrameReady{}); });
  connect(session, &RdpSession::desktopResized, this, [this](QSize size) { send(wire::Resized{size}); });
  connect(session, &RdpSession::leased, this,
          [this, session](quint64 serial, const DesktopSurface::Changes& c) {
            wire::Leased l;
            l.serial = serial;
            l.size = session->desktopSurface().size();
            l.resized = c.resized.has_value();
            for (const DesktopSurface::Move& m : c.moves)
              l.moves.append(wire::SurfaceMove{m.source, m.target});
            l.damage = c.damage;
            send(l);
          });
  RdpConfig config = std::move(start.config);
  config.socketFd = fd;
  session->start(std::move(config), std::move(start.credentials));
  start.credentials.wipe(); // whatever was not moved
}

void ReaderService::endSession() {
  if (!m_session)
    return;
  m_session->disconnect(this);
  m_session->abort(); // a connected session disconnects properly first (bounded)
  m_session.reset();
}

void ReaderService::finish(int code) {
  if (m_finishing)
    return;
  m_finishing = true; // from here on only Closed goes out (a failed send cannot recurse)
  m_notifier.setEnabled(false);
  wire::Closed closed;
  if (m_session) {
    m_session->disconnect(this);
    m_session->abort();
    closed.ultimatumSent = m_session->ultimatumSent();
    closed.channels = m_session->channelReport();
  }
  send(closed); // best effort: the console may be gone already
  m_session.reset();
  m_desktop.wipe();
  emit finished(code);
}

} // namespace gc
