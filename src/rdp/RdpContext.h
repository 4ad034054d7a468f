// The FreeRDP client context of an RdpSession: rdpClientContext first (FreeRDP allocates
// ContextSize bytes and treats the head as its own), then our back-pointer, which the
// static callbacks use to recover the session. Private to src/rdp/.
#pragma once

#include <freerdp/client.h>
#include <freerdp/transport_io.h>

namespace gc {

class FrontGuard;
class GraphicsPipeline;
class LegacyGraphics;
class RdpSession;

struct RdpContext {
  rdpClientContext common;
  RdpSession* session;
  pTransportRWFkt originalWritePdu;               // FreeRDP's own, wrapped to trace PDU order
  pTCPConnect originalTcpConnect;                 // FreeRDP's own, wrapped to keep a handle for abort()
  GraphicsPipeline* pipeline;                     // the session's, for the channel callbacks
  pReceiveChannelData originalReceiveChannelData; // FreeRDP's, after our create-request watch
  FrontGuard* front;                              // the session's validating fronts
  pTransportRWFkt originalReadPdu;                // FreeRDP's own, wrapped by FrontGuard
  LegacyGraphics* legacy;                         // the legacy path's drawing (SessionSetup's)
};

} // namespace gc
