// FrameMarking: the frame stage of RdpSession for the legacy bitmap/surface-command path —
// FreeRDP's paint callbacks (EndPaint, DesktopResize, SurfaceFrameMarker) turned into frame
// boundaries of the surface of record for the guest sync and the lease. The legacy updates
// themselves are drawn by LegacyUpdates (compare-and-copy: the surface reports the damage);
// the graphics pipeline (our RDPGFX client) writes the surface itself.
//
// Thread affinity: every callback runs on the session's FreeRDP worker (the graphics pipeline
// too: drdynvc runs synchronously there, see GraphicsPipeline.h), inside FreeRDP's update
// processing and under RdpSession::m_ioMutex. Static functions only; they reach the session
// only through its hooks in RdpContext (SessionHooks.h). Private to src/rdp/.
#pragma once

#include <freerdp/freerdp.h>

namespace gc {

struct FrameMarking {
  // PostConnect: puts the paint callbacks in place.
  static void install(rdpContext* context);

  static BOOL endPaint(rdpContext* context);
  static BOOL desktopResize(rdpContext* context);
  static BOOL surfaceFrameMarker(rdpContext* context, const SURFACE_FRAME_MARKER* marker);
};

} // namespace gc
