#include "console/Console.h"

#include "common/DescriptorReserve.h"
#include "grant/GrantLedger.h"
#include "grant/GrantLoader.h"
#include "grant/KeyboardLayout.h"
#include "privacy/CredentialNeedles.h"
#include "privacy/RunSweeper.h"
#include "privacy/SecureImage.h"
#include "privacy/ZeroingAllocator.h"
#include "sandbox/ReaderSandbox.h"
#include "session/ControlChannel.h"
#include "vm/DomainBinder.h"
#include "vm/DomainWatcher.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QJsonArray>
#include <QLoggingCategory>
#include <QRandomGenerator>

#include <csignal>
#include <sys/prctl.h>
#include <sys/resource.h>

namespace gc {

Q_LOGGING_CATEGORY(lcConsole, "gc.console")

namespace {

// No core file may ever hold a frame, an input event or a credential (DESIGN.md §9).
void disableCoreDumps() {
  const struct rlimit none { 0, 0 };
  ::setrlimit(RLIMIT_CORE, &none);
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

// How long the console waits, after the action, for the guest to have read it and closed.
// Generous: a busy guest (freerdp-shadow-cli3 in a TCG VM encoding full GFX frames) reads the
// last input seconds late; a guest that closes returns at once.
constexpr std::chrono::milliseconds kActionDeliveryBound{15000};
// After RDP_LOST, how long libvirt has to say the domain went away (a destroy drops the
// connection first; libvirt reports the stop once its own teardown is done).
constexpr std::chrono::milliseconds kVmVerdictWindow{2500};

// A peer that is gone (the guest after the console's half-close, a parent that closed its
// pipe) must cost a write EPIPE, not kill the console before it has cleaned up.
void ignoreBrokenPipes() {
  ::signal(SIGPIPE, SIG_IGN);
}

QJsonObject countsToJson(const QMap<Refusal, quint64>& counts) {
  QJsonObject o;
  for (auto it = counts.begin(); it != counts.end(); ++it)
    o.insert(refusalName(it.key()), qint64(it.value()));
  return o;
}

} // namespace

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
    m_control->send(QStringLiteral("drained"), QJsonObject{{QStringLiteral("upto"), qint64(upto)}});
    record(QStringLiteral("drain"),
           QJsonObject{{QStringLiteral("result"), QStringLiteral("ok")},
                       {QStringLiteral("upto"), qint64(upto)},
                       {QStringLiteral("delivered"), qint64(m_gate.deliveredCount())}});
  });
  connect(&m_pipeline, &FramePipeline::packetReady, this, [this](const QByteArray& packet, quint32 frameId) {
    if (m_panel)
      m_panel->sendBinary(packet);
    m_packetSerials.emplace_back(frameId, m_frameSerial); // its ack releases the guest's acks
    if (m_packetSerials.size() > 64)
      m_packetSerials.pop_front();
  });
  if (m_control) {
    connect(m_control, &ControlChannel::credentialsReceived, this, &Console::onCredentials);
    connect(m_control, &ControlChannel::lockRequested, this,
            [this] { requestLock(QStringLiteral("control")); });
    connect(m_control, &ControlChannel::closeRequested, this, [this] { close(Refusal::OperatorClose); });
    connect(m_control, &ControlChannel::panicRequested, this, [this] { close(Refusal::Panic); });
    connect(m_control, &ControlChannel::parentGone, this, [this] { close(Refusal::ParentGone); });
  }
}

Console::~Console() {
  if (!m_tornDown) {
    m_phases.close(Refusal::Internal, QStringLiteral("console destroyed"));
    teardown();
  }
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

QJsonObject Console::identity() const {
  QJsonObject id{{QStringLiteral("vm_name"), m_grant.vm.name},
                 {QStringLiteral("vm_uuid_prefix"), m_grant.vm.uuid.left(8)},
                 {QStringLiteral("grant_digest"), QString::fromLatin1(m_grant.digestHex.left(16))},
                 {QStringLiteral("cert_fingerprint"), m_grant.certSha256Display().left(23)},
                 {QStringLiteral("cert_pin"), !m_grant.rdp.unpinned},
                 {QStringLiteral("signed"), m_grant.signed_},
                 {QStringLiteral("unsigned_grants_allowed"), m_options.policy.allowUnsigned}};
  // Once connected: the negotiated security ("tls" = no NLA: the guest checks the password
  // after the connection, and a retyped one travels as panel keys).
  if (m_connected && m_rdp) {
    id.insert(QStringLiteral("security"), m_rdp->securityProtocol());
    // What the console sent in the Client Core Data (servers do not echo the layout back).
    id.insert(QStringLiteral("keyboard_layout"),
              KeyboardLayout::toString(m_grant.rdp.desktop.keyboardLayout));
  }
  return id;
}

Status Console::fail(const Failure& failure) {
  qCWarning(lcConsole) << "refused:" << failure.toString();
  if (m_control)
    m_control->send(QStringLiteral("error"), QJsonObject{{QStringLiteral("code"), refusalName(failure.code)},
                                                         {QStringLiteral("message"), failure.message}});
  if (!m_evidence.isOpen() && !m_options.stateDir.isEmpty()) {
    // A refusal before the run's own log exists still leaves an evidence entry.
    const QString name =
        QStringLiteral("refused-%1-%2")
            .arg(QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMddThhmmsszzz")))
            .arg(QCoreApplication::applicationPid());
    (void)m_evidence.open(QDir(m_options.stateDir).filePath(QStringLiteral("evidence")), name);
  }
  QJsonObject fields{{QStringLiteral("code"), refusalName(failure.code)},
                     {QStringLiteral("message"), failure.message}};
  if (!m_grant.digestHex.isEmpty())
    fields.insert(QStringLiteral("grant_digest"), QString::fromLatin1(m_grant.digestHex));
  record(QStringLiteral("refused"), fields);
  if (m_rdp)
    m_rdp->abort(); // the reader, if it was spawned: nothing outlives a refused open
  const Status removed = m_runDir.remove();
  record(QStringLiteral("cleanup"), QJsonObject{{QStringLiteral("run_dir_removed"), removed.ok()}});
  m_evidence.close();
  m_runLock.reset();
  m_tornDown = true;
  return Status(failure);
}

Status Console::open() {
  disableCoreDumps();
  ignoreBrokenPipes();
  DescriptorReserve::hold(); // for accept, evidence and teardown at the descriptor limit (issue 26)
  const QDateTime now = QDateTime::currentDateTimeUtc();
  Outcome<Grant> grant = GrantLoader::loadFile(m_options.grantPath, m_options.policy, now);
  if (!grant.ok())
    return fail(grant.failure());
  m_grant = std::move(grant).value();

  GrantLedger ledger(m_options.ledgerDir);
  if (const Outcome<bool> seen = ledger.lookup(m_grant.grantId); !seen.ok())
    return fail(seen.failure());
  else if (seen.value())
    return fail(
        Failure{Refusal::GrantReused, QStringLiteral("grant %1 was already used").arg(m_grant.grantId)});
  // One live console per run, whichever grant names it (before libvirt or any socket).
  Outcome<RunLock> runLock = RunLock::acquire(m_options.ledgerDir, m_grant.runId);
  if (!runLock.ok())
    return fail(runLock.failure());
  m_runLock = std::move(runLock).value();

  if (!m_connection) {
    Outcome<LibvirtConnection> connection = LibvirtConnection::openReadOnly(m_grant.vm.libvirtUri);
    if (!connection.ok())
      return fail(connection.failure());
    m_connection = std::move(connection).value();
  }
  Outcome<VmBinding> binding = DomainBinder::bind(*m_connection, vmTargetOf(m_grant));
  if (!binding.ok())
    return fail(binding.failure());
  m_binding = binding.value();

  // Run dirs of consoles that were killed go first (only provably ours and provably dead).
  (void)RunSweeper::sweep(m_options.runtimeDir);
  if (Status created =
          m_runDir.create(m_options.runtimeDir, m_grant.runId, QString::fromLatin1(m_grant.digestHex));
      !created.ok())
    return fail(created.failure());

  // The RDP reader: the process that will parse the guest's bytes, sandboxed, with a shared
  // desktop for the grant's desktop. Before the grant is consumed: a machine that cannot run
  // it (descriptors, memory, processes) refuses the run with nothing spent.
  m_rdp = std::make_unique<RdpReader>();
  const QSize maxDesktop(m_grant.rdp.desktop.width, m_grant.rdp.desktop.height);
  if (Status spawned =
          m_rdp->spawn(maxDesktop, m_options.readerProgram.isEmpty() ? RdpReader::defaultProgram()
                                                                     : m_options.readerProgram);
      !spawned.ok())
    return fail(spawned.failure());
  connect(m_rdp.get(), &RdpReader::connected, this, &Console::onRdpConnected);
  connect(m_rdp.get(), &RdpReader::failed, this, &Console::onRdpFailed);
  connect(m_rdp.get(), &RdpReader::lost, this, &Console::onRdpLost);
  connect(m_rdp.get(), &RdpReader::frameUpdated, this, [this](const FrameUpdate& update) {
    m_frameSerial = update.serial; // the pacing's account (issue 27)
    // Issue 27.5: the guest's own copies go to the panel as copies.
    m_pipeline.noteGuestMoves(m_rdp->guestMoves());
    onFrame(update.frame, update.dirty);
  });
  connect(m_rdp.get(), &RdpReader::desktopResized, this, &Console::onRdpDesktopResized);

  // The pin is checked before any credential is asked for (by the reader: the probe reads
  // the guest's TLS handshake).
  if (!m_grant.rdp.unpinned) {
    const Outcome<QByteArray> probed =
        m_rdp->probe(m_grant.rdp.host, m_grant.rdp.port, m_grant.rdp.certSha256, m_options.probeTimeoutMs);
    if (!probed.ok())
      return fail(probed.failure());
  }

  // Every descriptor the run needs is there before the grant is spent (issue 26).
  if (Status fds = DescriptorReserve::ensureFree(); !fds.ok()) {
    DescriptorReserve::release(); // the refusal's evidence needs one too
    return fail(fds.failure());
  }

  // From here on the grant is spent, whatever happens next.
  if (Status consumed = ledger.consume(m_grant); !consumed.ok())
    return fail(consumed.failure());

  if (Status opened = m_evidence.open(QDir(m_options.stateDir).filePath(QStringLiteral("evidence")),
                                      m_grant.runId + QLatin1Char('-') + m_grant.grantId.left(8));
      !opened.ok())
    return fail(opened.failure());
  record(QStringLiteral("opened"),
         QJsonObject{{QStringLiteral("grant_digest"), QString::fromLatin1(m_grant.digestHex)},
                     {QStringLiteral("grant_id"), m_grant.grantId},
                     {QStringLiteral("run"), m_grant.runId},
                     {QStringLiteral("task"), m_grant.taskId},
                     {QStringLiteral("guest"), identity()},
                     {QStringLiteral("rule"), m_binding.ruleSource},
                     {QStringLiteral("port"), m_binding.hostPort},
                     {QStringLiteral("signed"), m_grant.signed_},
                     {QStringLiteral("unsigned_grants_allowed"), m_options.policy.allowUnsigned}});
  record(
      QStringLiteral("reader"),
      QJsonObject{{QStringLiteral("sandbox"), ReaderSandbox::describe(m_rdp->sandbox())},
                  {QStringLiteral("desktop_bytes"), qint64(maxDesktop.width()) * maxDesktop.height() * 4}});

  m_watcher = std::make_unique<DomainWatcher>(*m_connection, m_grant.vm.uuid);
  connect(m_watcher.get(), &DomainWatcher::domainGone, this, [this](Refusal code, const QString& reason) {
    if (m_tornDown) // closed on RDP_LOST and waiting for this verdict (awaitVmVerdict)
      concludeVmVerdict(reason);
    else
      close(code, reason);
  });
  if (Status watching = m_watcher->start(); !watching.ok())
    return fail(watching.failure());

  m_phases.setExpiry(m_grant.expiresAt);
  armExpiryWakeUp();

  m_capability.resize(32);
  QRandomGenerator::system()->fillRange(reinterpret_cast<quint32*>(m_capability.data()), 8);
  PanelPolicy policy;
  policy.run = m_grant.runId;
  policy.task = m_grant.taskId;
  policy.capability = m_capability;
  policy.panelMetadata = m_grant.panel.metadata;
  policy.extraOrigins = m_options.extraOrigins;
  m_panel = std::make_unique<PanelServer>(policy);
  if (!m_panel->listen())
    return fail(Failure{Refusal::Internal, QStringLiteral("panel server: %1").arg(m_panel->errorString())});
  connect(m_panel.get(), &PanelServer::panelAuthorized, this, [this](const panel::Hello& hello) {
    m_pipeline.setCopyRects(hello.copyRect); // issue 27.5: moves as copies, if the panel takes them
    onPanelAuthorized(hello.clientKind, hello.clientVersion);
  });
  connect(m_panel.get(), &PanelServer::panelGone, this,
          [this] { close(Refusal::OperatorClose, QStringLiteral("the panel closed")); });
  connect(m_panel.get(), &PanelServer::closeRequested, this,
          [this] { close(Refusal::OperatorClose, QStringLiteral("closed from the panel")); });
  connect(m_panel.get(), &PanelServer::lockRequested, this, [this] { requestLock(QStringLiteral("panel")); });
  connect(m_panel.get(), &PanelServer::keyReceived, this,
          [this](const panel::Key& k) { onPanelKey(k.seq, k.scancode, k.down); });
  connect(m_panel.get(), &PanelServer::pointerReceived, this,
          [this](const panel::Pointer& p) { onPanelPointer(p.seq, p.x, p.y, p.buttons, p.wheel); });
  connect(m_panel.get(), &PanelServer::frameAcked, this, [this](quint32 frame) {
    if (m_phases.closeIfExpired())
      return;
    m_pipeline.acknowledge(frame);
    quint64 presented = 0; // the newest guest frame the panel has now shown
    for (; !m_packetSerials.empty() && m_packetSerials.front().first <= frame; m_packetSerials.pop_front())
      presented = m_packetSerials.front().second;
    if (presented && m_rdp)
      m_rdp->notePresented(presented);
  });
  connect(m_panel.get(), &PanelServer::frameRefreshRequested, this, [this](quint32) {
    if (m_phases.closeIfExpired())
      return;
    ++m_panelRefreshes;
    refreshPanel();
  });

  // The MCP relay's socket in the private run dir; the action service answers it.
  m_action = std::make_unique<ActionService>(
      m_grant, ActionService::VmIdentity{m_binding.uuid, m_binding.name}, &m_phases, &m_barrier, &m_evidence,
      &m_sink, [this] { return m_frame; });
  connect(m_action.get(), &ActionService::receiptIssued, this,
          [this](const QJsonObject& receipt) { m_control->send(QStringLiteral("receipt"), receipt); });
  m_action->setInputCaps([this] { return m_sink.inputCaps(); });
  m_action->setPointerPosition([this] { return m_sink.lastPointer(); });
  m_action->setReleaseHeld([this](QDeadlineTimer deadline) -> Outcome<ActionService::Released> {
    const Outcome<RdpInputSink::Released> released = m_sink.releaseHeld(deadline);
    if (!released)
      return released.failure();
    return ActionService::Released{released->keys, released->buttons};
  });
  // The receipt waits for the guest: the action is the run's last input, so the reader's
  // graceful finish (the guest read all of it and closed) confirms it before the answer.
  m_action->setConfirmGuest([this] {
    ActionService::GuestConfirmation confirmation;
    if (!m_rdp || m_actionFinished)
      return confirmation;
    m_actionFinished = true;
    const RdpReader::Finish finish = m_rdp->finishGracefully(kActionDeliveryBound);
    recordActionFinish(finish);
    confirmation.confirmed = finish.confirmed;
    confirmation.elapsedMs = finish.elapsedMs;
    return confirmation;
  });
  m_mcp = std::make_unique<ActionSocketServer>(m_action.get());
  if (!m_mcp->listen(m_runDir.mcpSocketPath()))
    return fail(Failure{Refusal::Internal, QStringLiteral("MCP socket: %1").arg(m_mcp->errorString())});

  m_control->send(
      QStringLiteral("ready"),
      QJsonObject{{QStringLiteral("run"), m_grant.runId},
                  {QStringLiteral("task"), m_grant.taskId},
                  {QStringLiteral("vm"), m_grant.vm.name},
                  {QStringLiteral("identity"), identity()},
                  {QStringLiteral("panel"),
                   QJsonObject{{QStringLiteral("port"), m_panel->port()},
                               {QStringLiteral("capability"), QString::fromLatin1(m_capability.toHex())}}}});
  requestCredentials();
  return success();
}

void Console::armExpiryWakeUp() {
  const qint64 ms = m_phases.now().msecsTo(m_phases.expiresAt());
  m_expiry.start(int(std::clamp<qint64>(ms, 0, std::numeric_limits<int>::max())));
}

bool Console::refuseIfExpired() {
  if (!m_phases.closeIfExpired())
    return false;
  if (m_control)
    m_control->sendError(Refusal::Expired, QStringLiteral("the grant has expired"));
  return true;
}

Status Console::acceptGuestSync(const Outcome<SyncResult>& sync) {
  recordGuestSync(sync);
  if (!sync.ok())
    return Status(sync.failure());
  const bool settleAllowed = m_grant.lock.confirmation == Grant::Lock::Confirmation::Settle;
  QJsonObject confirmation{
      {QStringLiteral("by"), syncConfirmationName(sync->confirmedBy)},
      {QStringLiteral("required"), Grant::Lock::confirmationName(m_grant.lock.confirmation)},
      {QStringLiteral("settled"), sync->settled},
      {QStringLiteral("ms"), sync->elapsedMs}};
  if (sync->answered)
    confirmation.insert(QStringLiteral("answer_ms"), sync->answerMs);
  m_barrier.noteConfirmation(confirmation);
  // A quiet screen is not a confirmation: a frozen guest is quiet too, and would run the
  // drained input later, just before the model's action (issue 24). Fail closed unless the
  // grant opted into the weaker rule.
  if (sync->confirmedBy == SyncConfirmation::SettleOnly && !settleAllowed) {
    const QString why =
        sync->refreshSupported
            ? QStringLiteral("the guest did not answer the refresh request after the drained input")
            : QStringLiteral("the guest does not support refresh requests");
    record(
        QStringLiteral("guest_unconfirmed"),
        QJsonObject{{QStringLiteral("why"), why},
                    {QStringLiteral("required"), Grant::Lock::confirmationName(m_grant.lock.confirmation)}});
    return Status(Refusal::GuestUnconfirmed,
                  why + QStringLiteral(": capture refused (the grant requires the guest's confirmation)"));
  }
  return success();
}

void Console::recordGuestSync(const Outcome<SyncResult>& sync) {
  QJsonObject entry{{QStringLiteral("result"), sync.ok() ? QStringLiteral("ok") : refusalName(sync.code())}};
  if (sync.ok()) {
    // Only what happened: the answer counts only if it covered the whole requested area.
    entry.insert(QStringLiteral("confirmed_by"), syncConfirmationName(sync->confirmedBy));
    entry.insert(QStringLiteral("refresh_rect"), !sync->refreshSupported ? QStringLiteral("not_supported")
                                                 : sync->answered        ? QStringLiteral("answered")
                                                                         : QStringLiteral("unanswered"));
    if (sync->answered)
      entry.insert(QStringLiteral("answer_ms"), sync->answerMs);
    entry.insert(QStringLiteral("settled"), sync->settled);
    entry.insert(QStringLiteral("ms"), sync->elapsedMs);
  }
  record(QStringLiteral("guest_sync"), entry);
}

void Console::requestCredentials() {
  ++m_authAttempt;
  m_awaitingCredentials = true;
  m_control->send(
      QStringLiteral("credentials_required"),
      QJsonObject{{QStringLiteral("username"), m_grant.panel.metadata.value(QStringLiteral("username"))},
                  {QStringLiteral("domain"), m_grant.panel.metadata.value(QStringLiteral("domain"))},
                  {QStringLiteral("attempt"), m_authAttempt},
                  {QStringLiteral("max_attempts"), m_options.maxAuthAttempts}});
}

void Console::onCredentials(Credentials& credentials) {
  if (m_phases.expired()) {
    credentials.wipe();
    refuseIfExpired();
    return;
  }
  if (!m_awaitingCredentials || m_phases.isClosed()) {
    credentials.wipe();
    m_control->sendError(Refusal::PhaseWrong, QStringLiteral("no credentials were asked for"));
    return;
  }
  m_awaitingCredentials = false;
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
  record(QStringLiteral("connecting"), QJsonObject{{QStringLiteral("attempt"), m_authAttempt}});
  m_rdp->start(config, std::move(credentials));
  credentials.wipe(); // whatever was not moved
}

namespace {
// Counts only: how many copies of the password and of what NTLM derived from it (NT hash,
// NTOWFv2) FreeRDP had left and the scrub overwrote.
QJsonObject residueToJson(const ScrubReport& r) {
  QJsonObject byForm;
  for (int f = 0; f < CredentialNeedles::FormCount; ++f)
    byForm.insert(QLatin1StringView(CredentialNeedles::kFormNames[std::size_t(f)]),
                  r.copiesByNeedle[std::size_t(f)]);
  return {{QStringLiteral("scanned"), r.ok},
          {QStringLiteral("copies_by_form"), byForm},
          {QStringLiteral("copies_wiped"), r.copiesWiped},
          {QStringLiteral("copies_unwritable"), r.copiesUnwritable},
          {QStringLiteral("needles_too_short"), r.needlesTooShort},
          {QStringLiteral("regions_skipped"), r.regionsSkipped},
          {QStringLiteral("mib_scanned"), double(r.bytesScanned / 1024) / 1024.0},
          {QStringLiteral("ms"), double(r.elapsedUs / 100) / 10.0}};
}
} // namespace

void Console::onRdpFailed(const Failure& failure) {
  record(QStringLiteral("connect_failed"),
         QJsonObject{{QStringLiteral("code"), refusalName(failure.code)},
                     {QStringLiteral("attempt"), m_authAttempt},
                     {QStringLiteral("credential_residue"), residueToJson(m_rdp->credentialResidue())}});
  // A size the reader refused before anything was allocated for it: judged and recorded as
  // one presented at connect (acceptDesktop closes RDP_DESKTOP_MISMATCH).
  if (recordViolation(QStringLiteral("connect")))
    return;
  // The reader serves another attempt (a refused password) unless it is gone itself.
  if (failure.code == Refusal::AuthFailed && m_authAttempt < m_options.maxAuthAttempts &&
      m_rdp->state() == RdpReader::State::Ready) {
    m_control->sendError(Refusal::AuthFailed, failure.message);
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
    record(QStringLiteral("protocol_violation"), QJsonObject{{QStringLiteral("code"), refusalName(v.code)},
                                                             {QStringLiteral("pdu"), v.pdu},
                                                             {QStringLiteral("rule"), v.rule}});
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
  const bool fromServer = grant.sizeFrom == Grant::Desktop::SizeFrom::Server;
  const bool matches = presented == requested;
  const auto size = [](QSize s) {
    return QJsonObject{{QStringLiteral("width"), s.width()}, {QStringLiteral("height"), s.height()}};
  };
  record(QStringLiteral("desktop"),
         QJsonObject{{QStringLiteral("when"), when},
                     {QStringLiteral("requested"), size(requested)},
                     {QStringLiteral("presented"), size(presented)},
                     {QStringLiteral("keyboard_layout"), KeyboardLayout::toString(grant.keyboardLayout)},
                     {QStringLiteral("size_from"), Grant::Desktop::sizeFromName(grant.sizeFrom)},
                     {QStringLiteral("result"), matches      ? QStringLiteral("requested")
                                                : fromServer ? QStringLiteral("server")
                                                             : refusalName(Refusal::RdpDesktopMismatch)}});
  if (matches || fromServer)
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
  // m_connected false (panel input is refused), no welcome.
  if (!acceptDesktop(desktop, QStringLiteral("connect")))
    return;
  m_connected = true;
  m_desktop = desktop;
  m_sink.setSession(m_rdp.get());
  m_gate.setDesktopSize(desktop);
  updatePacing();
  record(QStringLiteral("connected"),
         QJsonObject{{QStringLiteral("width"), desktop.width()},
                     {QStringLiteral("height"), desktop.height()},
                     {QStringLiteral("security"), m_rdp->securityProtocol()},
                     {QStringLiteral("channels"), m_rdp->channelReport().connectedJson()},
                     {QStringLiteral("credential_residue"), residueToJson(m_rdp->credentialResidue())}});
  m_control->send(QStringLiteral("phase"),
                  QJsonObject{{QStringLiteral("phase"), phaseName(m_phases.phase())},
                              {QStringLiteral("reason"), QStringLiteral("guest connected")}});
  sendWelcome();
  emit rdpConnected();
}

void Console::onFrame(const QImage& frame, const QList<QRect>& dirty) {
  secureDrop(m_frame); // zeroed if the session's pool has already let go of it
  m_frame = frame;
  if (m_panelReady)
    m_pipeline.submit(frame, dirty);
}

void Console::onPanelAuthorized(const QString& clientKind, const QString& clientVersion) {
  m_panelReady = true;
  updatePacing();
  record(QStringLiteral("panel"), QJsonObject{{QStringLiteral("client_kind"), clientKind.left(64)},
                                              {QStringLiteral("client_version"), clientVersion.left(64)}});
  sendWelcome();
}

void Console::sendWelcome() {
  if (!m_panelReady || !m_connected || !m_panel)
    return;
  m_panel->sendText(panel::welcome(m_grant.runId, m_grant.taskId, m_grant.vm.name, identity(),
                                   phaseName(m_phases.phase()), m_desktop.width(), m_desktop.height()));
  refreshPanel();
}

void Console::refreshPanel() {
  if (!m_panelReady || !m_connected || !m_panel)
    return;
  // Unacked frames are forgotten (the stream cannot stall on them) and the next packet is
  // the whole desktop.
  m_pipeline.reset();
  m_packetSerials.clear();
  if (!m_frame.isNull())
    m_pipeline.submit(m_frame, {m_frame.rect()});
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
  if (!m_connected && !m_phases.isClosed()) {
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
  if (!m_connected) {
    m_control->sendError(Refusal::PhaseWrong, QStringLiteral("the guest is not connected yet"));
    return;
  }
  const Status locked = m_barrier.requestLock(by);
  if (!locked.ok()) {
    if (m_phases.isClosed())
      record(QStringLiteral("drain"), QJsonObject{{QStringLiteral("result"), refusalName(locked.code())}});
    else
      m_control->sendError(locked.code(), locked.failure().message);
  }
}

// Issue 27: the guest's frames are acknowledged no faster than the panel presents them, at a
// bounded rate with no panel, and at once from the lock's guest sync to the capture (output
// is not suppressed between them: the capture shows the latest frame).
void Console::updatePacing() {
  if (!m_rdp || !m_connected)
    return;
  const Phase phase = m_phases.phase();
  const bool unpaced = phase == Phase::Locking || phase == Phase::ReadOnly || phase == Phase::Capturing;
  m_rdp->setPacing(unpaced ? PacingMode::Unpaced : m_panelReady ? PacingMode::Panel : PacingMode::NoPanel);
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
  m_control->send(QStringLiteral("phase"),
                  QJsonObject{{QStringLiteral("phase"), phaseName(to)}, {QStringLiteral("reason"), reason}});
}

QJsonObject Console::inputCounts() const {
  return QJsonObject{{QStringLiteral("accepted"), qint64(m_gate.acceptedCount())},
                     {QStringLiteral("delivered"), qint64(m_gate.deliveredCount())},
                     {QStringLiteral("refused"), countsToJson(m_gate.refusedCounts())}};
}

void Console::close(Refusal code, const QString& message) {
  if (m_phases.isClosed())
    return;
  qCInfo(lcConsole) << "closing:" << refusalName(code) << message;
  m_phases.close(code, message);
}

void Console::teardown() {
  if (m_tornDown)
    return;
  m_tornDown = true;
  const Failure reason = m_phases.closeReason();
  m_expiry.stop();
  m_gate.wipe();
  m_sink.setSession(nullptr);
  if (m_rdp && reason.code == Refusal::ActionDone && !m_actionFinished) {
    // The action is the run's last input: let the guest read all of it before the connection
    // goes (a bounded half-close; the receipt's "executed" must mean the guest got it). Done
    // already when the receipt waited for it.
    m_actionFinished = true;
    recordActionFinish(m_rdp->finishGracefully(kActionDeliveryBound));
  }
  // Frames first: the session zeroes the pooled frames nobody holds any more.
  const FramePipeline::Wiped frames = m_pipeline.wipe();
  m_wipes.wiped(QStringLiteral("console_frame"), secureDrop(m_frame));
  if (m_rdp)
    m_rdp->abort(); // the reader disconnects, exits (or is killed); the shared desktop is zeroed
  // What each owner zeroed (buffers_wiped in the cleanup record is computed from this).
  m_wipes.wiped(QStringLiteral("frame_encoder"), frames.encoderBytes);
  m_wipes.wiped(QStringLiteral("frame_packets"), frames.packetBytes);
  if (frames.packetsShared > 0)
    m_wipes.notWiped(QStringLiteral("frame_packets_shared"), frames.packetsShared,
                     QStringLiteral("packets still held by another owner when the pipeline let go"));
  // The panel's QWebSocket copies each packet into its socket's write buffer, which Qt frees
  // itself: only the zeroing allocator reaches those copies (and FreeRDP's and OpenSSL's).
  if (!ZeroingAllocator::active()) {
    m_wipes.notWiped(QStringLiteral("allocator"), 0,
                     QStringLiteral("freed heap blocks keep their bytes (no zeroing allocator)"));
    if (m_panel && frames.packetBytesEmitted > 0)
      m_wipes.notWiped(QStringLiteral("panel_socket"), frames.packetBytesEmitted,
                       QStringLiteral("copies in the panel socket's write buffer, freed by Qt unzeroed"));
  } else {
    if (m_panel)
      m_wipes.wiped(QStringLiteral("panel_socket_by_allocator"), frames.packetBytesEmitted);
    if (!ZeroingAllocator::zeroesSmallBlocks())
      m_wipes.notWiped(
          QStringLiteral("allocator_small_blocks"), 0,
          QStringLiteral("glibc's per-thread cache (blocks up to 1032 bytes) skips the zeroing"));
  }
  record(QStringLiteral("buffers"), m_wipes.toJson());
  if (reason.code == Refusal::RdpLost && m_watcher && !m_watcher->hasFired())
    return awaitVmVerdict(); // the console is already inert: CLOSED, RDP down, buffers wiped
  finishTeardown(reason);
}

void Console::recordActionFinish(const RdpReader::Finish& finish) {
  record(QStringLiteral("rdp_finish"),
         QJsonObject{{QStringLiteral("guest_closed_after_reading"), finish.confirmed},
                     {QStringLiteral("ms"), finish.elapsedMs},
                     {QStringLiteral("writes_not_sent"), finish.writesDropped}});
}

void Console::awaitVmVerdict() {
  QTimer::singleShot(kVmVerdictWindow, this, [this] { concludeVmVerdict(QString()); });
  m_watcher->checkNow();
}

void Console::concludeVmVerdict(const QString& vmGoneReason) {
  if (m_verdictDone)
    return;
  m_verdictDone = true;
  Failure reason = m_phases.closeReason();
  if (!vmGoneReason.isEmpty()) {
    // The cause, not the symptom: the console closed on the dropped connection at once and
    // libvirt then said why. Both stay in the evidence.
    record(QStringLiteral("close_cause"), QJsonObject{{QStringLiteral("observed"), refusalName(reason.code)},
                                                      {QStringLiteral("cause"), refusalName(Refusal::VmGone)},
                                                      {QStringLiteral("reason"), vmGoneReason}});
    reason = Failure{Refusal::VmGone, vmGoneReason + QStringLiteral(" (the RDP connection dropped first)")};
  }
  finishTeardown(reason);
}

void Console::finishTeardown(const Failure& reason) {
  if (m_panel) {
    m_panel->closePanel(refusalName(reason.code));
    record(QStringLiteral("panel_refusals"), countsToJson(m_panel->refusals()));
    if (m_panelRefreshes > 0)
      record(QStringLiteral("panel_frames"),
             QJsonObject{{QStringLiteral("refreshes"), qint64(m_panelRefreshes)}});
  }
  m_watcher.reset();
  if (m_mcp) {
    m_mcp->stop(); // unlinks the socket before the run dir goes; zeroes an unsent reply
    const ActionSocketServer::Wiped replies = m_mcp->wiped();
    m_wipes.wiped(QStringLiteral("capture_replies"), replies.bytes);
    if (replies.unwiped > 0)
      m_wipes.notWiped(QStringLiteral("capture_replies_shared"), replies.unwiped,
                       QStringLiteral("a capture buffer was shared when dropped"));
  }
  record(QStringLiteral("input_counts"), inputCounts());
  const Status removed = m_runDir.remove();
  const QJsonObject wipes = m_wipes.toJson();
  record(QStringLiteral("cleanup"),
         QJsonObject{{QStringLiteral("run_dir_removed"), removed.ok()},
                     {QStringLiteral("buffers_wiped"), wipes.value(QStringLiteral("buffers_wiped"))},
                     {QStringLiteral("wiped"), wipes.value(QStringLiteral("wiped"))},
                     {QStringLiteral("not_wiped"), wipes.value(QStringLiteral("not_wiped"))}});
  QJsonObject closed{{QStringLiteral("code"), refusalName(reason.code)},
                     {QStringLiteral("message"), reason.message}};
  if (m_rdp) // the session's channels, as they happened (RDP_CHANNEL_REFUSED: refused creates)
    closed.insert(QStringLiteral("channels"), m_rdp->channelReport().closedJson());
  record(QStringLiteral("closed"), closed);
  m_control->send(QStringLiteral("closed"),
                  QJsonObject{{QStringLiteral("reason"), refusalName(reason.code)},
                              {QStringLiteral("message"), reason.message},
                              {QStringLiteral("evidence_head"), QString::fromLatin1(m_evidence.headHash())}});
  m_evidence.close();
  m_connection.reset();
  emit finished(m_exitCode);
}

} // namespace gc
