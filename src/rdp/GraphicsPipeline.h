// GraphicsPipeline: the graphics stage of RdpSession — one static virtual channel, drdynvc
// (MS-RDPEDYC), carrying one dynamic channel, RDPGFX (MS-RDPEGFX), read by the console's own
// RDPGFX client (src/rdp/gfx/: GfxChannel, GfxClient), which validates every PDU and
// executes it into the surface of record (RdpSession::desktop()). A server that offers no
// GFX keeps sending bitmap updates: the legacy path (LegacyUpdates, FrameMarking) is the
// fallback without any switch.
//
// - LoadChannels loads only drdynvc, with only rdpgfx as its dynamic add-in (not FreeRDP's
//   freerdp_client_load_addins, which adds ainput and whatever the settings imply), so the
//   MCS Connect Initial's channel list names only "drdynvc"; our add-in provider makes
//   drdynvc's "rdpgfx" our plugin (GfxChannel), not FreeRDP's.
// - drdynvc answers a create request for a name without a listener with STATUS_UNSUCCESSFUL
//   (drdynvc_process_create_request); every name but RDPGFX's has none. The server's create
//   requests are read on their way in (ReceiveChannelData, before drdynvc) and the refused
//   ones counted by name (ChannelReport). There too, before drdynvc reserves anything, the
//   declared sizes are bounded (a chunked message's total, a DATA_FIRST's Length: a hostile
//   4 GiB DATA_FIRST): beyond Limits it is RDP_RESOURCE_LIMIT and drdynvc never sees it.
// - Lossless only: no AVC420/AVC444 (lossy) and no RemoteFX; progressive, planar,
//   ClearCodec, alpha and uncompressed are decoded (gfx/CodecDispatch). The small cache
//   (16 MB) keeps memory bounded at 1080p.
// - A violation the RDPGFX client finds ends the session; gfxFailure() names it for
//   RdpSession's failed/lost path.
//
// Thread affinity: every callback runs on the session's FreeRDP worker: drdynvc runs
// synchronously there (SynchronousDynamicChannels), so RDPGFX decodes inside the worker's
// event processing, under RdpSession::m_ioMutex, like every other update. report() on any
// thread; gfxFailure() on the worker or once it is gone. Private to src/rdp/.
#pragma once

#include "common/Outcome.h"
#include "rdp/ChannelReport.h"
#include "rdp/DesktopSurface.h"
#include "rdp/front/Limits.h"
#include "rdp/front/Violation.h"

#include <QByteArray>

#include <freerdp/freerdp.h>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>

namespace gc {

namespace gfx {
class GfxChannel;
}

class GraphicsPipeline {
public:
  GraphicsPipeline();
  ~GraphicsPipeline();

  // The session's settings for the pipeline, on top of ClientBaseline's (which has every
  // channel off). False when FreeRDP refuses one.
  [[nodiscard]] static bool configure(rdpSettings* settings);
  // In ClientNew: puts LoadChannels and the channel-data watch in place.
  static void install(freerdp* instance, rdpContext* context);
  // Before the connection: the RDPGFX client draws into `desktop` within `limits`, and calls
  // `frameBegan` / `frameEnded` (RdpSession::desktopFrameBegan/Ended) around each frame, so no
  // reader of the desktop ever sees half of one.
  void prepare(const front::Limits& limits, DesktopSurface& desktop, std::function<void()> frameBegan,
               std::function<void()> frameEnded);
  gfx::GfxChannel* gfxChannel() { return m_channel.get(); }
  // The violation that ended the session, as the failure to report (RDP_PROTOCOL_VIOLATION,
  // RDP_RESOURCE_LIMIT or RDP_DESKTOP_MISMATCH, with the PDU kind and rule), if any.
  std::optional<Failure> gfxFailure() const;
  // The same as the PDU kind and rule (static strings of ours), for the evidence.
  std::optional<front::Violation> gfxViolation() const;
  // Worker, after freerdp_connect succeeded: which static channels were joined, and whether
  // the server said it supports the pipeline.
  void noteConnected(freerdp* instance);
  // Any thread: the server's negotiation response said it supports the pipeline
  // (DYNVC_GFX_PROTOCOL_SUPPORTED, MS-RDPBCGR 2.2.1.2.1) and drdynvc was joined, so its
  // channel may open. FreeRDP's server library says so by default, whether or not the server
  // then opens it (weston, the test guest's legacy mode): a promise, not a fact.
  bool advertised() const { return m_advertised.load(std::memory_order_acquire); }

  ChannelReport::Snapshot report() const { return m_report.snapshot(); }
  ChannelReport& channelReport() { return m_report; } // the worker's callbacks write it

private:
  static BOOL loadChannels(freerdp* instance);
  static BOOL receiveChannelData(freerdp* instance, UINT16 channelId, const BYTE* data, size_t size,
                                 UINT32 flags, size_t totalSize);

  // Reads the create requests out of drdynvc's data (chunks reassembled up to a bound) and
  // bounds what drdynvc would reserve (the chunked message, a DATA_FIRST's Length); false:
  // refused, not for drdynvc.
  bool watch(const BYTE* data, size_t size, UINT32 flags, size_t totalSize);
  std::optional<front::Violation> checkDataFirst();

  ChannelReport m_report;
  std::unique_ptr<gfx::GfxChannel> m_channel;
  UINT16 m_drdynvcId = 0;
  std::atomic<bool> m_advertised{false};
  QByteArray m_message; // the head of the drdynvc PDU being reassembled (bounded)
  bool m_inMessage = false;
  bool m_headChecked = false;
  front::Limits m_limits;
};

} // namespace gc
