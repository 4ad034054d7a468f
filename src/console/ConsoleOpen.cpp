// Console::open() and its steps: everything up to "ready" and the first credentials request.
// Each step returns a Status; the first refusal ends the open in fail(), which reports it,
// leaves an evidence entry and closes whatever the earlier steps opened.
#include "common/DescriptorReserve.h"
#include "console/Console.h"
#include "console/ConsoleEvidence.h"
#include "grant/GrantLedger.h"
#include "grant/GrantLoader.h"
#include "privacy/RunSweeper.h"
#include "session/ControlChannel.h"
#include "vm/DomainBinder.h"
#include "vm/DomainWatcher.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QLoggingCategory>
#include <QRandomGenerator>

#include <csignal>
#include <sys/prctl.h>
#include <sys/resource.h>

namespace gc {

Q_DECLARE_LOGGING_CATEGORY(lcConsole)

Status Console::open() {
  using Step = Status (Console::*)();
  static constexpr Step kSteps[] = {
      &Console::prepareProcess,
      &Console::loadGrant,
      &Console::refuseReusedGrant,
      &Console::holdRunLock,
      &Console::bindVm,
      &Console::createRunDirectory,
      &Console::spawnReader,
      &Console::checkCertificatePin,
      &Console::spendGrant,
      &Console::openEvidence,
      &Console::watchDomain,
      &Console::listenForPanel,
      &Console::listenForMcp,
      &Console::announceReady,
  };
  for (const Step step : kSteps) {
    if (Status done = (this->*step)(); !done.ok())
      return fail(done.failure());
  }
  return success();
}

// No core file may ever hold a frame, an input event or a credential (DESIGN.md §9). A peer
// that is gone (the guest after the console's half-close, a parent that closed its pipe) must
// cost a write EPIPE, not kill the console before it has cleaned up.
Status Console::prepareProcess() {
  const struct rlimit none { 0, 0 };
  ::setrlimit(RLIMIT_CORE, &none);
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  ::signal(SIGPIPE, SIG_IGN);
  DescriptorReserve::hold(); // for accept, evidence and teardown at the descriptor limit
  return success();
}

Status Console::loadGrant() {
  Outcome<Grant> grant =
      GrantLoader::loadFile(m_options.grantPath, m_options.policy, QDateTime::currentDateTimeUtc());
  if (!grant.ok())
    return grant.failure();
  m_grant = std::move(grant).value();
  return success();
}

Status Console::refuseReusedGrant() {
  const Outcome<bool> seen = GrantLedger(m_options.ledgerDir).lookup(m_grant.grantId);
  if (!seen.ok())
    return seen.failure();
  if (seen.value())
    return Failure{Refusal::GrantReused, QStringLiteral("grant %1 was already used").arg(m_grant.grantId)};
  return success();
}

// One live console per run, whichever grant names it (before libvirt or any socket).
Status Console::holdRunLock() {
  Outcome<RunLock> runLock = RunLock::acquire(m_options.ledgerDir, m_grant.runId);
  if (!runLock.ok())
    return runLock.failure();
  m_runLock = std::move(runLock).value();
  return success();
}

Status Console::bindVm() {
  if (!m_connection) {
    Outcome<LibvirtConnection> connection = LibvirtConnection::openReadOnly(m_grant.vm.libvirtUri);
    if (!connection.ok())
      return connection.failure();
    m_connection = std::move(connection).value();
  }
  Outcome<VmBinding> binding = DomainBinder::bind(*m_connection, vmTargetOf(m_grant));
  if (!binding.ok())
    return binding.failure();
  m_binding = binding.value();
  return success();
}

Status Console::createRunDirectory() {
  // Run dirs of consoles that were killed go first (only provably ours and provably dead).
  (void)RunSweeper::sweep(m_options.runtimeDir);
  return m_runDir.create(m_options.runtimeDir, m_grant.runId, QString::fromLatin1(m_grant.digestHex));
}

// The RDP reader: the process that will parse the guest's bytes, sandboxed, with a shared
// desktop for the grant's desktop. Before the grant is consumed: a machine that cannot run it
// (descriptors, memory, processes) refuses the run with nothing spent.
Status Console::spawnReader() {
  m_rdp = std::make_unique<RdpReader>();
  const QSize maxDesktop(m_grant.rdp.desktop.width, m_grant.rdp.desktop.height);
  if (Status spawned =
          m_rdp->spawn(maxDesktop, m_options.readerProgram.isEmpty() ? RdpReader::defaultProgram()
                                                                     : m_options.readerProgram);
      !spawned.ok())
    return spawned;
  connect(m_rdp.get(), &RdpReader::connected, this, &Console::onRdpConnected);
  connect(m_rdp.get(), &RdpReader::failed, this, &Console::onRdpFailed);
  connect(m_rdp.get(), &RdpReader::lost, this, &Console::onRdpLost);
  connect(m_rdp.get(), &RdpReader::frameUpdated, this, &Console::onFrame);
  connect(m_rdp.get(), &RdpReader::desktopResized, this, &Console::onRdpDesktopResized);
  return success();
}

// The pin is checked before any credential is asked for (by the reader: the probe reads the
// guest's TLS handshake).
Status Console::checkCertificatePin() {
  if (m_grant.rdp.unpinned)
    return success();
  const Outcome<QByteArray> probed =
      m_rdp->probe(m_grant.rdp.host, m_grant.rdp.port, m_grant.rdp.certSha256, m_options.probeTimeoutMs);
  if (!probed.ok())
    return probed.failure();
  return success();
}

// Every descriptor the run needs is there before the grant is spent; from here on
// the grant is spent, whatever happens next.
Status Console::spendGrant() {
  if (Status fds = DescriptorReserve::ensureFree(); !fds.ok()) {
    DescriptorReserve::release(); // the refusal's evidence needs one too
    return fds;
  }
  return GrantLedger(m_options.ledgerDir).consume(m_grant);
}

Status Console::openEvidence() {
  if (Status opened = m_evidence.open(QDir(m_options.stateDir).filePath(QStringLiteral("evidence")),
                                      m_grant.runId + QLatin1Char('-') + m_grant.grantId.left(8));
      !opened.ok())
    return opened;
  record(QStringLiteral("opened"),
         entry::opened(m_grant, identity(), m_binding, m_options.policy.allowUnsigned));
  record(QStringLiteral("reader"),
         entry::reader(m_rdp->sandbox(), QSize(m_grant.rdp.desktop.width, m_grant.rdp.desktop.height)));
  return success();
}

Status Console::watchDomain() {
  m_watcher = std::make_unique<DomainWatcher>(*m_connection, m_grant.vm.uuid);
  connect(m_watcher.get(), &DomainWatcher::domainGone, this, [this](Refusal code, const QString& reason) {
    if (isTornDown()) // closed on RDP_LOST and waiting for this verdict (awaitVmVerdict)
      concludeVmVerdict(reason);
    else
      close(code, reason);
  });
  if (Status watching = m_watcher->start(); !watching.ok())
    return watching;
  m_phases.setExpiry(m_grant.expiresAt);
  armExpiryWakeUp();
  return success();
}

Status Console::listenForPanel() {
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
    return Failure{Refusal::Internal, QStringLiteral("panel server: %1").arg(m_panel->errorString())};
  connectPanelSignals();
  return success();
}

void Console::connectPanelSignals() {
  connect(m_panel.get(), &PanelServer::panelAuthorized, this, [this](const panel::Hello& hello) {
    m_pipeline.setCopyRects(hello.copyRect); // Moves as copies, if the panel takes them
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
  connect(m_panel.get(), &PanelServer::frameAcked, this, &Console::onFrameAcked);
  connect(m_panel.get(), &PanelServer::frameRefreshRequested, this, [this](quint32) {
    if (m_phases.closeIfExpired())
      return;
    ++m_panelRefreshes;
    refreshPanel();
  });
}

// The MCP relay's socket in the private run dir; the action service answers it.
Status Console::listenForMcp() {
  m_action = std::make_unique<ActionService>(
      m_grant, ActionService::VmIdentity{m_binding.uuid, m_binding.name}, &m_phases, &m_barrier, &m_evidence,
      &m_sink, [this] { return m_frame; });
  connectActionService();
  m_mcp = std::make_unique<ActionSocketServer>(m_action.get());
  if (!m_mcp->listen(m_runDir.mcpSocketPath()))
    return Failure{Refusal::Internal, QStringLiteral("MCP socket: %1").arg(m_mcp->errorString())};
  return success();
}

void Console::connectActionService() {
  connect(m_action.get(), &ActionService::receiptIssued, this,
          [this](const QJsonObject& receipt) { sendControl(control::receipt(receipt)); });
  m_action->setInputCaps([this] { return m_sink.inputCaps(); });
  m_action->setPointerPosition([this] { return m_sink.lastPointer(); });
  m_action->setPictureSettle([this] { return m_frameAt; }, m_options.guestSettleQuiet,
                             m_options.captureSettleBound);
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
    record(QStringLiteral("rdp_finish"), entry::actionFinish(finish));
    confirmation.confirmed = finish.confirmed;
    confirmation.elapsedMs = finish.elapsedMs;
    return confirmation;
  });
}

Status Console::announceReady() {
  sendControl(control::ready(m_grant.runId, m_grant.taskId, m_grant.vm.name, identity(), m_panel->port(),
                             m_capability.toHex()));
  requestCredentials(); // Opening → AwaitingCredentials
  return success();
}

Status Console::fail(const Failure& failure) {
  qCWarning(lcConsole) << "refused:" << failure.toString();
  if (!m_evidence.isOpen() && !m_options.stateDir.isEmpty()) {
    // A refusal before the run's own log exists still leaves an evidence entry.
    const QString name =
        QStringLiteral("refused-%1-%2")
            .arg(QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMddThhmmsszzz")))
            .arg(QCoreApplication::applicationPid());
    (void)m_evidence.open(QDir(m_options.stateDir).filePath(QStringLiteral("evidence")), name);
  }
  record(QStringLiteral("refused"), entry::refused(failure, m_grant.digestHex));
  // After the entry is on disk, so the path the parent is told already holds it.
  (void)m_evidence.sync();
  sendControl(
      control::error(failure.code, failure.message, m_evidence.isOpen() ? m_evidence.path() : QString()));
  if (m_rdp)
    m_rdp->abort(); // the reader, if it was spawned: nothing outlives a refused open
  const Status removed = m_runDir.remove();
  record(QStringLiteral("cleanup"), QJsonObject{{QStringLiteral("run_dir_removed"), removed.ok()}});
  m_evidence.close();
  m_runLock.reset();
  setLifecycle(Lifecycle::Closed);
  return Status(failure);
}

} // namespace gc
