// GfxClient: the console's own RDPGFX client, behind the DVC plugin (GfxChannel). Each
// message from the channel is decompressed (Zgfx, bounded), cut into PDUs (PduCursor),
// each PDU checked by the front (GfxFront) and only then executed into the surfaces and
// cache (SurfaceTable), whose output surface is the one surface of record (DesktopSurface).
// At each EndFrame (and after a message outside any frame) `frameEnded` hands the changes on
// (RdpSession::desktopFrameEnded); the frame is acknowledged when the pacing hook says so.
//
// The first violation stops the client: nothing more executes, it is kept for the evidence
// (violation()), and the channel ends the session.
//
// Thread: the RDP worker only (drdynvc runs synchronously there, under RdpSession::m_ioMutex).
#pragma once

#include "rdp/ChannelReport.h"
#include "rdp/DesktopSurface.h"
#include "rdp/front/Limits.h"
#include "rdp/front/Violation.h"
#include "rdp/gfx/CodecDispatch.h"
#include "rdp/gfx/GfxFront.h"
#include "rdp/gfx/SurfaceTable.h"
#include "rdp/gfx/Zgfx.h"

#include <atomic>
#include <deque>
#include <functional>
#include <optional>
#include <span>

namespace gc::gfx {

class GfxClient {
public:
  using Write = std::function<bool(std::span<const uint8_t>)>;
  // "Acknowledge frame `frameId` now": the pacing (default: always).
  using AckNow = std::function<bool(uint32_t frameId)>;

  GfxClient(const front::Limits& limits, DesktopSurface& desktop, std::function<void()> frameEnded,
            ChannelReport* report = nullptr);
  ~GfxClient();

  void setPacing(AckNow ackNow) { m_ackNow = std::move(ackNow); }
  // Called when a message leaves a frame open (StartFrame without its EndFrame yet): the
  // desktop holds half a frame until the frame-ended callback.
  void setFrameBegan(std::function<void()> frameBegan) { m_frameBegan = std::move(frameBegan); }

  // The channel opened: writes go through `write`; sends CapsAdvertise.
  bool opened(Write write);
  // The same CapsAdvertise again (the lock's gfx_caps rung): the server must answer it with a
  // CapsConfirm, after which `capsConfirmed` is called. Any other content would be a new
  // negotiation (GRD ends the session on a reduced list). False: not open or not written.
  bool readvertise();
  void setCapsConfirmed(std::function<void()> confirmed) { m_capsConfirmed = std::move(confirmed); }
  // Any thread: open, and no frame of the server's has ended on this client yet, so the
  // pipeline is coming up (its CapsConfirm, the surface and a first frame of all of it are on
  // their way, or still being encoded: the test guest under ASan took 244-308 ms between the
  // CapsConfirm and that frame).
  bool comingUp() const { return m_comingUp.load(std::memory_order_acquire); }
  // Any thread: the channel has opened at least once in this session.
  bool everOpened() const { return m_everOpened.load(std::memory_order_acquire); }
  // One message the channel received (RDP_SEGMENTED_DATA).
  front::Checked<front::Ok> receive(std::span<const uint8_t> message);
  // The channel closed: everything the guest made us hold is zeroed and freed.
  void closed();

  // Sends the acknowledgements the pacing held back, oldest first.
  void acknowledgeDeferred();
  std::size_t deferredAcknowledgements() const { return m_deferred.size(); }
  // FrameAcknowledge PDUs sent on this channel so far.
  uint32_t acknowledgementsSent() const { return m_acknowledged; }

  // The first violation (kept after close), if any.
  std::optional<front::Violation> violation() const { return m_violation; }
  // Records a violation found outside the PDUs (the channel layer's); the first one is kept.
  front::Violation fail(front::Violation v);

  const SurfaceTable& table() const { return m_table; }
  const GfxFront& front() const { return m_front; }
  uint32_t framesDecoded() const { return m_framesDecoded; }

private:
  front::Checked<front::Ok> execute(const Pdu& pdu);
  front::Checked<front::Ok> wireToSurface1(const WireToSurface1& p);
  front::Checked<front::Ok> wireToSurface2(const WireToSurface2& p);
  void endFrame(uint32_t frameId);
  void acknowledge(uint32_t frameId);

  front::Limits m_limits;
  SurfaceTable m_table;
  GfxFront m_front;
  Zgfx m_zgfx;
  CodecDispatch m_codecs;
  std::function<void()> m_frameEnded;
  std::function<void()> m_frameBegan;
  std::function<void()> m_capsConfirmed;
  ChannelReport* m_report;
  AckNow m_ackNow;
  Write m_write;
  ScratchPixels m_scratch;
  std::deque<uint32_t> m_deferred;
  uint32_t m_framesDecoded = 0;
  std::atomic<bool> m_comingUp{false};   // read by any thread (comingUp)
  std::atomic<bool> m_everOpened{false}; // read by any thread (everOpened)
  uint32_t m_acknowledged = 0;
  std::optional<front::Violation> m_violation;
  std::vector<QRect> m_touched;
};

} // namespace gc::gfx
