#include "rdp/FrameMarking.h"

#include "rdp/DesktopSurface.h"
#include "rdp/LegacyGraphics.h"
#include "rdp/RdpContext.h"
#include "rdp/SessionHooks.h"

#include <freerdp/settings.h>

namespace gc {

namespace {
SessionHooks* sessionOf(rdpContext* context) {
  return reinterpret_cast<RdpContext*>(context)->session;
}
} // namespace

void FrameMarking::install(rdpContext* context) {
  rdpUpdate* update = context->update;
  update->EndPaint = &endPaint;
  update->DesktopResize = &desktopResize;
  update->SurfaceFrameMarker = &surfaceFrameMarker;
}

// The server's frame boundaries (MS-RDPBCGR 2.2.9.2.3): no lease inside a frame; the end is
// acknowledged when the console advertised frame acknowledgement (as FreeRDP's GDI did).
BOOL FrameMarking::surfaceFrameMarker(rdpContext* context, const SURFACE_FRAME_MARKER* marker) {
  SessionHooks* self = sessionOf(context);
  auto* ctx = reinterpret_cast<RdpContext*>(context);
  if (marker->frameAction == SURFACECMD_FRAMEACTION_BEGIN) {
    ctx->legacyFrameOpen = true;
    self->desktopFrameBegan();
  } else if (marker->frameAction == SURFACECMD_FRAMEACTION_END) {
    ctx->legacyFrameOpen = false;
    if (LegacyGraphics* legacy = ctx->legacy)
      legacy->takeDrawn(); // the frame ends here, not at its last update
    self->desktopFrameEnded();
    if (freerdp_settings_get_uint32(context->settings, FreeRDP_FrameAcknowledge) > 0 &&
        context->update->SurfaceFrameAcknowledge)
      return context->update->SurfaceFrameAcknowledge(context, marker->frameId);
  }
  return TRUE;
}

// Inside FreeRDP's update processing, after each update PDU. Outside a marked frame an update
// that drew is a frame of its own.
BOOL FrameMarking::endPaint(rdpContext* context) {
  SessionHooks* self = sessionOf(context);
  auto* ctx = reinterpret_cast<RdpContext*>(context);
  LegacyGraphics* legacy = ctx->legacy;
  if (!ctx->legacyFrameOpen && legacy && legacy->takeDrawn())
    self->desktopFrameEnded();
  return TRUE;
}

BOOL FrameMarking::desktopResize(rdpContext* context) {
  rdpSettings* settings = context->settings;
  const QSize size(int(freerdp_settings_get_uint32(settings, FreeRDP_DesktopWidth)),
                   int(freerdp_settings_get_uint32(settings, FreeRDP_DesktopHeight)));
  SessionHooks* self = sessionOf(context);
  // Judged before anything is sized for it (a guest may name 65535x65535).
  if (!self->admitDesktopSize(size, "DesktopResize") || !self->desktop().resize(size))
    return FALSE;
  if (LegacyGraphics* legacy = reinterpret_cast<RdpContext*>(context)->legacy)
    legacy->reset();
  self->noteDesktopResized(size);
  return TRUE;
}

} // namespace gc
