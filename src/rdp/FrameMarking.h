// FrameMarking: the frame stage of RdpSession — FreeRDP's paint callbacks (BeginPaint,
// EndPaint, DesktopResize, SurfaceFrameMarker) turned into the surface of record's damage and
// the guest sync's notes, for the legacy bitmap/surface-command path: FreeRDP's GDI draws in
// place into the surface (SessionSetup), and EndPaint reports what changed (TileDigest). The
// graphics pipeline (our RDPGFX client) writes the surface itself.
//
// Thread affinity: every callback runs on the session's FreeRDP worker (the graphics pipeline
// too: drdynvc runs synchronously there, see GraphicsPipeline.h), inside FreeRDP's update
// processing and under RdpSession::m_ioMutex. Static functions only. Private to src/rdp/.
#pragma once

#include <freerdp/freerdp.h>

namespace gc {

struct FrameMarking {
  // After gdi_init: puts the paint callbacks in place (chaining the GDI's frame marker).
  static void install(rdpContext* context);

  static BOOL beginPaint(rdpContext* context);
  static BOOL endPaint(rdpContext* context);
  static BOOL desktopResize(rdpContext* context);
  static BOOL surfaceFrameMarker(rdpContext* context, const SURFACE_FRAME_MARKER* marker);
};

} // namespace gc
