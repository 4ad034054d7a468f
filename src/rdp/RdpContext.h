// The FreeRDP client context of an RdpSession: rdpClientContext first (FreeRDP allocates
// ContextSize bytes and treats the head as its own), then what the static callbacks of each
// stage need: the session's hooks (SessionHooks.h, never the session itself), the parts the
// session owns, FreeRDP's own callbacks we wrap, and the stages' per-connection state.
// Private to src/rdp/.
#pragma once

#include <freerdp/client.h>
#include <freerdp/transport_io.h>

namespace gc {

class FrontGuard;
class GraphicsPipeline;
class LegacyGraphics;
class SessionHooks;
namespace gfx {
class GfxChannel;
}

struct RdpContext {
  rdpClientContext common;
  SessionHooks* session;
  pTransportRWFkt originalWritePdu;               // FreeRDP's own, wrapped to trace PDU order
  pTCPConnect originalTcpConnect;                 // FreeRDP's own, wrapped to keep a handle for abort()
  GraphicsPipeline* pipeline;                     // the session's, for the channel callbacks
  pReceiveChannelData originalReceiveChannelData; // FreeRDP's, after our create-request watch
  FrontGuard* front;                              // the session's validating fronts
  pTransportRWFkt originalReadPdu;                // FreeRDP's own, wrapped by FrontGuard
  LegacyGraphics* legacy;                         // the legacy path's drawing (SessionSetup's)
  gfx::GfxChannel* gfxChannel;                    // the session's, for the plugin's init
  bool legacyFrameOpen;                           // FrameMarking: inside a Surface Frame Marker pair
};

} // namespace gc
