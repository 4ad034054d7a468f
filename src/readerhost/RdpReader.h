// RdpReader: the console's handle on its RDP reader process (guest-console-rdp), the one
// process that parses the guest's bytes: the protocol client over the reader wire (the
// process itself is ReaderProcess). The console spawns it before the grant is consumed
// (so a machine that cannot run it refuses the run with nothing spent), connects the TCP
// socket to the granted loopback port itself and hands it over, and then talks to it only in
// ReaderWire messages. The reader holds nothing but that socket and the shared desktop
// (SharedDesktop); the console holds the phases, the gate, the lock, the evidence and the
// MCP service, and treats every message from the reader as untrusted: each is decoded
// strictly (ReaderWire), checked against the state it may arrive in and the desktop it may
// describe, and any breach — or the reader dying — kills it and ends the session with
// RDP_READER_FAILED.
//
// The interface is the session's (what the console needs of an RDP connection): start,
// input sends that return once the PDUs are written and flushed, the lock's guest sync, the
// graceful finish, abort, and frames. Frames: the reader says a frame is ready; the console
// leases the shared desktop, copies what changed into its frame pool (DesktopFrames) and
// returns the lease; frameUpdated() hands the frame on as before. The frame bookkeeping (the
// lease's checks, the pool, the moves, the pacing's "presented") is ReaderFrames'.
//
// Thread: the console's main thread. Calls that wait for an answer (spawn, probe, the sends,
// releaseHeld, finishGracefully, abort) block it for at most their bound; every other
// message is handled from the event loop.
#pragma once

#include "common/Outcome.h"
#include "readerhost/FrameUpdate.h"
#include "readerhost/ReaderFrames.h"
#include "readerhost/ReaderProcess.h"
#include "readerwire/ReaderSocket.h"
#include "readerwire/ReaderTypes.h"
#include "readerwire/ReaderWire.h"
#include "readerwire/SharedDesktop.h"

#include <QObject>
#include <QSize>
#include <QSocketNotifier>
#include <QTimer>

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <variant>

namespace gc {

class RdpReader : public QObject {
  Q_OBJECT
public:
  enum class State {
    Idle,       // nothing spawned
    Ready,      // the reader runs and serves (between sessions, after a refused password)
    Connecting, // a session is being opened
    Connected,
    Finished, // the reader is gone (aborted, died, or broke the protocol)
  };
  static QString stateName(State state);

  // The reader executable (ReaderProcess::defaultProgram()).
  static QString defaultProgram() { return ReaderProcess::defaultProgram(); }

  explicit RdpReader(QObject* parent = nullptr);
  ~RdpReader() override; // aborts

  // Spawns the reader with a shared desktop for `maxDesktop` (its pixel count bounds every
  // desktop the guest may present) and waits (at most `bound`) for it to say it is ready
  // with its sandbox applied. RESOURCE_EXHAUSTED when the process, the socketpair or the
  // memory cannot be had; RDP_READER_FAILED when it does not come up.
  Status spawn(QSize maxDesktop, const QString& program = defaultProgram(),
               std::chrono::milliseconds bound = std::chrono::seconds(20));
  // What the reader applied of its sandbox (SandboxReport::Applied bits), after spawn().
  quint32 sandbox() const { return m_sandbox; }
  qint64 pid() const { return m_process.pid(); }

  // The guest's certificate (SHA-256 of its DER, 32 bytes), learnt by the reader over a socket
  // the console connects: nothing but X.224 and the TLS handshake is sent. With a pin, a
  // different certificate is GUEST_CERT_MISMATCH; RDP_UNREACHABLE when nothing answers.
  // Blocking, at most timeoutMs plus a margin.
  Outcome<QByteArray> probe(const QString& host, quint16 port, const QByteArray& expectedPin, int timeoutMs);

  // Opens the session: connects to config.host:config.port (127.0.0.1 only) and hands the
  // socket and the credentials to the reader; the outcome arrives as connected() or failed().
  // Again after a failed() for another attempt (a refused password).
  void start(RdpConfig config, RdpCredentials credentials);

  // Ends the reader: a connected session first disconnects properly (the Disconnect Provider
  // Ultimatum and TLS close_notify, bounded by the reader), then the process exits (killed
  // after a bound). Synchronous; emits closed() (queued) if a session had started.
  void abort();
  static constexpr std::chrono::milliseconds kDisconnectBound{1000};

  struct Finish {
    bool confirmed = false;
    qint64 elapsedMs = 0;
    int writesDropped = 0;
  };
  // RdpSession::finishGracefully in the reader: blocking, at most `bound` plus a margin.
  Finish finishGracefully(std::chrono::milliseconds bound);

  using SyncDone = std::function<void(const Outcome<SyncResult>&)>;
  // The lock's guest sync in the reader; `done` once, from the event loop (DRAIN_FAILED when
  // the reader is gone), unless cancelGuestSync() comes first. A result comes once the frames
  // hold the desktop as it was when the reader sent it (a lease after it was absorbed).
  void startGuestSync(SyncTiming timing, SyncDone done);
  void cancelGuestSync();

  // Frame pacing in the reader (rdp/FramePacer.h): the mode, and "the panel
  // presented every frame up to FrameUpdate::serial `upto`" (a frame's serial is the newest
  // lease it holds). Fire and forget.
  void setPacing(PacingMode mode);
  void notePresented(quint64 upto);
  // While frames are not held, the next frame is asked for ahead if setLeaseAhead() allows
  // it (a standing lease: no FrameReady and no request per frame). While held, no lease is
  // asked for: beyond the one asked before the hold (at most one frame), the guest's changes
  // gather on the shared desktop (the reader keeps their damage) instead of in a frame of the
  // console's pool, and the lease follows the release with all of them at once. The console
  // holds frames while its encoder is busy with one, so the pool needs no third frame for the
  // one it could not use yet. The lock's guest sync leases regardless.
  void holdFrames(bool hold);
  // SETUP only: asks for each next frame ahead. Off (from the lock on), each frame is leased
  // after its FrameReady and no lease stands: the action's graceful finish waits for the
  // reader to read the guest to its end, which a lease granted meanwhile would stop (the
  // reader's worker would wait for its return, the reader inside the finish for the worker).
  void setLeaseAhead(bool ahead);
  // A frame the reader said is ready waits for the release (tests).
  bool frameWaiting() const { return m_frameWaiting; }
  // A lease is asked for and not yet granted (tests).
  bool leaseAsked() const { return m_leaseAsked != LeaseAsk::None; }

  State state() const { return m_state; }
  bool ultimatumSent() const { return m_ultimatumSent; }
  QString securityProtocol() const { return m_security; }
  ConnectTrace connectTrace() const { return m_trace; }
  ScrubReport credentialResidue() const { return m_residue; }
  ChannelSnapshot channelReport() const { return m_channels; }
  ProtocolViolation violation() const { return m_violation; }
  // How the reader ended: its exit status, or the rule of ours it broke (for the evidence).
  QString exitDescription() const { return m_exit; }

  // One input message to the reader; answered by one InputDone.
  using InputMessage = std::variant<wire::Key, wire::Pointer, wire::Unicode>;
  // At most this many inputs are sent ahead of their answers (ReaderWire.h).
  static constexpr std::size_t kInputsInFlight = wire::kInputsInFlight;
  // Sends `inputs` in order (each gets a fresh id) and returns once every one was answered,
  // or at the first that failed, INPUT_SEND_FAILED. `*delivered`: how many, from the first,
  // the reader wrote and flushed; `written[i]` (when given, as long as `inputs`): the PDUs
  // input i put on the wire. `deadline`: how long to wait for all of the reader's answers.
  Status sendInputs(std::span<InputMessage> inputs, std::chrono::milliseconds deadline,
                    std::size_t* delivered, std::span<int> written = {});
  // One input each; return once the reader wrote and flushed the PDUs, or INPUT_SEND_FAILED.
  Status sendKey(quint16 scancode, bool down, std::chrono::milliseconds deadline = std::chrono::seconds(5));
  Status sendPointer(quint16 x, quint16 y, quint8 buttons, qint16 wheel, int* written = nullptr,
                     std::chrono::milliseconds deadline = std::chrono::seconds(5), bool horizontal = false);
  // One UTF-16 code unit as a TS_UNICODE_KEYBOARD_EVENT (the action's type_text).
  Status sendUnicode(quint16 codeUnit, bool down,
                     std::chrono::milliseconds deadline = std::chrono::seconds(5));
  // What the server advertised for input (wire::kInputCap* bits), once connected.
  quint32 inputCaps() const { return m_inputCaps; }
  struct Released {
    int keys = 0;
    int buttons = 0;
  };
  Outcome<Released> releaseHeld(std::chrono::milliseconds deadline = std::chrono::seconds(5));

  // Test builds (wire::SelfTest): ProbeSandbox answers "what=errno" per attempt; the other
  // modes make the reader break the protocol or crash, and return at once.
  Outcome<QStringList> selfTest(quint8 mode, std::chrono::milliseconds bound = std::chrono::seconds(10));

signals:
  void connected(QSize desktop);
  void frameUpdated(const gc::FrameUpdate& update);
  void desktopResized(QSize desktop);
  void failed(const gc::Failure& failure); // before connected()
  void lost(const gc::Failure& failure);   // after connected()
  void closed();                           // after abort()

private:
  bool setState(State to);
  void readable();
  // Reads datagrams until one of `type` arrives (returned) or `bound` passes; every other one
  // is queued for the event loop. RDP_READER_FAILED when the reader dies or breaks the rules.
  Outcome<wire::FromReader> awaitReply(wire::Type type, std::chrono::milliseconds bound);
  // One decoded message from the event loop.
  void dispatch(wire::FromReader message);
  void dispatchQueued();
  // What the console asked the reader for (wire::Lease): nothing, the next frame with changes
  // (standing: asked ahead whenever frames are not held), or the next boundary. Ordered: a
  // request is sent only for more than what is asked already.
  enum class LeaseAsk : quint8 { None, WhenReady, Boundary };
  void requestLease(LeaseAsk ask);
  void askAhead(); // the standing lease, when setLeaseAhead() and the hold allow it
  Status sendToReader(const wire::ToReader& message, int passFd = -1);
  // Sends encoded datagrams in order (one system call for a run; `passFd` only beside a
  // single one), then zeroes them whether or not they went.
  Status sendToReader(std::span<QByteArray> datagrams, int passFd = -1);
  // One input message (Key, Pointer, Unicode): sendInputs with one.
  Status sendInput(InputMessage input, std::chrono::milliseconds deadline, int* written);
  // Waits for the InputDone of send `id` (earlier answers that arrive late are skipped).
  Status awaitInputDone(quint32 id, std::chrono::milliseconds deadline, int* written);
  // The reader broke the protocol or died: it is killed, the session ends (RDP_READER_FAILED).
  void breach(const QString& why);
  void onLeased(const wire::Leased& leased);
  void kill(bool graceful);
  void noteExit(); // the process was reaped: its status joins m_exit
  Outcome<int> connectGuest(const QString& host, quint16 port, int timeoutMs) const;

  State m_state = State::Idle;
  SharedDesktop m_desktop;
  int m_socket = -1;
  ReaderProcess m_process;
  quint32 m_sandbox = 0;
  std::unique_ptr<QSocketNotifier> m_notifier;
  std::deque<wire::FromReader> m_queued; // arrived while a blocking call waited
  bool m_dispatchPosted = false;
  quint32 m_nextId = 1;

  LeaseAsk m_leaseAsked = LeaseAsk::None;
  bool m_framesHeld = false;   // holdFrames()
  bool m_leaseAhead = false;   // setLeaseAhead()
  bool m_frameWaiting = false; // a FrameReady came while held
  ReaderFrames m_frames;

  SyncDone m_syncDone;
  std::optional<SyncResult> m_syncHeld; // the sync's result, until the lease after it is absorbed
  bool m_ultimatumSent = false;
  bool m_sessionStarted = false;
  QString m_security;
  ConnectTrace m_trace;
  ScrubReport m_residue;
  ChannelSnapshot m_channels;
  ProtocolViolation m_violation;
  quint32 m_inputCaps = 0;
  QString m_exit;
};

} // namespace gc
