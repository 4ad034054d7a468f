#include "console/Console.h"

#include "console/ConsoleEvidence.h"
#include "grant/KeyboardLayout.h"
#include "privacy/SecureImage.h"
#include "session/ControlChannel.h"
#include "vm/DomainWatcher.h"

#include <QLoggingCategory>

namespace gc {

Q_LOGGING_CATEGORY(lcConsole, "gc.console")

Console::Console(ConsoleOptions options, ControlChannel* control, QObject* parent)
    : QObject(parent), m_options(std::move(options)), m_control(control), m_gate(&m_phases, &m_sink),
      m_barrier(&m_phases, &m_gate, m_options.drainDeadline) {
  m_expiry.setSingleShot(true);
  m_expiry.setTimerType(Qt::PreciseTimer);
  // Only a wake-up: the wall clock decides (PhaseController::expired). Early → sleep again.
  connect(&m_expiry, &QTimer::timeout, this, [this] {
    if (!m_phases.closeIfExpired())
      armExpiryWakeUp();
  });
  m_sink.setExpiredCheck([this] { return m_phases.expired(); });
  connect(&m_phases, &PhaseController::phaseChanged, this, &Console::onPhaseChanged);
  // Teardown runs from the event loop, never inside the barrier or a socket callback.
  connect(&m_phases, &PhaseController::closed, this, &Console::teardown, Qt::QueuedConnection);
  connect(&m_gate, &InputGate::deliveryFailed, this, [this](const Failure& f) {
    if (f.code == Refusal::Expired)
      close(Refusal::Expired, f.message);
    else
      close(Refusal::RdpLost, QStringLiteral("input delivery failed: ") + f.message);
  });
  connectBarrier();
  connect(&m_pipeline, &FramePipeline::packetReady, this, [this](const QByteArray& packet, quint32) {
    if (m_panel)
      m_panel->sendBinary(packet);
  });
  connect(&m_pipeline, &FramePipeline::encodingChanged, this, &Console::updateFrameHold);
  // The panel showed the guest's frames up to `serial`: the guest's acknowledgements they
  // hold may go.
  connect(&m_pipeline, &FramePipeline::presented, this, [this](quint64 serial) {
    if (m_rdp)
      m_rdp->notePresented(serial);
  });
  if (m_control) {
    connect(m_control, &ControlChannel::credentialsReceived, this, &Console::onCredentials);
    connect(m_control, &ControlChannel::lockRequested, this,
            [this] { requestLock(QStringLiteral("control")); });
    connect(m_control, &ControlChannel::closeRequested, this, [this](Refusal reason) { close(reason); });
    connect(m_control, &ControlChannel::panicRequested, this, [this] { close(Refusal::Panic); });
    connect(m_control, &ControlChannel::parentGone, this, [this] { close(Refusal::ParentGone); });
  }
}

// The lock barrier's three hooks: release what the setup held down, the guest sync, and the
// drained announcement (panel, control channel, evidence).
void Console::connectBarrier() {
  m_barrier.setReleaseHeld([this](QDeadlineTimer deadline) -> Status {
    const Outcome<RdpInputSink::Released> released = m_sink.releaseHeld(deadline);
    if (!released)
      return Status(released.failure());
    record(QStringLiteral("held_input_released"),
           QJsonObject{{QStringLiteral("keys_released"), released->keys},
                       {QStringLiteral("buttons_released"), released->buttons}});
    return success();
  });
  m_barrier.setGuestSync(
      [this](QDeadlineTimer deadline, LockBarrier::SyncDone done) {
        if (!m_rdp) {
          done(Status(Refusal::DrainFailed, QStringLiteral("no guest session")));
          return;
        }
        SyncTiming timing;
        timing.deadline = std::chrono::milliseconds(std::max<qint64>(0, deadline.remainingTime()));
        timing.quiet = m_options.guestSettleQuiet;
        timing.answerWait = m_options.guestAnswerWait;
        timing.mayRestartGraphics = m_grant.lock.confirmation != Grant::Lock::Confirmation::Settle;
        m_rdp->startGuestSync(timing, [this, done = std::move(done)](const Outcome<SyncResult>& sync) {
          done(acceptGuestSync(sync));
        });
      },
      [this] {
        if (m_rdp)
          m_rdp->cancelGuestSync();
        record(QStringLiteral("guest_sync"),
               QJsonObject{{QStringLiteral("result"), QStringLiteral("cancelled")}});
      },
      m_options.guestSyncDeadline);
  connect(&m_barrier, &LockBarrier::drained, this, [this](quint64 upto) {
    if (m_panel) {
      m_panel->sendText(panel::drained(upto));
      m_panel->flush(); // before the held-input release and the commit that follow
    }
    sendControl(control::drained(upto));
    record(QStringLiteral("drain"),
           QJsonObject{{QStringLiteral("result"), QStringLiteral("ok")},
                       {QStringLiteral("upto"), qint64(upto)},
                       {QStringLiteral("delivered"), qint64(m_gate.deliveredCount())}});
  });
}

Console::~Console() {
  if (!isTornDown()) {
    m_phases.close(Refusal::Internal, QStringLiteral("console destroyed"));
    teardown();
  }
}

bool Console::setLifecycle(Lifecycle to) {
  const Lifecycle from = m_lifecycle;
  const std::optional<QString> why = lifecycleEdgeReason(from, to);
  if (!why) {
    qCWarning(lcConsole).noquote() << "refused lifecycle change" << lifecycleName(from) << "->"
                                   << lifecycleName(to);
    return false;
  }
  m_lifecycle = to;
  qCInfo(lcConsole).noquote() << "lifecycle" << lifecycleName(from) << "->" << lifecycleName(to) << ":"
                              << *why;
  return true;
}

VmTarget Console::vmTargetOf(const Grant& grant) {
  VmTarget target;
  target.uri = grant.vm.libvirtUri;
  target.uuid = grant.vm.uuid;
  target.name = grant.vm.name;
  target.hostPort = grant.rdp.port;
  target.guestPort = grant.rdp.guestPort;
  return target;
}

void Console::useConnectionForTest(LibvirtConnection connection) {
  m_connection = std::move(connection);
}

quint16 Console::panelPort() const {
  return m_panel ? m_panel->port() : 0;
}

void Console::record(const QString& event, const QJsonObject& fields) {
  if (!m_evidence.isOpen())
    return;
  if (Status s = m_evidence.append(event, fields); !s.ok())
    qCWarning(lcConsole) << "evidence:" << s.failure().toString();
}

void Console::sendControl(const control::Event& event) {
  if (m_control)
    m_control->send(event);
}

// Once connected: the negotiated security ("tls" = no NLA: the guest checks the password after
// the connection, and a retyped one travels as panel keys) and the keyboard layout sent.
QJsonObject Console::identity() const {
  const bool connected = isConnected() && m_rdp;
  return entry::identity(m_grant, m_options.policy.allowUnsigned,
                         connected ? std::optional<QString>(m_rdp->securityProtocol()) : std::nullopt);
}

QJsonObject Console::inputCounts() const {
  return QJsonObject{{QStringLiteral("accepted"), qint64(m_gate.acceptedCount())},
                     {QStringLiteral("delivered"), qint64(m_gate.deliveredCount())},
                     {QStringLiteral("refused"), entry::refusalCounts(m_gate.refusedCounts())}};
}

void Console::armExpiryWakeUp() {
  const qint64 ms = m_phases.now().msecsTo(m_phases.expiresAt());
  m_expiry.start(int(std::clamp<qint64>(ms, 0, std::numeric_limits<int>::max())));
}

bool Console::refuseIfExpired() {
  if (!m_phases.closeIfExpired())
    return false;
  sendControl(control::error(Refusal::Expired, QStringLiteral("the grant has expired")));
  return true;
}

Status Console::acceptGuestSync(const Outcome<SyncResult>& sync) {
  record(QStringLiteral("guest_sync"), entry::guestSync(sync));
  if (!sync.ok())
    return Status(sync.failure());
  m_barrier.noteConfirmation(entry::lockConfirmation(*sync, m_grant.lock.confirmation));
  // A quiet screen is not a confirmation: a frozen guest is quiet too, and would run the
  // drained input later, just before the model's action. Fail closed unless the
  // grant opted into the weaker rule.
  const bool settleAllowed = m_grant.lock.confirmation == Grant::Lock::Confirmation::Settle;
  if (sync->confirmedBy == SyncConfirmation::SettleOnly && !settleAllowed) {
    const QString why =
        sync->rungsAsked
            ? QStringLiteral("the guest answered none of the requests after the drained input")
            : QStringLiteral("the guest's server advertises none of the requests it could answer");
    record(
        QStringLiteral("guest_unconfirmed"),
        QJsonObject{{QStringLiteral("why"), why},
                    {QStringLiteral("required"), Grant::Lock::confirmationName(m_grant.lock.confirmation)}});
    return Status(Refusal::GuestUnconfirmed,
                  why + QStringLiteral(": capture refused (the grant requires the guest's confirmation)"));
  }
  return success();
}

void Console::requestCredentials() {
  if (!setLifecycle(Lifecycle::AwaitingCredentials))
    return;
  ++m_authAttempt;
  const QJsonValue username = m_grant.panel.metadata.value(QStringLiteral("username"));
  const QJsonValue domain = m_grant.panel.metadata.value(QStringLiteral("domain"));
  sendControl(control::credentialsRequired(username, domain, m_authAttempt, m_options.maxAuthAttempts));
  // `--credentials tty` asks on the terminal from here (OpenCommand).
  emit credentialsRequired(username.toString(), domain.toString(), m_authAttempt);
}

void Console::onCredentials(Credentials& credentials) {
  if (m_phases.expired()) {
    credentials.wipe();
    refuseIfExpired();
    return;
  }
  if (m_lifecycle != Lifecycle::AwaitingCredentials || m_phases.isClosed()) {
    credentials.wipe();
    sendControl(control::error(Refusal::PhaseWrong, QStringLiteral("no credentials were asked for")));
    return;
  }
  setLifecycle(Lifecycle::Connecting);
  record(QStringLiteral("connecting"), QJsonObject{{QStringLiteral("attempt"), m_authAttempt}});
  m_rdp->start(rdpConfig(), std::move(credentials));
  credentials.wipe(); // whatever was not moved
}

// What the reader connects to and asks for, from the grant.
RdpConfig Console::rdpConfig() const {
  RdpConfig config;
  config.host = m_grant.rdp.host;
  config.port = m_grant.rdp.port;
  config.pinSha256 = m_grant.rdp.certSha256;
  config.unpinned = m_grant.rdp.unpinned;
  config.connectTimeoutMs = m_options.connectTimeoutMs;
  const Grant::Desktop& desktop = m_grant.rdp.desktop;
  const quint32 klid = desktop.keyboardLayout;
  config.desktop = ClientDesktop{quint32(desktop.width),
                                 quint32(desktop.height),
                                 klid,
                                 KeyboardLayout::keyboardType(klid),
                                 KeyboardLayout::keyboardSubType(klid),
                                 KeyboardLayout::functionKeys(klid)};
  config.sizeFromServer = desktop.sizeFrom == Grant::Desktop::SizeFrom::Server;
  return config;
}

void Console::onRdpFailed(const Failure& failure) {
  record(QStringLiteral("connect_failed"),
         entry::connectFailed(failure.code, m_authAttempt, m_rdp->credentialResidue()));
  // A size the reader refused before anything was allocated for it: judged and recorded as
  // one presented at connect (acceptDesktop closes RDP_DESKTOP_MISMATCH).
  if (recordViolation(QStringLiteral("connect")))
    return;
  // The reader serves another attempt (a refused password) unless it is gone itself.
  if (failure.code == Refusal::AuthFailed && m_authAttempt < m_options.maxAuthAttempts &&
      m_rdp->state() == RdpReader::State::Ready) {
    sendControl(control::error(Refusal::AuthFailed, failure.message));
    requestCredentials();
    return;
  }
  close(failure.code == Refusal::AuthFailed ? Refusal::AuthExhausted : failure.code, failure.message);
}

void Console::onRdpLost(const Failure& failure) {
  if (recordViolation(QStringLiteral("resize")))
    return;
  close(failure.code, failure.message);
}

bool Console::recordViolation(const QString& when) {
  const ProtocolViolation v = m_rdp ? m_rdp->violation() : ProtocolViolation{};
  if (v.isSet())
    record(QStringLiteral("protocol_violation"), entry::protocolViolation(v));
  if (m_rdp && m_rdp->state() == RdpReader::State::Finished && !m_rdp->exitDescription().isEmpty())
    record(QStringLiteral("reader"),
           QJsonObject{{QStringLiteral("result"), refusalName(Refusal::RdpReaderFailed)},
                       {QStringLiteral("reason"), m_rdp->exitDescription()}});
  // A desktop size other than the grant's that the reader refused before anything was
  // allocated for it: judged and recorded as one presented (acceptDesktop closes).
  const QSize presented = v.desktop;
  if (v.code != Refusal::RdpDesktopMismatch || presented.isEmpty() || presented.width() > 8192 ||
      presented.height() > 8192 || m_phases.isClosed())
    return false;
  return !acceptDesktop(presented, when);
}

bool Console::acceptDesktop(QSize presented, const QString& when) {
  const Grant::Desktop& grant = m_grant.rdp.desktop; // what the console asked for
  const QSize requested(grant.width, grant.height);
  record(QStringLiteral("desktop"), entry::desktop(when, grant, presented));
  if (presented == requested || grant.sizeFrom == Grant::Desktop::SizeFrom::Server)
    return true;
  close(Refusal::RdpDesktopMismatch,
        QStringLiteral("the guest presented %1x%2 %3; the grant names %4x%5")
            .arg(presented.width())
            .arg(presented.height())
            .arg(when == u"connect" ? QStringLiteral("at connect") : QStringLiteral("after a resize"))
            .arg(requested.width())
            .arg(requested.height()));
  return false;
}

void Console::onRdpDesktopResized(QSize desktop) {
  if (m_phases.isClosed())
    return;
  if (!acceptDesktop(desktop, QStringLiteral("resize")))
    return; // CLOSED: the gate refuses everything from here on
  m_desktop = desktop;
  m_gate.setDesktopSize(desktop);
}

void Console::onRdpConnected(QSize desktop) {
  // The size is judged before anything can reach the guest: no session for the input sink,
  // not Connected (panel input is refused), no welcome.
  if (!acceptDesktop(desktop, QStringLiteral("connect")))
    return;
  if (!setLifecycle(m_panel && m_panel->hasPanel() ? Lifecycle::Serving : Lifecycle::Connected))
    return;
  m_desktop = desktop;
  m_sink.setSession(m_rdp.get());
  m_gate.setDesktopSize(desktop);
  updatePacing();
  record(QStringLiteral("connected"),
         entry::connected(desktop, m_rdp->securityProtocol(), m_rdp->channelReport().connectedJson(),
                          m_rdp->credentialResidue()));
  sendControl(control::phase(m_phases.phase(), QStringLiteral("guest connected")));
  sendWelcome();
  emit rdpConnected();
}

void Console::onFrame(const FrameUpdate& update) {
  secureDrop(m_frame); // zeroed if the session's pool has already let go of it
  m_frame = update.frame;
  m_frameSerial = update.serial;
  m_frameAt = std::chrono::steady_clock::now();
  if (m_lifecycle == Lifecycle::Serving)
    m_pipeline.submit(update.frame, update.dirty, update.moves, update.serial);
}

void Console::onPanelAuthorized(const QString& clientKind, const QString& clientVersion) {
  // Before the guest connects, the panel server's hasPanel() holds it until onRdpConnected.
  if (m_lifecycle == Lifecycle::Connected)
    setLifecycle(Lifecycle::Serving);
  updatePacing();
  record(QStringLiteral("panel"), QJsonObject{{QStringLiteral("client_kind"), clientKind.left(64)},
                                              {QStringLiteral("client_version"), clientVersion.left(64)}});
  sendWelcome();
}

void Console::sendWelcome() {
  if (m_lifecycle != Lifecycle::Serving || !m_panel)
    return;
  m_panel->sendText(panel::welcome(m_grant.runId, m_grant.taskId, m_grant.vm.name, identity(),
                                   phaseName(m_phases.phase()), m_desktop.width(), m_desktop.height()));
  refreshPanel();
}

void Console::refreshPanel() {
  if (m_lifecycle != Lifecycle::Serving || !m_panel)
    return;
  // Unacked frames are forgotten (the stream cannot stall on them) and the next packet is
  // the whole desktop.
  m_pipeline.reset();
  if (!m_frame.isNull())
    m_pipeline.submit(m_frame, {m_frame.rect()}, {}, m_frameSerial);
}

void Console::onFrameAcked(quint32 frame) {
  if (m_phases.closeIfExpired())
    return;
  m_pipeline.acknowledge(frame); // presented() follows for what the panel now shows
}

void Console::onPanelKey(quint64 seq, quint16 scancode, bool down) {
  submitInput(InputEvent::key(seq, scancode, down));
}

void Console::onPanelPointer(quint64 seq, quint16 x, quint16 y, quint8 buttons, qint16 wheel) {
  submitInput(InputEvent::pointer(seq, x, y, buttons, wheel));
}

void Console::submitInput(const InputEvent& event) {
  if (m_phases.closeIfExpired()) {
    if (m_panel)
      m_panel->sendText(panel::inputRefused(event.seq, Refusal::Expired));
    return;
  }
  if (!isConnected() && !m_phases.isClosed()) {
    if (m_panel)
      m_panel->sendText(panel::inputRefused(event.seq, Refusal::PhaseWrong));
    return;
  }
  const Outcome<quint64> result = m_gate.submit(event);
  if (!m_panel)
    return;
  m_panel->sendText(result.ok() ? panel::inputAck(result.value())
                                : panel::inputRefused(event.seq, result.code()));
}

void Console::requestLock(const QString& by) {
  if (refuseIfExpired())
    return;
  if (!isConnected() && !m_phases.isClosed()) {
    sendControl(control::error(Refusal::PhaseWrong, QStringLiteral("the guest is not connected yet")));
    return;
  }
  const Status locked = m_barrier.requestLock(by);
  if (!locked.ok()) {
    if (m_phases.isClosed())
      record(QStringLiteral("drain"), QJsonObject{{QStringLiteral("result"), refusalName(locked.code())}});
    else
      sendControl(control::error(locked.code(), locked.failure().message));
  }
}

// The guest's frames are acknowledged no faster than the panel presents them, at a
// bounded rate with no panel, and at once from the lock's guest sync to the capture (output
// is not suppressed between them: the capture shows the latest frame).
PacingMode Console::pacingMode() const {
  const Phase phase = m_phases.phase();
  const bool unpaced = phase == Phase::Locking || phase == Phase::ReadOnly || phase == Phase::Capturing;
  return unpaced                             ? PacingMode::Unpaced
         : m_lifecycle == Lifecycle::Serving ? PacingMode::Panel
                                             : PacingMode::NoPanel;
}

void Console::updatePacing() {
  if (!m_rdp || !isConnected())
    return;
  m_rdp->setPacing(pacingMode());
  m_rdp->setLeaseAhead(m_phases.phase() == Phase::Setup);
  updateFrameHold();
}

// Only in SETUP, while the panel paces the guest: every capture (after SETUP) reads the
// newest frame, and the quiet a capture waits for is the guest's, not the encoder's.
void Console::updateFrameHold() {
  if (m_rdp)
    m_rdp->holdFrames(m_pipeline.isEncoding() && m_phases.phase() == Phase::Setup &&
                      pacingMode() == PacingMode::Panel);
}

void Console::onPhaseChanged(Phase from, Phase to, const QString& reason) {
  updatePacing();
  if (to == Phase::Locking) // whoever asked (panel, control channel, MCP host): the gate just closed
    record(QStringLiteral("lock_requested"), QJsonObject{{QStringLiteral("reason"), reason},
                                                         {QStringLiteral("queued"), m_gate.queued()},
                                                         {QStringLiteral("input"), inputCounts()}});
  record(QStringLiteral("phase"), QJsonObject{{QStringLiteral("from"), phaseName(from)},
                                              {QStringLiteral("to"), phaseName(to)},
                                              {QStringLiteral("reason"), reason}});
  if (m_panel)
    m_panel->sendText(panel::phase(phaseName(to), reason));
  sendControl(control::phase(to, reason));
}

void Console::close(Refusal code, const QString& message) {
  if (m_phases.isClosed())
    return;
  qCInfo(lcConsole) << "closing:" << refusalName(code) << message;
  m_phases.close(code, message);
}

} // namespace gc
