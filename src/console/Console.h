// One console for one grant (DESIGN.md §1–§10): validates the grant, binds the exact VM,
// pins the guest's certificate, asks for credentials, connects over RDP, serves the one
// panel, runs the phases and the lock barrier, and tears everything down on every close
// path. Lives on the main thread and owns every part; the parts only talk through it.
//
// Lifetime: open() → (credentials) → SETUP … → CLOSED → finished(exitCode). Nothing is
// reused: a new grant means a new process. Where the console itself is (opening, logging in,
// serving, tearing down) is one Lifecycle (console/ConsoleLifecycle.h), changed only by
// setLifecycle(); the run's phases stay the PhaseController's.
//
// Files: Console.cpp (wiring and the running console), ConsoleOpen.cpp (open()'s steps),
// ConsoleTeardown.cpp (teardown and its wipe accounting), ConsoleEvidence.cpp (entry shapes).
#pragma once

#include "action/ActionService.h"
#include "action/ActionSocketServer.h"
#include "audit/EvidenceLog.h"
#include "bridge/frames/FramePipeline.h"
#include "bridge/panel/PanelServer.h"
#include "common/Outcome.h"
#include "console/ConsoleLifecycle.h"
#include "console/ConsoleOptions.h"
#include "console/RdpInputSink.h"
#include "grant/Grant.h"
#include "grant/RunLock.h"
#include "privacy/Credentials.h"
#include "privacy/RunDirectory.h"
#include "privacy/WipeLedger.h"
#include "readerhost/RdpReader.h"
#include "session/InputGate.h"
#include "session/LockBarrier.h"
#include "session/PhaseController.h"
#include "vm/LibvirtConnection.h"
#include "vm/VmBinding.h"
#include "vm/VmTarget.h"

#include <QImage>
#include <QObject>
#include <QTimer>

#include <chrono>
#include <deque>
#include <memory>
#include <optional>

namespace gc {

class ControlChannel;
class DomainWatcher;
namespace control {
struct Event;
}

class Console : public QObject {
  Q_OBJECT
public:
  Console(ConsoleOptions options, ControlChannel* control, QObject* parent = nullptr);
  ~Console() override;

  // What the grant says the console must bind to (shared with `guest-console check`).
  static VmTarget vmTargetOf(const Grant& grant);

  // Tests only: use this (e.g. read-write test-driver) connection instead of opening a
  // read-only one, so the test can destroy the domain the console watches.
  void useConnectionForTest(LibvirtConnection connection);
  const LibvirtConnection* connectionForTest() const { return m_connection ? &*m_connection : nullptr; }

  // Everything up to "ready" and the first credentials request. A refusal has been
  // reported on the control channel and in the evidence (when it could be opened), and
  // nothing stays open.
  Status open();

  PhaseController* phases() { return &m_phases; }
  InputGate* gate() { return &m_gate; }
  LockBarrier* barrier() { return &m_barrier; }
  const Grant& grant() const { return m_grant; }
  QImage currentFrame() const { return m_frame; }
  QString runDirectory() const { return m_runDir.path(); }
  EvidenceLog* evidence() { return &m_evidence; }
  InputSink* actionSink() { return &m_sink; }
  quint16 panelPort() const;
  ActionService* actionService() { return m_action.get(); }

  // Credentials from any source (control channel, terminal prompt); moved in and wiped.
  void provideCredentials(Credentials& credentials) { onCredentials(credentials); }

  // Any close cause ends here. Idempotent: the first reason wins.
  void close(Refusal code, const QString& message = {});

  Lifecycle lifecycle() const { return m_lifecycle; }

signals:
  // After teardown: the process's exit status (ExitCode::Ok: every close after an open).
  void finished(int exitCode);
  void rdpConnected();
  // Also sent as "credentials_required" on the control channel.
  void credentialsRequired(const QString& username, const QString& domain, int attempt);

private:
  // How long the console waits, after the action, for the guest to have read it and closed.
  // Generous: a busy guest (freerdp-shadow-cli3 in a TCG VM encoding full GFX frames) reads
  // the last input seconds late; a guest that closes returns at once.
  static constexpr std::chrono::milliseconds kActionDeliveryBound{15000};
  // After RDP_LOST, how long libvirt has to say the domain went away (a destroy drops the
  // connection first; libvirt reports the stop once its own teardown is done).
  static constexpr std::chrono::milliseconds kVmVerdictWindow{2500};

  // The one place m_lifecycle changes: an edge not in the table is refused (logged, false).
  bool setLifecycle(Lifecycle to);
  bool isConnected() const {
    return m_lifecycle == Lifecycle::Connected || m_lifecycle == Lifecycle::Serving;
  }
  bool isTornDown() const { return m_lifecycle >= Lifecycle::TearingDown; } // the enum is in order

  // open()'s steps, in order (ConsoleOpen.cpp); the first refusal ends the open in fail().
  Status prepareProcess();
  Status loadGrant();
  Status refuseReusedGrant();
  Status holdRunLock();
  Status bindVm();
  Status createRunDirectory();
  Status spawnReader();
  Status checkCertificatePin();
  Status spendGrant();
  Status openEvidence();
  Status watchDomain();
  Status listenForPanel();
  Status listenForMcp();
  Status announceReady();
  void connectPanelSignals();
  void connectActionService();
  Status fail(const Failure& failure);
  void connectBarrier();
  void requestCredentials();
  RdpConfig rdpConfig() const;
  void onCredentials(Credentials& credentials);
  void onRdpConnected(QSize desktop);
  void onRdpFailed(const Failure& failure);
  void onRdpLost(const Failure& failure);
  // The rule the guest broke, when the reader stopped the session on it; true when it was a
  // desktop size other than the grant's and the console closed RDP_DESKTOP_MISMATCH on it.
  bool recordViolation(const QString& when);
  void onRdpDesktopResized(QSize desktop);
  // The presented size against the grant's rdp.desktop (recorded either way); false: the
  // console closed RDP_DESKTOP_MISMATCH. `when` is "connect" or "resize".
  bool acceptDesktop(QSize presented, const QString& when);
  void onFrame(const gc::FrameUpdate& update);
  void onPanelAuthorized(const QString& clientKind, const QString& clientVersion);
  // The panel presented a frame: the guest's acknowledgements it covers may go.
  void onFrameAcked(quint32 frame);
  void sendWelcome();
  // The whole desktop to the panel again (after welcome, or when it could not paint a frame).
  void refreshPanel();
  void onPanelKey(quint64 seq, quint16 scancode, bool down);
  void onPanelPointer(quint64 seq, quint16 x, quint16 y, quint8 buttons, qint16 wheel);
  void submitInput(const InputEvent& event);
  void requestLock(const QString& by);
  // Expiry is a rule (PhaseController::expired); the timer only wakes the console for it.
  void armExpiryWakeUp();
  // The gate of a control-channel or panel request: closes EXPIRED and says so when expired.
  bool refuseIfExpired();
  // The guest sync's outcome as the lock must take it: GUEST_UNCONFIRMED where only the
  // screen's quiet vouches for the drained input and the grant did not allow that.
  Status acceptGuestSync(const Outcome<SyncResult>& sync);
  void onPhaseChanged(Phase from, Phase to, const QString& reason);
  PacingMode pacingMode() const; // for the phase and the panel
  void updatePacing();           // the reader's frame pacing, and the frame hold
  void updateFrameHold();        // frames wait in the reader while the encoder is busy
  void teardown();
  // The frame buffers' share of the cleanup record (WipeLedger), once the pipeline let go.
  void accountFrameWipes(const FramePipeline::Wiped& frames);
  void stopMcp();
  // RDP_LOST: was it the VM? (The connection drops before libvirt's lifecycle event when a
  // domain is destroyed.) Waits at most kVmVerdictWindow, then finishes the teardown.
  void awaitVmVerdict();
  void concludeVmVerdict(const QString& vmGoneReason);
  void finishTeardown(const Failure& reason);
  QJsonObject identity() const;
  QJsonObject inputCounts() const;
  void sendControl(const control::Event& event);
  void record(const QString& event, const QJsonObject& fields = {});

  ConsoleOptions m_options;
  ControlChannel* m_control;
  Grant m_grant;
  VmBinding m_binding;
  std::optional<RunLock> m_runLock; // held from open() until the console is destroyed
  std::optional<LibvirtConnection> m_connection;
  std::unique_ptr<DomainWatcher> m_watcher;
  RunDirectory m_runDir;
  EvidenceLog m_evidence;
  PhaseController m_phases;
  RdpInputSink m_sink;
  InputGate m_gate;
  LockBarrier m_barrier;
  std::unique_ptr<RdpReader> m_rdp; // the RDP reader process, spawned at open()
  bool m_actionFinished = false;    // the reader's graceful finish after the action ran
  std::unique_ptr<PanelServer> m_panel;
  std::unique_ptr<ActionService> m_action;
  std::unique_ptr<ActionSocketServer> m_mcp;
  FramePipeline m_pipeline;
  WipeLedger m_wipes; // what the teardown zeroed, owner by owner (the cleanup record's buffers_wiped)
  QTimer m_expiry;
  QImage m_frame;
  quint64 m_frameSerial = 0;                       // m_frame's guest serial (FrameUpdate::serial)
  std::chrono::steady_clock::time_point m_frameAt; // when m_frame arrived (a capture waits for quiet)
  QSize m_desktop; // what the session presents (the welcome, the gate's bounds)
  QByteArray m_capability;
  Lifecycle m_lifecycle = Lifecycle::Opening;
  int m_authAttempt = 0;
  quint64 m_panelRefreshes = 0; // frame_refresh requests: the panel could not paint a frame
};

} // namespace gc
