#include "readerhost/RdpReader.h"

#include "common/StateTable.h"
#include "common/SystemError.h"
#include "privacy/SecureBytes.h"
#include "privacy/SecureZero.h"
#include "readerwire/SandboxReport.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QLoggingCategory>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace gc {

namespace {

Q_LOGGING_CATEGORY(lcReader, "gc.reader")

// How much longer than the reader's own bound the console waits for its answer.
constexpr std::chrono::milliseconds kReplyMargin{3000};
// After Abort: the reader's proper disconnect, then its exit.
constexpr std::chrono::milliseconds kExitBound{2000};
// The largest desktop side the reader may name (rdp/front/Limits.h kMaxSide).
constexpr int kMaxSide = 8192;
// A descriptor at or above this is never one of the reader's fixed numbers (3, 4).
constexpr int kHighFd = 10;

constexpr quint32 kRequiredSandbox = SandboxReport::kRequired;

} // namespace

namespace {
using S = RdpReader::State;
// Back to Ready after a session failed or was lost (the reader serves another attempt);
// Finished from anywhere, for good.
constexpr auto kStates =
    makeStateTable<S>({"idle", "ready", "connecting", "connected", "finished"},
                      {
                          {S::Idle, S::Ready, "spawned, its sandbox applied"},
                          {S::Ready, S::Connecting, "start(): the guest's socket handed over"},
                          {S::Connecting, S::Connected, "the session is up"},
                          {S::Connecting, S::Ready, "the session failed: another attempt may follow"},
                          {S::Connected, S::Ready, "the session was lost"},
                          {S::Idle, S::Finished, "spawn failed"},
                          {S::Ready, S::Finished, "aborted, died or broke the protocol"},
                          {S::Connecting, S::Finished, "aborted, died or broke the protocol"},
                          {S::Connected, S::Finished, "aborted, died or broke the protocol"},
                          {S::Finished, S::Finished, "ending again is a no-op"},
                      });
} // namespace

QString RdpReader::stateName(State state) {
  return kStates.name(state);
}

RdpReader::RdpReader(QObject* parent) : QObject(parent) {
  qRegisterMetaType<gc::FrameUpdate>();
  qRegisterMetaType<gc::Failure>();
  connect(&m_frames, &ReaderFrames::frameUpdated, this, &RdpReader::frameUpdated);
  connect(&m_frames, &ReaderFrames::presentDue, this, [this](quint64 upto) {
    if (m_state == State::Connected)
      notePresented(upto);
  });
  connect(&m_process, &ReaderProcess::exited, this, [this] {
    noteExit();
    if (m_state != State::Finished)
      breach(QStringLiteral("the RDP reader exited (%1)").arg(m_exit));
  });
}

RdpReader::~RdpReader() {
  abort();
}

bool RdpReader::setState(State to) {
  const State from = m_state;
  if (!kStates.allows(from, to)) {
    qCWarning(lcReader).noquote() << "RdpReader: refused state change" << stateName(from) << "->"
                                  << stateName(to);
    return false;
  }
  m_state = to;
  return true;
}

Status RdpReader::spawn(QSize maxDesktop, const QString& program, std::chrono::milliseconds bound) {
  if (m_state != State::Idle)
    return Status(Refusal::Internal, QStringLiteral("the RDP reader was spawned already"));
  if (maxDesktop.isEmpty())
    return Status(Refusal::Internal, QStringLiteral("no desktop size for the RDP reader"));
  m_frames.setMaxDesktop(maxDesktop);
  Outcome<SharedDesktop> desktop =
      SharedDesktop::create(qsizetype(maxDesktop.width()) * maxDesktop.height() * 4);
  if (!desktop.ok())
    return Status(desktop.failure());
  m_desktop = std::move(desktop).value();
  Outcome<ReaderSocket::Pair> pair = ReaderSocket::pair();
  if (!pair.ok())
    return Status(pair.failure());
  // Above the reader's fixed numbers, so the spawn's dup2 to 3 and 4 always makes a copy
  // without close-on-exec.
  const int readerEnd = ::fcntl(pair->reader, F_DUPFD_CLOEXEC, kHighFd);
  const int memfd = ::fcntl(m_desktop.fd(), F_DUPFD_CLOEXEC, kHighFd);
  ::close(pair->reader);
  m_socket = pair->console;
  m_desktop.closeDescriptor();
  const auto fail = [&](Refusal code, const QString& why) {
    if (readerEnd >= 0)
      ::close(readerEnd);
    if (memfd >= 0)
      ::close(memfd);
    ::close(m_socket);
    m_socket = -1;
    m_desktop = SharedDesktop();
    setState(State::Finished);
    return Status(code, why);
  };
  if (readerEnd < 0 || memfd < 0)
    return fail(Refusal::ResourceExhausted,
                QStringLiteral("no descriptor for the RDP reader: %1").arg(errnoText()));

  const Status started = m_process.start(program, readerEnd, memfd);
  if (!started.ok())
    return fail(started.code(), started.failure().message);
  ::close(readerEnd);
  ::close(memfd);

  const Outcome<wire::FromReader> ready = awaitReply(wire::Type::Ready, bound);
  if (!ready.ok()) {
    kill(false);
    return Status(ready.code() == Refusal::RdpReaderFailed ? Refusal::ResourceExhausted : ready.code(),
                  QStringLiteral("the RDP reader did not start: %1").arg(ready.failure().message));
  }
  const auto& r = std::get<wire::Ready>(ready.value());
  if (r.version != wire::kVersion || (r.sandbox & kRequiredSandbox) != kRequiredSandbox) {
    kill(false);
    return Status(Refusal::RdpReaderFailed,
                  QStringLiteral("the RDP reader runs without its sandbox (version %1, 0x%2)")
                      .arg(r.version)
                      .arg(r.sandbox, 0, 16));
  }
  m_sandbox = r.sandbox;
  m_notifier = std::make_unique<QSocketNotifier>(m_socket, QSocketNotifier::Read);
  connect(m_notifier.get(), &QSocketNotifier::activated, this, &RdpReader::readable);
  m_frames.startTrim();
  setState(State::Ready);
  return success();
}

Outcome<int> RdpReader::connectGuest(const QString& host, quint16 port, int timeoutMs) const {
  if (host != QStringLiteral("127.0.0.1"))
    return Failure{Refusal::RdpRuleNotLoopback, QStringLiteral("the RDP host must be 127.0.0.1")};
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return Failure{errno == EMFILE || errno == ENFILE ? Refusal::ResourceExhausted : Refusal::RdpUnreachable,
                   QStringLiteral("socket: %1").arg(errnoText())};
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  if (rc != 0 && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    rc = ::poll(&p, 1, std::max(1, timeoutMs)) == 1 ? 0 : -1;
    int error = rc == 0 ? 0 : ETIMEDOUT;
    socklen_t len = sizeof error;
    if (rc == 0 && (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0 || error != 0))
      rc = -1;
    errno = error;
  }
  if (rc != 0) {
    const QString why = errnoText();
    ::close(fd);
    return Failure{Refusal::RdpUnreachable,
                   QStringLiteral("cannot connect to %1:%2: %3").arg(host).arg(port).arg(why)};
  }
  // What FreeRDP's own connect sets: no Nagle delay for input, a receive buffer of at least
  // 32 KiB, keep-alive; and blocking again (FreeRDP's transport expects a blocking socket).
  const int one = 1, rcvbuf = 32 * 1024;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  int current = 0;
  socklen_t len = sizeof current;
  if (::getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &current, &len) == 0 && current < rcvbuf)
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

Outcome<QByteArray> RdpReader::probe(const QString& host, quint16 port, const QByteArray& expectedPin,
                                     int timeoutMs) {
  if (m_state != State::Ready)
    return Failure{Refusal::RdpReaderFailed, QStringLiteral("the RDP reader is not ready")};
  Outcome<int> fd = connectGuest(host, port, timeoutMs);
  if (!fd.ok())
    return fd.failure();
  wire::Probe probe;
  probe.host = host;
  probe.port = port;
  probe.timeoutMs = quint32(std::max(1, timeoutMs));
  const Status sent = sendToReader(probe, fd.value());
  ::close(fd.value());
  if (!sent.ok())
    return sent.failure();
  const Outcome<wire::FromReader> reply =
      awaitReply(wire::Type::ProbeDone, std::chrono::milliseconds(timeoutMs) + kReplyMargin);
  if (!reply.ok())
    return reply.failure();
  const auto& done = std::get<wire::ProbeDone>(reply.value());
  if (!done.ok)
    return done.failure;
  if (done.digest.size() != 32)
    return Failure{Refusal::RdpReaderFailed,
                   QStringLiteral("the reader's certificate digest is not 32 bytes")};
  if (!expectedPin.isEmpty() && done.digest != expectedPin)
    return Failure{Refusal::GuestCertMismatch,
                   QStringLiteral("the guest's certificate does not match the pin")};
  return done.digest;
}

void RdpReader::start(RdpConfig config, RdpCredentials credentials) {
  struct Wipe {
    RdpCredentials& c;
    ~Wipe() { c.wipe(); }
  } wipe{credentials};
  const auto failLater = [this](const Failure& f) {
    QMetaObject::invokeMethod(
        this, [this, f] { emit failed(f); }, Qt::QueuedConnection);
  };
  if (m_state != State::Ready)
    return failLater(Failure{Refusal::RdpReaderFailed, QStringLiteral("the RDP reader is not ready")});
  Outcome<int> fd = connectGuest(config.host, config.port, config.connectTimeoutMs);
  if (!fd.ok())
    return failLater(fd.failure());
  wire::Start start;
  start.config = std::move(config);
  start.config.configDir.clear();
  start.config.socketFd = -1;
  start.credentials = std::move(credentials);
  QByteArray datagram = wire::encode(wire::ToReader(std::move(start)));
  const Status sent = ReaderSocket::send(m_socket, datagram, fd.value());
  secureZero(datagram.data(), std::size_t(datagram.size())); // it carried the credentials
  ::close(fd.value());
  if (!sent.ok()) {
    breach(sent.failure().message);
    return;
  }
  m_sessionStarted = true;
  m_frames.startSession(); // the pacing counts a new session's leases
  m_frameWaiting = false;
  m_leaseAsked = LeaseAsk::None; // the reader's lease is the session's
  setState(State::Connecting);
}

Status RdpReader::sendToReader(const wire::ToReader& message, int passFd) {
  QByteArray datagram = wire::encode(message);
  return sendToReader(std::span(&datagram, 1), passFd);
}

Status RdpReader::sendToReader(std::span<QByteArray> datagrams, int passFd) {
  Status sent = success();
  if (m_socket < 0)
    sent = Status(Refusal::RdpReaderFailed, QStringLiteral("the RDP reader is gone"));
  else if (passFd >= 0 && datagrams.size() != 1)
    sent = Status(Refusal::Internal, QStringLiteral("a descriptor goes beside one datagram"));
  else
    sent = passFd >= 0 ? ReaderSocket::send(m_socket, datagrams.front(), passFd)
                       : ReaderSocket::sendAll(m_socket, datagrams);
  for (QByteArray& datagram : datagrams)
    secureWipe(datagram); // input messages carry what the operator typed
  return sent;
}

Outcome<wire::FromReader> RdpReader::awaitReply(wire::Type type, std::chrono::milliseconds bound) {
  QElapsedTimer clock;
  clock.start();
  static ReaderSocket::Buffer buffer; // the main thread only
  while (m_socket >= 0) {
    const qint64 left = bound.count() - clock.elapsed();
    if (left <= 0)
      break;
    // What already waits is read before any poll: a run's answers arrive together.
    int fd = -1;
    const ReaderSocket::Received r = ReaderSocket::receive(m_socket, buffer, fd, true);
    if (fd >= 0) {
      ::close(fd);
      breach(QStringLiteral("the RDP reader passed a descriptor"));
      return Failure{Refusal::RdpReaderFailed, m_exit};
    }
    if (r == ReaderSocket::Received::WouldBlock) {
      pollfd p{m_socket, POLLIN, 0};
      if (::poll(&p, 1, int(std::min<qint64>(left, 1000))) < 0 && errno != EINTR)
        break;
      continue;
    }
    if (r != ReaderSocket::Received::Datagram) {
      breach(r == ReaderSocket::Received::Closed
                 ? QStringLiteral("the RDP reader closed its socket")
                 : QStringLiteral("the RDP reader sent a malformed datagram"));
      return Failure{Refusal::RdpReaderFailed, m_exit};
    }
    Outcome<wire::FromReader> message = wire::decodeFromReader(buffer.view());
    buffer.wipe();
    if (!message.ok()) {
      breach(message.failure().message);
      return message.failure();
    }
    const wire::Type got =
        std::visit([](const auto& m) { return std::decay_t<decltype(m)>::kType; }, message.value());
    if (got == type)
      return message;
    m_queued.push_back(std::move(message).value());
    if (!m_dispatchPosted) {
      m_dispatchPosted = true;
      QMetaObject::invokeMethod(this, &RdpReader::dispatchQueued, Qt::QueuedConnection);
    }
  }
  return Failure{
      Refusal::RdpReaderFailed,
      QStringLiteral("no %1 from the RDP reader within %2 ms").arg(wire::typeName(type)).arg(bound.count())};
}

void RdpReader::readable() {
  static ReaderSocket::Buffer buffer; // the main thread only
  for (int n = 0; n < 64 && m_socket >= 0; ++n) {
    int fd = -1;
    const ReaderSocket::Received r = ReaderSocket::receive(m_socket, buffer, fd, true);
    if (fd >= 0) {
      ::close(fd);
      return breach(QStringLiteral("the RDP reader passed a descriptor"));
    }
    if (r == ReaderSocket::Received::WouldBlock)
      return;
    if (r != ReaderSocket::Received::Datagram)
      return breach(r == ReaderSocket::Received::Closed
                        ? QStringLiteral("the RDP reader closed its socket")
                        : QStringLiteral("the RDP reader sent a malformed datagram"));
    Outcome<wire::FromReader> message = wire::decodeFromReader(buffer.view());
    buffer.wipe();
    if (!message.ok())
      return breach(message.failure().message);
    dispatch(std::move(message).value());
  }
}

void RdpReader::dispatchQueued() {
  m_dispatchPosted = false;
  while (!m_queued.empty() && m_state != State::Finished) {
    wire::FromReader message = std::move(m_queued.front());
    m_queued.pop_front();
    dispatch(std::move(message));
  }
}

void RdpReader::dispatch(wire::FromReader message) {
  if (m_state == State::Finished)
    return;
  std::visit(
      [this](auto& m) {
        using M = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<M, wire::Connected>) {
          if (m_state != State::Connecting)
            return breach(QStringLiteral("connected outside a connect"));
          if (!m_frames.fitsShared(m.desktop))
            return breach(QStringLiteral("a desktop larger than the shared desktop"));
          if (!m.channels.wellFormed())
            return breach(QStringLiteral("a malformed channel report"));
          if (m.inputCaps &
              ~(wire::kInputCapUnicode | wire::kInputCapHorizontalWheel | wire::kInputCapExtendedMouse))
            return breach(QStringLiteral("unknown input capability bits"));
          m_inputCaps = m.inputCaps;
          m_frames.setSize(m.desktop);
          m_security = m.security.left(16);
          m_trace = m.trace;
          m_residue = m.residue;
          m_channels = m.channels;
          setState(State::Connected);
          askAhead(); // the first frame, without a FrameReady before it
          emit connected(m.desktop);
        } else if constexpr (std::is_same_v<M, wire::Failed>) {
          if (m_state != State::Connecting)
            return breach(QStringLiteral("a failure outside a connect"));
          m_trace = m.trace;
          m_residue = m.residue;
          m_violation = m.violation;
          setState(State::Ready);
          emit failed(m.failure);
        } else if constexpr (std::is_same_v<M, wire::Lost>) {
          if (m_state != State::Connected)
            return breach(QStringLiteral("a loss outside a session"));
          m_violation = m.violation;
          if (m.channels.wellFormed())
            m_channels = m.channels;
          setState(State::Ready);
          // A sync held for its lease gets none now.
          if (std::exchange(m_syncHeld, std::nullopt))
            if (SyncDone done = std::exchange(m_syncDone, nullptr))
              done(Failure{Refusal::DrainFailed, QStringLiteral("the guest session ended during the lock")});
          emit lost(m.failure);
        } else if constexpr (std::is_same_v<M, wire::FrameReady>) {
          if (m_state != State::Connected)
            return; // a frame of a session that just ended
          if (m_framesHeld)
            m_frameWaiting = true;
          else
            requestLease(LeaseAsk::Boundary);
        } else if constexpr (std::is_same_v<M, wire::Leased>) {
          onLeased(m);
        } else if constexpr (std::is_same_v<M, wire::Resized>) {
          // Every size the guest named, also one the reader refused for not fitting the shared
          // desktop (the console judges and records it); only RDP's own bounds apply here.
          if (m_state != State::Connected)
            return breach(QStringLiteral("a resize outside a session"));
          if (m.size.isEmpty() || m.size.width() > kMaxSide || m.size.height() > kMaxSide)
            return breach(QStringLiteral("a desktop size out of range"));
          emit desktopResized(m.size);
        } else if constexpr (std::is_same_v<M, wire::SyncDone>) {
          if (!m_syncDone)
            return;
          // What answered is on the shared desktop by now, but maybe not yet in the console's
          // frame, and a capture may follow at once. A lease granted after this message was
          // sent holds it (an outstanding one too: its grant comes later on this socket), so
          // the result waits until the next lease is absorbed.
          if (m.ok && m_state == State::Connected) {
            requestLease(LeaseAsk::Boundary);
            if (m_leaseAsked != LeaseAsk::None) {
              m_syncHeld = m.result;
              return;
            }
          }
          SyncDone done = std::exchange(m_syncDone, nullptr);
          done(m.ok ? Outcome<SyncResult>(m.result) : Outcome<SyncResult>(m.failure));
        } else if constexpr (std::is_same_v<M, wire::Closed>) {
          m_ultimatumSent = m.ultimatumSent;
          if (m.channels.wellFormed())
            m_channels = m.channels;
        }
        // Late answers of a call that gave up waiting (InputDone, Released, Finished,
        // ProbeDone) are dropped; a second Ready is a breach.
        else if constexpr (std::is_same_v<M, wire::Ready>) {
          breach(QStringLiteral("a second ready"));
        }
      },
      message);
}

void RdpReader::requestLease(LeaseAsk ask) {
  if (m_leaseAsked >= ask)
    return;
  wire::Lease lease;
  lease.whenReady = ask == LeaseAsk::WhenReady;
  if (sendToReader(lease).ok())
    m_leaseAsked = ask;
}

void RdpReader::holdFrames(bool hold) {
  m_framesHeld = hold;
  if (hold || m_state != State::Connected)
    return;
  if (std::exchange(m_frameWaiting, false))
    requestLease(LeaseAsk::Boundary);
  else
    askAhead();
}

void RdpReader::askAhead() {
  if (m_state == State::Connected && !m_framesHeld && m_leaseAhead)
    requestLease(LeaseAsk::WhenReady);
}

void RdpReader::onLeased(const wire::Leased& leased) {
  if (m_leaseAsked == LeaseAsk::None || m_state != State::Connected)
    return breach(QStringLiteral("a lease nobody asked for"));
  m_frameWaiting = false; // this lease holds the waiting frame too
  ReaderFrames::Absorbed absorbed;
  if (const std::optional<QString> broken = m_frames.absorb(leased, m_desktop.constBytes(), absorbed))
    return breach(*broken);
  m_leaseAsked = LeaseAsk::None;
  if (!sendToReader(wire::Return{leased.serial}).ok())
    return breach(QStringLiteral("cannot return the lease"));
  m_frames.settle(leased.serial, absorbed);
  askAhead(); // unless the frame just handed out keeps the encoder busy
  if (std::optional<SyncResult> held = std::exchange(m_syncHeld, std::nullopt))
    if (SyncDone done = std::exchange(m_syncDone, nullptr))
      done(*held);
}

Status RdpReader::awaitInputDone(quint32 id, std::chrono::milliseconds deadline, int* written) {
  while (true) {
    const Outcome<wire::FromReader> reply = awaitReply(wire::Type::InputDone, deadline);
    if (!reply.ok())
      return Status(Refusal::InputSendFailed, reply.failure().message);
    const auto& done = std::get<wire::InputDone>(reply.value());
    if (done.id < id)
      continue; // the answer to an earlier send that gave up waiting
    if (done.id != id || done.written > 8)
      return breach(QStringLiteral("an answer to a send never made")),
             Status(Refusal::InputSendFailed, m_exit);
    if (written)
      *written = int(done.written);
    return done.ok ? success() : Status(done.failure);
  }
}

Status RdpReader::sendInputs(std::span<InputMessage> inputs, std::chrono::milliseconds deadline,
                             std::size_t* delivered, std::span<int> written) {
  *delivered = 0;
  if (!written.empty() && written.size() != inputs.size())
    return Status(Refusal::Internal, QStringLiteral("one written count per input"));
  for (int& w : written)
    w = 0;
  if (m_state != State::Connected)
    return Status(Refusal::InputSendFailed, QStringLiteral("not connected"));
  QElapsedTimer clock;
  clock.start();
  const quint32 first = m_nextId;
  std::size_t sent = 0;
  while (*delivered < inputs.size()) {
    // Refill the window once half of it was answered: the reader handles what it finds
    // queued as one run (one segment to the guest, its answers together), so refilling after
    // every answer would cut the runs back to one input each.
    const bool refill = sent - *delivered <= kInputsInFlight / 2;
    std::array<QByteArray, kInputsInFlight> batch;
    std::size_t batched = 0;
    for (; refill && sent < inputs.size() && sent - *delivered < kInputsInFlight; ++sent) {
      std::visit(
          [this, chained = sent > 0](auto& m) {
            m.id = m_nextId++;
            m.chained = chained;
          },
          inputs[sent]);
      batch[batched++] =
          std::visit([](const auto& m) { return wire::encode(wire::ToReader(m)); }, inputs[sent]);
    }
    if (batched) {
      if (const Status s = sendToReader(std::span(batch.data(), batched)); !s.ok())
        return Status(Refusal::InputSendFailed, s.failure().message);
    }
    const auto left = std::chrono::milliseconds(std::max<qint64>(0, deadline.count() - clock.elapsed()));
    int w = 0;
    if (Status s = awaitInputDone(first + quint32(*delivered), left, &w); !s.ok())
      return s;
    if (!written.empty())
      written[*delivered] = w;
    ++*delivered;
  }
  return success();
}

Status RdpReader::sendInput(InputMessage input, std::chrono::milliseconds deadline, int* written) {
  std::size_t delivered = 0;
  int w = 0;
  Status s = sendInputs(std::span(&input, 1), deadline, &delivered, std::span(&w, 1));
  if (written)
    *written = w;
  return s;
}

Status RdpReader::sendKey(quint16 scancode, bool down, std::chrono::milliseconds deadline) {
  wire::Key key;
  key.scancode = scancode;
  key.down = down;
  return sendInput(key, deadline, nullptr);
}

Status RdpReader::sendUnicode(quint16 codeUnit, bool down, std::chrono::milliseconds deadline) {
  wire::Unicode unicode;
  unicode.codeUnit = codeUnit;
  unicode.down = down;
  return sendInput(unicode, deadline, nullptr);
}

Status RdpReader::sendPointer(quint16 x, quint16 y, quint8 buttons, qint16 wheel, int* written,
                              std::chrono::milliseconds deadline, bool horizontal) {
  wire::Pointer pointer;
  pointer.x = x;
  pointer.y = y;
  pointer.buttons = buttons;
  pointer.wheel = wheel;
  pointer.horizontal = horizontal;
  return sendInput(pointer, deadline, written);
}

Outcome<RdpReader::Released> RdpReader::releaseHeld(std::chrono::milliseconds deadline) {
  if (m_state != State::Connected)
    return Failure{Refusal::InputSendFailed, QStringLiteral("not connected")};
  wire::ReleaseHeld release;
  release.id = m_nextId++;
  if (Status s = sendToReader(release); !s.ok())
    return Failure{Refusal::InputSendFailed, s.failure().message};
  while (true) {
    const Outcome<wire::FromReader> reply = awaitReply(wire::Type::Released, deadline);
    if (!reply.ok())
      return Failure{Refusal::InputSendFailed, reply.failure().message};
    const auto& done = std::get<wire::Released>(reply.value());
    if (done.id < release.id)
      continue;
    if (done.id != release.id || done.keys > 512 + 16 || done.buttons > 8) {
      breach(QStringLiteral("an implausible release"));
      return Failure{Refusal::InputSendFailed, m_exit};
    }
    if (!done.ok)
      return done.failure;
    return Released{int(done.keys), int(done.buttons)};
  }
}

Outcome<QStringList> RdpReader::selfTest(quint8 mode, std::chrono::milliseconds bound) {
  wire::SelfTest test;
  test.mode = mode;
  if (Status s = sendToReader(test); !s.ok())
    return s.failure();
  if (mode != wire::SelfTest::ProbeSandbox)
    return QStringList();
  const Outcome<wire::FromReader> reply = awaitReply(wire::Type::SelfTestDone, bound);
  if (!reply.ok())
    return reply.failure();
  return std::get<wire::SelfTestDone>(reply.value()).results;
}

void RdpReader::startGuestSync(SyncTiming timing, SyncDone done) {
  const auto failLater = [this, &done](const QString& why) {
    QMetaObject::invokeMethod(
        this,
        [done = std::move(done), why] {
          done(Failure{Refusal::DrainFailed, why});
        },
        Qt::QueuedConnection);
  };
  if (m_state != State::Connected)
    return failLater(QStringLiteral("the guest session is gone"));
  m_syncDone = std::move(done);
  if (!sendToReader(wire::SyncStart{timing}).ok()) {
    done = std::exchange(m_syncDone, nullptr);
    failLater(QStringLiteral("the RDP reader is gone"));
  }
}

void RdpReader::cancelGuestSync() {
  m_syncDone = nullptr;
  m_syncHeld.reset();
  if (m_state == State::Connected)
    (void)sendToReader(wire::SyncCancel{});
}

void RdpReader::setPacing(PacingMode mode) {
  // A reader that is gone is noticed by its exit watch, not here.
  if (m_state == State::Connecting || m_state == State::Connected)
    (void)sendToReader(wire::Pacing{mode});
}

void RdpReader::setLeaseAhead(bool ahead) {
  m_leaseAhead = ahead;
  // No lease stands from here on: one asked ahead is made due at the next boundary.
  if (!ahead && m_leaseAsked == LeaseAsk::WhenReady && m_state == State::Connected)
    requestLease(LeaseAsk::Boundary);
  askAhead();
}

void RdpReader::notePresented(quint64 upto) {
  if (m_state != State::Connected)
    return;
  if (const std::optional<quint64> presented = m_frames.present(upto))
    (void)sendToReader(wire::Presented{*presented});
}

RdpReader::Finish RdpReader::finishGracefully(std::chrono::milliseconds bound) {
  if (m_state != State::Connected)
    return {};
  wire::Finish finish;
  finish.boundMs = quint32(std::clamp<qint64>(bound.count(), 0, 600000));
  if (!sendToReader(finish).ok())
    return {};
  const Outcome<wire::FromReader> reply = awaitReply(wire::Type::Finished, bound + kReplyMargin);
  if (!reply.ok())
    return {};
  const auto& f = std::get<wire::Finished>(reply.value());
  return {f.confirmed, qint64(std::min<quint64>(f.elapsedMs, quint64(bound.count()) + 1000)),
          int(f.writesDropped)};
}

void RdpReader::abort() {
  if (m_state == State::Idle)
    return;
  const bool hadStarted = m_sessionStarted;
  bool done = false;
  m_syncDone = nullptr;
  m_syncHeld.reset();
  if (m_socket >= 0 && m_state != State::Finished) {
    // The reader disconnects a live session properly (bounded by its own kDisconnectBound),
    // says Closed and exits.
    if (sendToReader(wire::Abort{}).ok()) {
      const Outcome<wire::FromReader> closed = awaitReply(wire::Type::Closed, kDisconnectBound + kExitBound);
      if (closed.ok()) {
        const auto& c = std::get<wire::Closed>(closed.value());
        m_ultimatumSent = c.ultimatumSent;
        if (c.channels.wellFormed())
          m_channels = c.channels;
        done = true;
      }
    }
  }
  setState(State::Finished);
  // After Closed the reader has disconnected and wiped the desktop: nothing is left for it to
  // do but run its exit handlers, which nobody needs to wait for.
  kill(!done);
  if (hadStarted)
    QMetaObject::invokeMethod(
        this, [this] { emit closed(); }, Qt::QueuedConnection);
  m_sessionStarted = false;
}

void RdpReader::breach(const QString& why) {
  if (m_state == State::Finished)
    return;
  qCWarning(lcReader).noquote() << "closing the RDP reader:" << why;
  if (m_exit.isEmpty())
    m_exit = why;
  const State before = m_state;
  setState(State::Finished);
  kill(false);
  const Failure failure{Refusal::RdpReaderFailed, m_exit};
  m_syncHeld.reset();
  if (SyncDone done = std::exchange(m_syncDone, nullptr))
    QMetaObject::invokeMethod(
        this, [done, failure] { done(failure); }, Qt::QueuedConnection);
  if (before == State::Connecting)
    QMetaObject::invokeMethod(
        this, [this, failure] { emit failed(failure); }, Qt::QueuedConnection);
  else if (before == State::Connected)
    QMetaObject::invokeMethod(
        this, [this, failure] { emit lost(failure); }, Qt::QueuedConnection);
}

void RdpReader::kill(bool graceful) {
  m_notifier.reset();
  if (m_socket >= 0) {
    ::close(m_socket);
    m_socket = -1;
  }
  // After Closed it exits by itself: it gets kExitBound, then SIGKILL. A reader that broke
  // the rules gets SIGKILL at once.
  if (m_process.running()) {
    m_process.stop(graceful, kExitBound);
    noteExit();
  }
  m_frames.wipe();
  m_desktop.wipe(); // guest pixels
}

void RdpReader::noteExit() {
  const QString how = m_process.exitStatus();
  m_exit = m_exit.isEmpty() ? how : QStringLiteral("%1 (%2)").arg(m_exit, how);
}

} // namespace gc
