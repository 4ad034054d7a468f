// ActionService: what the MCP tools do, on the console side (DESIGN.md §6, §8). Lives on
// the main thread, like the PhaseController it asks, so a tool call can never interleave
// with a panel message or a phase change. Transport-agnostic: ActionSocketServer routes the
// relay's calls here; tests call it directly.
//
// - status: phase, run, task, VM, grant digest (and the candidates, as data).
// - captureDesktop: CAPTURING or REVIEWING only; the current frame as PNG in memory, scaled
//   to the grant's capture size (CaptureScaler; the grant's `capture` section).
//   The first capture moves CAPTURING → REVIEWING. The evidence gets the PNG's SHA-256 only
//   (of the PNG the model got).
// - zoomDesktop: a region of the capture's space at full desktop resolution, where capture is
//   allowed; an observation, not the action: it uses nothing up and changes no phase.
// - performAction: REVIEWING only; validates the arguments against the grant (the canonical
//   vocabulary or one dialect, the grant's kinds and limits, what the server advertised),
//   maps its coordinates from the capture's space to the desktop (CoordinateMapping),
//   then moves to ACTION, sends the plan ONCE through the sink (a hold's or wait's pause runs
//   the event loop, so panic and expiry still act), releases what a failed or interrupted
//   send left pressed, lets the guest confirm it read the input (the reader's graceful
//   finish), writes and emits the receipt and moves to CLOSED. Whatever the outcome, every
//   later call is refused (ALREADY_ACTED) and sends nothing.
// - requestLock: the same LockBarrier the panel uses, recorded as requested by "mcp". It
//   returns once the lock is committed; whenLockSettled() tells when capture has started
//   (the guest sync runs asynchronously in READ_ONLY), so a caller waits for, not races, it.
// - every call first passes admit(): past the grant's expires_at (wall clock) it is refused
//   EXPIRED and the console closes EXPIRED.
#pragma once

#include "action/ActionPlan.h"
#include "action/CoordinateMapping.h"
#include "action/Receipt.h"
#include "common/Outcome.h"
#include "grant/Grant.h"

#include <QDeadlineTimer>
#include <QImage>
#include <QJsonObject>
#include <QObject>

#include <chrono>
#include <functional>
#include <optional>

namespace gc {

class EvidenceLog;
class InputSink;
class LockBarrier;
class PhaseController;

class ActionService : public QObject {
  Q_OBJECT
public:
  // The bound VM as the binder confirmed it (VmBinding::uuid / name).
  struct VmIdentity {
    QString uuid;
    QString name;
  };
  struct Capture {
    QByteArray png; // memory only; never written anywhere
    int width = 0;  // the PNG's size
    int height = 0;
    QSize from;   // the desktop it was taken of (capture: scaled from; zoom: the region's desktop size)
    QRect region; // zoom only: the desktop rectangle returned, and the request in the capture's space
    QRect requested;
    QByteArray sha256Hex;
    QJsonObject lockConfirmation; // how the guest confirmed the setup's input at the lock
  };
  using FrameSource = std::function<QImage()>;
  struct Released {
    int keys = 0;
    int buttons = 0;
  };
  // Releases every key and button the session holds (RdpReader::releaseHeld).
  using ReleaseHeld = std::function<Outcome<Released>(QDeadlineTimer)>;
  struct GuestConfirmation {
    bool confirmed = false;
    qint64 elapsedMs = 0;
  };
  // After the last input: the reader's graceful finish (the guest read it all and closed).
  using ConfirmGuest = std::function<GuestConfirmation()>;

  // None of the pointers is owned; all must outlive the service. `currentFrame` returns
  // the latest complete guest frame (a null QImage when none has arrived yet).
  ActionService(const Grant& grant, VmIdentity vm, PhaseController* phases, LockBarrier* barrier,
                EvidenceLog* evidence, InputSink* sink, FrameSource currentFrame, QObject* parent = nullptr);
  ~ActionService() override;

  const Grant& grant() const { return m_grant; }
  bool hasActed() const { return m_acted; }
  // Per event sent through the sink; the whole action has at most a few events.
  void setSendTimeout(std::chrono::milliseconds timeout) { m_sendTimeout = timeout; }
  // What the guest's server advertised for input; none when unset.
  void setInputCaps(std::function<InputCaps()> caps) { m_inputCaps = std::move(caps); }
  void setReleaseHeld(ReleaseHeld release) { m_releaseHeld = std::move(release); }
  void setConfirmGuest(ConfirmGuest confirm) { m_confirmGuest = std::move(confirm); }
  // Where the console last put the guest's pointer (dialect actions "at the pointer").
  void setPointerPosition(std::function<std::optional<QPoint>()> pointer) { m_pointer = std::move(pointer); }
  // When the guest's picture last changed (the newest frame's arrival), and how a capture
  // waits for it to settle: no change for `quiet`, at most `bound`.
  using Clock = std::chrono::steady_clock;
  void setPictureSettle(std::function<Clock::time_point()> lastChange, std::chrono::milliseconds quiet,
                        std::chrono::milliseconds bound);

  QJsonObject status() const;
  Outcome<Capture> captureDesktop();
  // zoom_desktop's arguments: {"region": [x0, y0, x1, y1]} in the capture's space (edges; x1,
  // y1 exclusive). OBSERVATION_INVALID outside the space, empty, or beyond the grant's bound.
  Outcome<Capture> zoomDesktop(const QJsonObject& arguments);
  // The capture's coordinate space for the current desktop (the grant's capture size).
  Outcome<CoordinateMapping> currentMapping() const;
  // `arguments` is the perform_action tool's arguments object. Refusals (ALREADY_ACTED,
  // PHASE_WRONG, ACTION_INVALID) send nothing and return a Failure; once the action is
  // under way the result is always a Receipt, with outcome "executed" or "failed".
  // Invalid arguments and a wrong phase do not use up the one action: nothing was sent.
  Outcome<Receipt> performAction(const QJsonObject& arguments);
  Status requestLock();
  // Calls `done` once: at once unless the guest sync of a lock is under way, else when capture
  // starts (success) or the lock failed / the console closed (the reason).
  void whenLockSettled(std::function<void(const Status&)> done);
  // Calls `done` once the picture has not changed for the quiet time, or when the bound has
  // passed (an animated desktop never settles): a capture right after the lock would
  // otherwise show a picture the guest is still refining (progressive upgrade passes). The
  // next capture's or zoom's evidence records how it went.
  void whenPictureSettled(std::function<void()> done);
  // The expiry gate of every tool call (`op`: the relay operation, for the refusal count).
  Status admit(const QString& op);

signals:
  // Exactly once per service, after the receipt line is in the evidence log, before CLOSED.
  void receiptIssued(const QJsonObject& receipt);
  // Every refused tool call, for the console's counters ("perform_action", ALREADY_ACTED).
  void refused(const QString& op, gc::Refusal code);

private:
  struct Resolved {
    ActionSpec spec;
    const Candidate* candidate = nullptr;
    QString dialect;
    QJsonObject original;
    CoordinateMapping mapping; // the space the spec's coordinates are in
  };
  Outcome<Resolved> resolve(const QJsonObject& arguments, const CoordinateMapping& mapping) const;
  // Encodes `image` (wiped afterwards) into capture.png and its hash; false when it cannot.
  bool encode(QImage& image, Capture& capture);
  // A hold's or wait's duration; false when the console closed meanwhile (`onClose` ran then).
  bool pause(int ms, const std::function<void()>& onClose);
  // Releases what the session holds, once per receipt; records action_released.
  void releaseAll(Receipt::Release& release);
  Failure refuse(const QString& op, Refusal code, const QString& message);
  void record(const QString& event, const QJsonObject& fields);
  void syncEvidence(); // every line so far on disk (EvidenceLog::sync)

  Grant m_grant;
  VmIdentity m_vm;
  PhaseController* m_phases;
  LockBarrier* m_barrier;
  EvidenceLog* m_evidence;
  InputSink* m_sink;
  FrameSource m_currentFrame;
  std::chrono::milliseconds m_sendTimeout{5000};
  std::function<InputCaps()> m_inputCaps;
  ReleaseHeld m_releaseHeld;
  ConfirmGuest m_confirmGuest;
  std::function<std::optional<QPoint>()> m_pointer;
  QByteArray m_textKey; // keys the text hash in the evidence; random per console, memory only
  bool m_acted = false;
  int m_captures = 0;
  int m_zooms = 0;
  std::function<Clock::time_point()> m_lastChange;
  std::chrono::milliseconds m_settleQuiet{0};
  std::chrono::milliseconds m_settleBound{0};
  QJsonObject m_pictureSettle; // the last whenPictureSettled's outcome, for the next capture's entry
};

} // namespace gc
