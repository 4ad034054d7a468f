// RdpSession: the one class that drives FreeRDP for the console's single guest connection.
//
// Thread affinity: the object lives on the main thread; signals are delivered there.
// FreeRDP's connect and event loop run on a worker thread the session owns. The static
// FreeRDP callbacks recover `this` from RdpContext and run on the worker, one file per stage:
// SessionSetup (connection, settings), FrameMarking (paints -> DesktopFrames), InputState
// (sends, held keys), GuestSync (the lock's sync); RdpSession.cpp keeps the lifecycle.
// Input (sendKey/sendPointer) may be called from the main thread (only the input gate does);
// it is serialized with the event loop by m_ioMutex.
// Lock order: m_lifecycleMutex, then m_ioMutex (never the reverse); m_socketMutex,
// m_syncMutex and the frame pool's mutex are leaves (nothing is locked while holding one).
//
// Frames: the live GDI buffer is only touched on the worker, inside FreeRDP's EndPaint.
// There the dirty rectangles are compared with, and copied into, a pooled full-desktop frame
// that nobody else holds (DesktopFrames); the main thread hands that frame out implicitly
// shared and it is not written again while anyone holds it, so a receiver's snapshot never
// changes. An update that changes no pixel is not handed out at all.
#pragma once

#include "common/Outcome.h"
#include "privacy/CredentialNeedles.h"
#include "privacy/ResidueScrubber.h"
#include "rdp/ChannelReport.h"
#include "rdp/ConnectGuard.h"
#include "rdp/DesktopFrames.h"
#include "rdp/DesktopSurface.h"
#include "rdp/FrameUpdate.h"
#include "rdp/GuestSync.h"
#include "rdp/InputState.h"
#include "rdp/RdpConfig.h"

#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QObject>
#include <QSize>

#include <atomic>
#include <bitset>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

struct rdp_context;

namespace gc {

class FrontGuard;
class GraphicsPipeline;
struct SessionSetup;
struct FrameMarking;

class RdpSession : public QObject {
  Q_OBJECT

public:
  enum class State { Idle, Connecting, Connected, Finished };

  explicit RdpSession(QObject* parent = nullptr);
  ~RdpSession() override; // aborts

  // Starts connecting; the outcome arrives as connected() or failed(). Once per object.
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

  // The lock's guest sync (GuestSync): a Refresh Rect request for the desktop's bottom-right
  // 16x16 corner, written after every input already sent, then the answer and/or the settle,
  // evaluated on the main thread while the event loop runs. Returns at once; `done` is called
  // once on the main thread (DRAIN_FAILED at once, from the event loop, when the session is
  // gone or the request cannot be written), unless cancelGuestSync() comes first.
  void startGuestSync(GuestSync::Timing timing, GuestSync::Done done);
  void cancelGuestSync() { m_guestSync.cancel(); }

  State state() const { return m_state.load(); }

  // The longest abort() waits for the proper disconnect of a connected session.
  static constexpr std::chrono::milliseconds kDisconnectBound{1000};
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
  Status sendPointer(quint16 x, quint16 y, quint8 buttons, qint16 wheel, int* written = nullptr);

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

  // Test evidence for "the pin is decided before any credential can be sent": how many
  // PDUs the client wrote before and after the certificate decision.
  struct ConnectTrace {
    bool certificateChecked = false;
    bool certificateAccepted = false;
    int pdusBeforeCertificate = 0;
    int pdusAfterCertificate = 0;
    bool socketConnected = false; // the TCP connection to the guest was established
  };
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

  // The validating fronts in front of FreeRDP (FrontGuard.h): what they refused, counters.
  // Created by start(); null before. Any thread.
  const FrontGuard* frontGuard() const { return m_front.get(); }

  // The surface of record (DesktopSurface.h), sized for the grant's desktop: the project's
  // RDPGFX client writes the output there. Worker only, inside FreeRDP's event processing.
  DesktopSurface& desktop() { return *m_surface; }
  // Worker, after a complete frame was written into desktop(): hands what changed on to the
  // frame pool (as EndPaint does for the GDI buffer) and to the guest sync.
  void desktopFrameEnded();

signals:
  void connected(QSize desktop);
  void frameUpdated(const gc::FrameUpdate& update);
  void desktopResized(QSize desktop);
  // RDP_REDIRECT_REFUSED (either signal) when the guest sent a Server Redirection PDU.
  void failed(const gc::Failure& failure); // before connected()
  void lost(const gc::Failure& failure);   // after connected(): RDP_LOST
  void closed();                           // after abort()

private:
  friend struct SessionSetup;
  friend struct FrameMarking;

  void run(); // worker thread
  Failure classifyConnectFailure() const;
  void freeContext();
  void reapWorker();
  // Main thread: emits what the frame pool has (posted by the worker once per batch).
  void handOutFrame();
  void postToMain(std::function<void()> fn);
  void scrubCredentialResidue(); // worker, once freerdp_connect has returned
  void adoptSocket(int fd);      // worker: FreeRDP connected its socket
  void shutdownSocket();         // any thread: wakes FreeRDP out of any blocking read
  void closeSocket();            // after the worker is gone

  RdpConfig m_config;
  rdp_context* m_context = nullptr;
  std::thread m_worker;
  std::atomic<State> m_state{State::Idle};
  std::atomic<bool> m_aborting{false};
  std::atomic<bool> m_timedOut{false};
  std::atomic<bool> m_halfClosed{false};          // finishGracefully(): the guest's close is expected
  std::atomic<bool> m_disconnectRequested{false}; // abort(): the worker disconnects properly
  std::atomic<bool> m_ultimatumSent{false};
  std::atomic<quint32> m_selectedProtocol{0xFFFFFFFF}; // FreeRDP_SelectedProtocol once connected

  // m_workerDone: set by the worker as its last act on any path, for finishGracefully()'s
  // bounded wait.
  std::mutex m_syncMutex; // a leaf
  std::condition_variable m_syncCv;
  bool m_workerDone = false;
  GuestSync m_guestSync;                // updates noted by the worker's EndPaint
  std::atomic<quint64> m_generation{0}; // bumped by abort(): stale worker posts are dropped

  mutable std::mutex m_lifecycleMutex; // m_context and m_worker lifetime
  mutable std::mutex m_ioMutex;        // FreeRDP event processing vs. input sends

  // Written on the worker (certificate callback, WritePdu hook), read by tests.
  std::atomic<bool> m_certChecked{false};
  std::atomic<bool> m_certAccepted{false};
  std::atomic<int> m_pdusBeforeCert{0};
  std::atomic<int> m_pdusAfterCert{0};
  std::atomic<int> m_writesAfterGoodbye{0}; // WritePdu hook, once half-closed: not written

  // A dup() of FreeRDP's socket. FreeRDP 3.10 waits for handshake data in 100 ms poll
  // slices without looking at its abort event (transport_read_layer -> BIO_wait_read);
  // shutdown() on our duplicate ends such a wait at once. Being a separate descriptor, it
  // cannot be recycled under us when FreeRDP closes its own.
  std::mutex m_socketMutex;
  int m_abortSocket = -1;
  std::atomic<bool> m_socketConnected{false};

  InputState m_input; // what was sent and is held (guarded by m_ioMutex)

  std::unique_ptr<DesktopSurface> m_surface; // created in start(), sized for the requested desktop
  DesktopFrames m_frames;                    // written by the worker's EndPaint, taken on the main thread
  ConnectGuard m_guard;                      // its hooks run on the worker
  std::unique_ptr<GraphicsPipeline> m_gfx;   // its callbacks run on the worker
  std::unique_ptr<FrontGuard> m_front;       // its hooks run on the worker

  // The password's forms (UTF-8, UTF-16LE, NT hash, NTOWFv2), kept (locked, dump-excluded)
  // only until the worker has scrubbed FreeRDP's copies of them after the login; the report.
  CredentialNeedles m_residueNeedles;
  ScrubReport m_residue;

  quint64 m_serial = 0; // main thread only
};

} // namespace gc
