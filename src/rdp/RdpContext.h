// The FreeRDP client context of an RdpSession: rdpClientContext first (FreeRDP allocates
// ContextSize bytes and treats the head as its own), then our back-pointer, which the
// static callbacks use to recover the session. Private to src/rdp/.
#pragma once

#include <freerdp/client.h>
#include <freerdp/graphics.h>
#include <freerdp/transport_io.h>

namespace gc {

class FrontGuard;
class GraphicsPipeline;
class RdpSession;
class TileDigest;

struct RdpContext {
  rdpClientContext common;
  RdpSession* session;
  pTransportRWFkt originalWritePdu;               // FreeRDP's own, wrapped to trace PDU order
  pTCPConnect originalTcpConnect;                 // FreeRDP's own, wrapped to keep a handle for abort()
  pSurfaceFrameMarker gdiFrameMarker;             // FreeRDP GDI's, chained after ours (frame boundaries)
  GraphicsPipeline* pipeline;                     // the session's, for the channel callbacks
  pReceiveChannelData originalReceiveChannelData; // FreeRDP's, after our create-request watch
  FrontGuard* front;                              // the session's validating fronts
  pTransportRWFkt originalReadPdu;                // FreeRDP's own, wrapped by FrontGuard
  TileDigest* gdiDigest;                          // what the GDI's in-place draws changed (SessionSetup's)
  pBitmap_Decompress gdiBitmapDecompress;         // the GDI's, behind LegacyBitmaps
  int gdiDigestOpens;                             // RDPGFX opens when gdiDigest was last valid
};

} // namespace gc
