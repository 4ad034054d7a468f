// RdpSession: the one class that drives FreeRDP for the console's single guest connection.
// It runs in the RDP reader process (guest-console-rdp, ReaderService), which holds nothing
// but the guest's socket and the shared desktop; tests also run it in-process.
//
// Thread affinity: the object lives on the reader's main thread; signals are delivered there.
// FreeRDP's connect and event loop run on a worker thread the session owns. The static
// FreeRDP callbacks recover `this` from RdpContext and run on the worker, one file per stage:
// SessionSetup (connection, settings), FrameMarking (legacy paints -> the surface of record),
// InputState (sends, held keys), GuestSync (the lock's sync); RdpSession.cpp keeps the
// lifecycle. Two parts have classes of their own: the lease of the surface of record
// (SurfaceLease) and the duplicate of the guest's socket that abort() shuts (AbortSocket).
// Two enums say where the session is: State how far the connection got (Idle -> Connecting ->
// Connected -> Finished), Ending how far its ending got (Running -> HalfClosed ->
// Disconnecting/Aborting -> WorkerDone), each changed in one place against its edge table.
// Input (sendKey/sendPointer) is called from the main thread; it is serialized with the event
// loop by m_ioMutex.
// Lock order: m_lifecycleMutex, then m_ioMutex (never the reverse); m_endMutex,
// m_violationMutex, the lease's and the abort socket's mutex are leaves (nothing is locked
// while holding one).
//
// Frames: every decoder writes the desktop into ONE surface of record (DesktopSurface), in
// memory the caller gives (the shared desktop) — only on the worker, inside FreeRDP's event
// processing. Whoever reads it asks for a lease (requestLease()): at its next frame boundary
// (or the next one with changes) the worker stops processing the guest's PDUs and hands over
// what changed since the last lease (leased()); it writes again only after returnLease(). So
// a reader never sees half a frame, and the worker never writes while anyone reads. Input
// keeps flowing during a lease.
#pragma once

#include "common/Outcome.h"
#include "privacy/CredentialNeedles.h"
#include "privacy/ResidueScrubber.h"
#include "rdp/AbortSocket.h"
#include "rdp/ChannelReport.h"
#include "rdp/ConnectGuard.h"
#include "rdp/DesktopSurface.h"
#include "rdp/FramePacer.h"
#include "rdp/GuestSync.h"
#include "rdp/InputState.h"
#include "rdp/SessionHooks.h"
#include "rdp/SurfaceLease.h"
#include "readerwire/ReaderTypes.h"

#include <QObject>
#include <QSize>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>

struct rdp_context;

namespace gc {

class FrontGuard;
class GraphicsPipeline;

class RdpSession : public QObject, private SessionHooks {
  Q_OBJECT

public:
  enum class State { Idle, Connecting, Connected, Finished };
  static QString stateName(State state);
  // How far the session's ending got, beside State. Running: nothing asked. HalfClosed:
  // finishGracefully() said goodbye and shut the writing side; the guest's close is expected.
  // Disconnecting: abort() of a live session, the worker says goodbye properly before it stops.
  // Aborting: abort() of anything else, the worker stops at once. WorkerDone: the worker's last
  // act, on every path (finishGracefully() and abort() wait for it).
  enum class Ending { Running, HalfClosed, Disconnecting, Aborting, WorkerDone };
  static QString endingName(Ending ending);

  // `desktopMemory`: where the surface of record lives (the shared desktop); its size bounds
  // every desktop the guest may present. Empty: the session allocates it for the requested
  // desktop itself (tests).
  explicit RdpSession(std::span<uchar> desktopMemory = {}, QObject* parent = nullptr);
  ~RdpSession() override; // aborts

  // Starts connecting; the outcome arrives as connected() or failed(). Once per object.
  // With config.socketFd set, the session adopts that connected socket instead of connecting.
  void start(RdpConfig config, RdpCredentials credentials);
  // Stops the session: signals FreeRDP's abort event, shuts the socket down (so a read
  // FreeRDP is blocked in returns at once), joins the worker and frees FreeRDP.
  // A connected session first disconnects properly: the worker sends the MCS Disconnect
  // Provider Ultimatum and TLS close_notify (DisconnectUltimatum, freerdp_disconnect) while
  // abort() waits up to kDisconnectBound; then the socket is shut down regardless.
  // Any thread; synchronous; emits closed() (queued) if the session had started.
  void abort();

  // After the last input of a run (the action): sends the Disconnect Provider Ultimatum and
  // half-closes the connection, so the guest gets every byte already written, the ultimatum
  // and end-of-stream, and waits until the guest has read
  // them all and closed its side, or `bound` passes. Without it, tearing the connection down
  // right after the action can reset it while the action's input still sits unread on the way
  // to the guest (QEMU's user networking discards it; seen in the live lane). Main thread;
  // call abort() afterwards as always. `confirmed`: the guest closed within the bound.
  struct Finish {
    bool confirmed = false;
    qint64 elapsedMs = 0;
    // Client PDUs FreeRDP wanted to write after the goodbye (GFX frame acknowledgements for
    // frames the guest still sent), not written: the socket is shut for writing.
    int writesDropped = 0;
  };
  Finish finishGracefully(std::chrono::milliseconds bound);

  // The lock's guest sync (GuestSync): the ladder of requests the server advertised (Refresh
  // Rect for the desktop's bottom-right 16x16 corner, Suppress Output off/on, the RDPGFX
  // CapsAdvertise again), each written after every input already sent, then the answer
  // and/or the settle, evaluated on the main thread while the event loop runs. Returns at once; `done` is
  // called once on the main thread (DRAIN_FAILED at once, from the event loop, when the session is gone or
  // the request cannot be written), unless cancelGuestSync() comes first.
  void startGuestSync(GuestSync::Timing timing, GuestSync::Done done);
  void cancelGuestSync() { m_guestSync.cancel(); }

  // Frame pacing (FramePacer.h): how fast the guest's RDPGFX frames are
  // acknowledged. Unpaced until told otherwise. Leaving NoPanel asks the server for the
  // whole desktop again (Suppress Output, allow = true); entering it suppresses output (a
  // server that advertises Suppress Output: every legacy one the console meets, and
  // RDPGFX servers that honour it). Main thread; held acknowledgements that may go now go
  // at once.
  void setPacing(PacingMode mode);
  // The console's panel presented every frame up to lease `upto` (leased()'s serial).
  void notePresented(quint64 upto);
  // Before start() (tests): other bounds than FramePacer's defaults.
  void setPacingTiming(FramePacer::Timing timing);
  struct PacingState {
    PacingMode mode = PacingMode::Unpaced;
    std::size_t deferred = 0; // acknowledgements held now
    quint32 acknowledged = 0; // FrameAcknowledge PDUs sent
    quint64 handed = 0;       // leases so far
    quint64 presented = 0;    // the last notePresented()
    bool outputSuppressed = false;
  };
  PacingState pacing() const; // any thread (briefly takes the I/O mutex)

  // Main thread: the reader wants the pixels. At its next frame boundary (at once between
  // frames; a frame left open longer than kFrameHold counts as ended) the worker stops
  // writing and leased() follows with what changed since the last lease. With FrameReady,
  // at the first such boundary with changes, and no frameReady() is said for it: a reader
  // that always wants the next frame asks ahead instead of answering each frameReady().
  // Idempotent while a lease is pending or held.
  void requestLease(SurfaceLease::When when = SurfaceLease::When::Boundary);
  // Main thread, after leased(): the worker may write the desktop again.
  void returnLease();
  // The surface of record: read only between leased() and returnLease().
  const DesktopSurface& desktopSurface() const { return *m_surface; }

  State state() const { return m_state.load(); }

  // The longest abort() waits for the proper disconnect of a connected session.
  static constexpr std::chrono::milliseconds kDisconnectBound{1000};
  // A frame the server began and has not ended for this long is handed out anyway.
  static constexpr std::chrono::milliseconds kFrameHold = SurfaceLease::kFrameHold;
  // After finishGracefully() or abort() of a connected session: the ultimatum was written
  // and flushed.
  bool ultimatumSent() const { return m_ultimatumSent; }

  // The security protocol negotiated with the server (X.224), known after connected():
  // "nla" (CredSSP: the server checked the credentials before the session), "tls" (TLS only:
  // the server checks them after the connection, and may show its own login screen),
  // "rdstls", "aad", or "rdp"; empty before.
  QString securityProtocol() const;

  // Each returns after FreeRDP wrote the PDU and flushed it to the socket, or
  // INPUT_SEND_FAILED (not connected, or the write failed). scancode: 0x00xx, or 0xE0xx
  // for extended keys. buttons: bit0 left, bit1 right, bit2 middle.
  // `written` (optional): the PDUs that went out, also when a later one failed.
  Status sendKey(quint16 scancode, bool down);
  Status sendPointer(quint16 x, quint16 y, quint8 buttons, qint16 wheel, int* written = nullptr,
                     bool horizontal = false);
  // One UTF-16 code unit of the action's type_text (TS_UNICODE_KEYBOARD_EVENT).
  Status sendUnicode(quint16 codeUnit, bool down);
  // Around a run of inputs sent back to back: the PDUs written meanwhile leave together when
  // the hold ends (one segment for the guest to wake up for, not one per event). Any thread.
  void holdWrites(bool hold) { m_socket.holdSegments(hold); }
  // What the server's Input Capability Set advertised (wire::kInputCap* bits), known after
  // connected(): FreeRDP drops the events a server did not ask for without an error.
  quint32 inputCaps() const { return m_inputCaps.load(); }

  // Releases every key and button this session sent down and did not release: a key up
  // per held key, then one pointer event at the last position with no button. The lock
  // barrier calls it after the drain, so the model's action starts from a neutral guest.
  // Counts only (no scancodes leave this class). Main thread, like the sends.
  struct Released {
    int keys = 0;
    int buttons = 0;
  };
  Outcome<Released> releaseHeld();
  // What is held right now (tests and the evidence).
  Released held() const;

  // Test evidence for "the pin is decided before any credential can be sent".
  ConnectTrace connectTrace() const;

  // What the post-login scrub found: copies of the password that FreeRDP left in its own
  // allocations, overwritten by value (ResidueScrubber). Main thread, after connected() or
  // failed(); the worker wrote it before posting either.
  ScrubReport credentialResidue() const { return m_residue; }

  // The one-connection / no-redirection guard: what it admitted and refused (ConnectGuard.h).
  const ConnectGuard& connectGuard() const { return m_guard; }

  // The virtual channels: static joined, the graphics pipeline, dynamic opened and refused
  // (ChannelReport.h). Any thread; kept after abort().
  ChannelReport::Snapshot channelReport() const;

  // The rule the guest broke, when a front or a desktop check stopped the session.
  ProtocolViolation violation() const;

  // The validating fronts in front of FreeRDP (FrontGuard.h): what they refused, counters.
  // Created by start(); null before. Any thread.
  const FrontGuard* frontGuard() const { return m_front.get(); }

signals:
  void connected(QSize desktop);
  // A complete frame with changes waits in the surface (once until the next lease).
  void frameReady();
  // The worker stopped at a frame boundary: `changes` since the last lease, until returnLease().
  void leased(quint64 serial, const gc::DesktopSurface::Changes& changes);
  void desktopResized(QSize desktop);
  // RDP_REDIRECT_REFUSED (either signal) when the guest sent a Server Redirection PDU.
  void failed(const gc::Failure& failure); // before connected()
  void lost(const gc::Failure& failure);   // after connected(): RDP_LOST or the violation
  void closed();                           // after abort()

private:
  // ---- SessionHooks: the stages' side (RDP worker only) --------------------------------
  ConnectGuard& guard() override { return m_guard; }
  bool stopping() const override; // abort() was called: the worker stops (after its goodbye)
  bool judgeCertificate(const std::optional<QByteArray>& leafSha256) override;
  bool admitWrite() override;
  int takeHandedSocket() override { return std::exchange(m_config.socketFd, -1); }
  void socketConnected(int fd) override; // keeps the duplicate for abort()
  // The surface of record (DesktopSurface.h): the project's RDPGFX client and the legacy
  // path write the desktop here, inside FreeRDP's event processing.
  DesktopSurface& desktop() override { return *m_surface; }
  // The guest names a desktop size (connect, DesktopResize, ResetGraphics). Checks it against
  // what the shared desktop holds (the grant's pixel count) BEFORE anything is allocated for
  // it; a refused size is recorded as the session's violation (the caller then fails the PDU,
  // which ends the session). Whether it is the grant's size is the console's judgement: every
  // admitted size reaches it (desktopResized).
  bool admitDesktopSize(QSize size, const char* pdu) override;
  // A frame begins (RDPGFX StartFrame, a Surface Frame Marker BEGIN): no lease until it ends.
  void desktopFrameBegan() override;
  // A frame is complete in desktop() (RDPGFX EndFrame, a frame marker END, or one update of
  // a server that marks no frames): the guest sync sees it, a reader is told.
  void desktopFrameEnded() override;
  // desktop() was resized to an admitted size; the console hears of every one.
  void noteDesktopResized(QSize size) override;
  // A desktop check refused the guest's bytes; the session ends with this as its cause.
  void noteViolation(ProtocolViolation violation);

  // The one place m_state changes: checks the edge, logs a refused one.
  bool setState(State to);
  // The one place m_ending changes: checks the edge; a refused one leaves it as it is (an
  // ending that got further already) and is logged unless the worker is done.
  bool setEnding(Ending to);
  Ending ending() const { return m_ending.load(); }
  void run(); // worker thread
  Failure classifyConnectFailure() const;
  Failure violationFailure() const; // the recorded violation as the session's failure
  void freeContext();
  void reapWorker();
  void postToMain(std::function<void()> fn);
  void scrubCredentialResidue(); // worker, once freerdp_connect has returned
  // Worker, between events: grants a requested lease at a frame boundary and waits until it
  // is returned (or the session aborts).
  void serveLease();
  void sayFrameReady(); // worker: frameReady(), once per lease
  // Under m_ioMutex: held acknowledgements go out if the pacing allows it now.
  void releaseDueAcknowledgements();
  // Under m_ioMutex, connected: Suppress Output matching the pacing mode, if it changed.
  void applySuppressOutput();
  // The ladder's request for `rung` (GuestSync::Ask): main thread, takes the locks.
  GuestSync::Request askGuest(SyncConfirmation rung);
  // The RDPGFX pipeline as the ladder sees it (GuestSync::PipelineState): main thread, no lock.
  GuestSync::Pipeline pipelineState();

  RdpConfig m_config;
  rdp_context* m_context = nullptr;
  std::thread m_worker;
  std::atomic<State> m_state{State::Idle};
  // Changed under m_endMutex (the worker's WorkerDone wakes m_endCv); read anywhere.
  std::atomic<Ending> m_ending{Ending::Running};
  std::atomic<bool> m_timedOut{false}; // why connecting failed: the connect timeout
  std::atomic<bool> m_ultimatumSent{false};
  std::atomic<quint32> m_selectedProtocol{0xFFFFFFFF}; // FreeRDP_SelectedProtocol once connected
  std::atomic<quint32> m_inputCaps{0};                 // the server's input flags once connected

  std::mutex m_endMutex; // a leaf
  std::condition_variable m_endCv;
  GuestSync m_guestSync;                // updates noted by the worker at each frame's end
  std::atomic<quint64> m_generation{0}; // bumped by abort(): stale worker posts are dropped

  mutable std::mutex m_lifecycleMutex; // m_context and m_worker lifetime
  mutable std::mutex m_ioMutex;        // FreeRDP event processing vs. input sends

  // Written on the worker (certificate callback, WritePdu hook), read by tests.
  std::atomic<bool> m_certChecked{false};
  std::atomic<bool> m_certAccepted{false};
  std::atomic<int> m_pdusBeforeCert{0};
  std::atomic<int> m_pdusAfterCert{0};
  std::atomic<int> m_writesAfterGoodbye{0}; // WritePdu hook, once half-closed: not written

  AbortSocket m_socket; // a duplicate of FreeRDP's, for abort() and finishGracefully()

  InputState m_input; // what was sent and is held (guarded by m_ioMutex)

  // The surface of record and its lease.
  std::unique_ptr<DesktopSurface> m_surface;
  SurfaceLease m_lease;

  // The pacing (guarded by m_ioMutex: the worker decides at each EndFrame and between
  // events, the main thread changes the mode); leases handed out, set by serveLease().
  FramePacer m_pacer;
  std::atomic<quint64> m_handed{0};
  bool m_outputSuppressed = false; // m_ioMutex

  ConnectGuard m_guard;                    // its hooks run on the worker
  std::unique_ptr<GraphicsPipeline> m_gfx; // its callbacks run on the worker
  std::unique_ptr<FrontGuard> m_front;     // its hooks run on the worker

  mutable std::mutex m_violationMutex; // a leaf
  ProtocolViolation m_violation;       // the first one only

  // The password's forms (UTF-8, UTF-16LE, NT hash, NTOWFv2), kept (locked, dump-excluded)
  // only until the worker has scrubbed FreeRDP's copies of them after the login; the report.
  CredentialNeedles m_residueNeedles;
  ScrubReport m_residue;
};

} // namespace gc

Q_DECLARE_METATYPE(gc::DesktopSurface::Changes)
