// GraphicsPipeline: the graphics stage of RdpSession — one static virtual channel, drdynvc
// (MS-RDPEDYC), carrying one dynamic channel, RDPGFX (MS-RDPEGFX), decoded by FreeRDP's GDI
// (libfreerdp/gdi/gfx.c), whose output reaches FrameMarking exactly like the legacy bitmap
// path. A server that offers no GFX keeps sending bitmap updates: the legacy path is the
// fallback without any switch.
//
// - LoadChannels loads only drdynvc, with only rdpgfx as its dynamic add-in (not FreeRDP's
//   freerdp_client_load_addins, which adds ainput and whatever the settings imply), so the
//   MCS Connect Initial's channel list names only "drdynvc".
// - drdynvc answers a create request for a name without a listener with STATUS_UNSUCCESSFUL
//   (drdynvc_process_create_request); every name but RDPGFX's has none. The server's create
//   requests are read on their way in (ReceiveChannelData, before drdynvc) and the refused
//   ones counted by name (ChannelReport).
// - Lossless only: no AVC420/AVC444 (lossy); progressive, planar, ClearCodec, RemoteFX and
//   uncompressed are decoded. The small cache (16 MB) keeps memory bounded at 1080p.
// - Guest pixels: the GDI's surfaces and cache entries are zeroed before FreeRDP frees them
//   (DeleteSurface, EvictCacheEntry wrapped); codec-internal buffers are left to the zeroing
//   allocator (ZeroingAllocator.h).
//
// Thread affinity: every callback runs on the session's FreeRDP worker: drdynvc runs
// synchronously there (SynchronousDynamicChannels), so RDPGFX decodes inside the worker's
// event processing, under RdpSession::m_ioMutex, like every other update. report() on any
// thread. Private to src/rdp/.
#pragma once

#include "rdp/ChannelReport.h"

#include <QByteArray>

#include <freerdp/freerdp.h>

namespace gc {

class GraphicsPipeline {
public:
  // The session's settings for the pipeline, on top of ClientBaseline's (which has every
  // channel off). False when FreeRDP refuses one.
  [[nodiscard]] static bool configure(rdpSettings* settings);
  // In ClientNew: puts LoadChannels and the channel-data watch in place.
  static void install(freerdp* instance, rdpContext* context);
  // Worker, after freerdp_connect succeeded: which static channels were joined.
  void noteConnected(freerdp* instance);

  ChannelReport::Snapshot report() const { return m_report.snapshot(); }
  ChannelReport& channelReport() { return m_report; } // the worker's callbacks write it

private:
  static BOOL loadChannels(freerdp* instance);
  static BOOL receiveChannelData(freerdp* instance, UINT16 channelId, const BYTE* data, size_t size,
                                 UINT32 flags, size_t totalSize);
  static void channelConnected(void* context, const ChannelConnectedEventArgs* e);
  static void channelDisconnected(void* context, const ChannelDisconnectedEventArgs* e);

  // Reads the create requests out of drdynvc's data (chunks reassembled up to a bound).
  void watch(const BYTE* data, size_t size, UINT32 flags);

  ChannelReport m_report;
  UINT16 m_drdynvcId = 0;
  QByteArray m_message; // the head of the drdynvc PDU being reassembled (bounded)
  bool m_inMessage = false;
};

} // namespace gc
