// FrameMarking: the frame stage of RdpSession — FreeRDP's paint callbacks (BeginPaint,
// EndPaint, DesktopResize, SurfaceFrameMarker) turned into DesktopFrames updates and the
// guest sync's notes. Every decoder ends here: the legacy bitmap/surface-command path and the
// graphics pipeline (libfreerdp/gdi/gfx.c outputs each frame's invalid region through
// update_begin_paint/update_end_paint), so both reach the same frame pool the same way.
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
