#include "rdp/FrameMarking.h"

#include "rdp/RdpContext.h"
#include "rdp/RdpSession.h"

#include <freerdp/gdi/gdi.h>
#include <freerdp/settings.h>

namespace gc {

namespace {
RdpSession* sessionOf(rdpContext* context) {
  return reinterpret_cast<RdpContext*>(context)->session;
}
} // namespace

void FrameMarking::install(rdpContext* context) {
  rdpUpdate* update = context->update;
  update->BeginPaint = &beginPaint;
  update->EndPaint = &endPaint;
  update->DesktopResize = &desktopResize;
  reinterpret_cast<RdpContext*>(context)->gdiFrameMarker = update->SurfaceFrameMarker;
  update->SurfaceFrameMarker = &surfaceFrameMarker;
}

// The server's frame boundaries (MS-RDPBCGR 2.2.9.2.3): no lease inside a frame, then chain
// to FreeRDP's GDI handler (it sends the frame acknowledgement).
BOOL FrameMarking::surfaceFrameMarker(rdpContext* context, const SURFACE_FRAME_MARKER* marker) {
  RdpSession* self = sessionOf(context);
  if (marker->frameAction == SURFACECMD_FRAMEACTION_BEGIN) {
    self->m_legacyFrameOpen = true;
    self->desktopFrameBegan();
  } else if (marker->frameAction == SURFACECMD_FRAMEACTION_END) {
    self->m_legacyFrameOpen = false;
    self->desktopFrameEnded();
  }
  const pSurfaceFrameMarker chained = reinterpret_cast<RdpContext*>(context)->gdiFrameMarker;
  return chained ? chained(context, marker) : TRUE;
}

BOOL FrameMarking::beginPaint(rdpContext* context) {
  rdpGdi* gdi = context->gdi;
  if (!gdi || !gdi->primary || !gdi->primary->hdc || !gdi->primary->hdc->hwnd)
    return FALSE;
  HGDI_WND hwnd = gdi->primary->hdc->hwnd;
  hwnd->invalid->null = TRUE;
  hwnd->ninvalid = 0;
  return TRUE;
}

// Inside FreeRDP's update processing: the only place the GDI buffer is read. The dirty
// rectangles go into the surface of record, compare-and-copy (only pixels that changed are
// damage); outside a marked frame each update is a frame of its own.
BOOL FrameMarking::endPaint(rdpContext* context) {
  rdpGdi* gdi = context->gdi;
  if (!gdi || !gdi->primary || !gdi->primary->hdc || !gdi->primary->hdc->hwnd)
    return FALSE;
  HGDI_WND hwnd = gdi->primary->hdc->hwnd;
  if (hwnd->invalid->null || hwnd->ninvalid <= 0)
    return TRUE;
  RdpSession* self = sessionOf(context);
  DesktopSurface& desktop = self->desktop();
  const QRect gdiRect(0, 0, int(gdi->width), int(gdi->height));
  if (desktop.size() != gdiRect.size())
    return FALSE; // the GDI and the surface were resized together (desktopResize)
  for (INT32 i = 0; i < hwnd->ninvalid; ++i) {
    const GDI_RGN& r = hwnd->cinvalid[i];
    const QRect area = QRect(r.x, r.y, r.w, r.h).intersected(gdiRect);
    if (area.isEmpty())
      continue;
    const uchar* from = gdi->primary_buffer + qsizetype(area.top()) * qsizetype(gdi->stride) +
                        qsizetype(area.left()) * DesktopSurface::kBytesPerPixel;
    desktop.write(area, from, qsizetype(gdi->stride));
  }
  hwnd->invalid->null = TRUE;
  hwnd->ninvalid = 0;
  if (!self->m_legacyFrameOpen)
    self->desktopFrameEnded();
  return TRUE;
}

BOOL FrameMarking::desktopResize(rdpContext* context) {
  rdpSettings* settings = context->settings;
  const QSize size(int(freerdp_settings_get_uint32(settings, FreeRDP_DesktopWidth)),
                   int(freerdp_settings_get_uint32(settings, FreeRDP_DesktopHeight)));
  RdpSession* self = sessionOf(context);
  // Judged before the GDI allocates anything for it (a guest may name 65535x65535).
  if (!self->admitDesktopSize(size, "DesktopResize") || !self->desktop().resize(size))
    return FALSE;
  if (!gdi_resize(context->gdi, UINT32(size.width()), UINT32(size.height())))
    return FALSE;
  self->noteDesktopResized(size);
  return TRUE;
}

} // namespace gc
