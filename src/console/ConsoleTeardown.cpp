// Console's teardown: every close path ends here once the phases are CLOSED. It wipes the
// input and frame buffers and accounts for each owner's bytes (the cleanup record's
// buffers_wiped), stops the reader, the panel and the MCP socket, removes the run directory
// and sends "closed" last. RDP_LOST first gives libvirt a bounded while to say the VM is gone.
#include "common/ExitCode.h"
#include "console/Console.h"
#include "console/ConsoleEvidence.h"
#include "privacy/SecureImage.h"
#include "privacy/ZeroingAllocator.h"
#include "session/ControlChannel.h"
#include "vm/DomainWatcher.h"

namespace gc {

void Console::teardown() {
  if (isTornDown() || !setLifecycle(Lifecycle::TearingDown))
    return;
  const Failure reason = m_phases.closeReason();
  m_expiry.stop();
  m_gate.wipe();
  m_sink.setSession(nullptr);
  if (m_rdp && reason.code == Refusal::ActionDone && !m_actionFinished) {
    // The action is the run's last input: let the guest read all of it before the connection
    // goes (a bounded half-close; the receipt's "executed" must mean the guest got it). Done
    // already when the receipt waited for it.
    m_actionFinished = true;
    record(QStringLiteral("rdp_finish"), entry::actionFinish(m_rdp->finishGracefully(kActionDeliveryBound)));
  }
  // Frames first: the session zeroes the pooled frames nobody holds any more.
  const FramePipeline::Wiped frames = m_pipeline.wipe();
  m_wipes.wiped(QStringLiteral("console_frame"), secureDrop(m_frame));
  if (m_rdp)
    m_rdp->abort(); // the reader disconnects, exits (or is killed); the shared desktop is zeroed
  accountFrameWipes(frames);
  record(QStringLiteral("buffers"), m_wipes.toJson());
  if (reason.code == Refusal::RdpLost && m_watcher && !m_watcher->hasFired())
    return awaitVmVerdict(); // the console is already inert: CLOSED, RDP down, buffers wiped
  finishTeardown(reason);
}

// What each owner zeroed (buffers_wiped in the cleanup record is computed from this).
void Console::accountFrameWipes(const FramePipeline::Wiped& frames) {
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
    return;
  }
  if (m_panel)
    m_wipes.wiped(QStringLiteral("panel_socket_by_allocator"), frames.packetBytesEmitted);
  if (!ZeroingAllocator::zeroesSmallBlocks())
    m_wipes.notWiped(QStringLiteral("allocator_small_blocks"), 0,
                     QStringLiteral("glibc's per-thread cache (blocks up to 1032 bytes) skips the zeroing"));
}

void Console::awaitVmVerdict() {
  setLifecycle(Lifecycle::AwaitingVmVerdict);
  QTimer::singleShot(kVmVerdictWindow, this, [this] { concludeVmVerdict(QString()); });
  m_watcher->checkNow();
}

void Console::concludeVmVerdict(const QString& vmGoneReason) {
  if (m_lifecycle != Lifecycle::AwaitingVmVerdict)
    return;
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

// The MCP socket goes before the run dir; an unsent reply is zeroed and accounted for.
void Console::stopMcp() {
  if (!m_mcp)
    return;
  m_mcp->stop();
  const ActionSocketServer::Wiped replies = m_mcp->wiped();
  m_wipes.wiped(QStringLiteral("capture_replies"), replies.bytes);
  if (replies.unwiped > 0)
    m_wipes.notWiped(QStringLiteral("capture_replies_shared"), replies.unwiped,
                     QStringLiteral("a capture buffer was shared when dropped"));
}

void Console::finishTeardown(const Failure& reason) {
  if (m_panel) {
    m_panel->closePanel(refusalName(reason.code));
    record(QStringLiteral("panel_refusals"), entry::refusalCounts(m_panel->refusals()));
    if (m_panelRefreshes > 0)
      record(QStringLiteral("panel_frames"),
             QJsonObject{{QStringLiteral("refreshes"), qint64(m_panelRefreshes)}});
  }
  m_watcher.reset();
  stopMcp();
  record(QStringLiteral("input_counts"), inputCounts());
  const Status removed = m_runDir.remove();
  record(QStringLiteral("cleanup"), entry::cleanup(removed.ok(), m_wipes.toJson()));
  QJsonObject closed{{QStringLiteral("code"), refusalName(reason.code)},
                     {QStringLiteral("message"), reason.message}};
  if (m_rdp) // the session's channels, as they happened (RDP_CHANNEL_REFUSED: refused creates)
    closed.insert(QStringLiteral("channels"), m_rdp->channelReport().closedJson());
  record(QStringLiteral("closed"), closed);
  m_evidence.close(); // on disk before the parent is told the head
  sendControl(control::closed(reason.code, reason.message, m_evidence.headHash(), m_evidence.path()));
  m_connection.reset();
  setLifecycle(Lifecycle::Closed);
  emit finished(exitStatus(ExitCode::Ok)); // every close after a successful open exits 0
}

} // namespace gc
