#include "rdp/FrameMarking.h"

#include "rdp/RdpContext.h"
#include "rdp/RdpSession.h"

#include <QVarLengthArray>

#include <freerdp/gdi/gdi.h>
#include <freerdp/settings.h>

#include <span>

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

// The server's frame boundaries (MS-RDPBCGR 2.2.9.2.3): hold a frame's updates back until
// its end, then chain to FreeRDP's GDI handler (it sends the frame acknowledgement).
BOOL FrameMarking::surfaceFrameMarker(rdpContext* context, const SURFACE_FRAME_MARKER* marker) {
  RdpSession* self = sessionOf(context);
  if (marker->frameAction == SURFACECMD_FRAMEACTION_BEGIN) {
    self->m_frames.beginFrame();
  } else if (marker->frameAction == SURFACECMD_FRAMEACTION_END && self->m_frames.endFrame()) {
    self->postToMain([self] { self->handOutFrame(); });
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
// rectangles go into the session's frame pool (DesktopFrames), which copies only the pixels
// that changed.
BOOL FrameMarking::endPaint(rdpContext* context) {
  rdpGdi* gdi = context->gdi;
  if (!gdi || !gdi->primary || !gdi->primary->hdc || !gdi->primary->hdc->hwnd)
    return FALSE;
  HGDI_WND hwnd = gdi->primary->hdc->hwnd;
  if (hwnd->invalid->null || hwnd->ninvalid <= 0)
    return TRUE;
  RdpSession* self = sessionOf(context);
  QVarLengthArray<QRect, 16> rects;
  for (INT32 i = 0; i < hwnd->ninvalid; ++i) {
    const GDI_RGN& r = hwnd->cinvalid[i];
    rects.append(QRect(r.x, r.y, r.w, r.h));
  }
  hwnd->invalid->null = TRUE;
  hwnd->ninvalid = 0;
  const DesktopFrames::Absorbed absorbed = self->m_frames.absorb(
      gdi->primary_buffer, qsizetype(gdi->stride), QSize(int(gdi->width), int(gdi->height)),
      std::span<const QRect>(rects.constData(), std::size_t(rects.size())));
  if (absorbed.firstPending)
    self->postToMain([self] { self->handOutFrame(); });
  // startGuestSync() arms its request under m_ioMutex, which this update holds: the update
  // is wholly before the request or wholly after it.
  self->m_guestSync.noteUpdate(std::span<const QRect>(rects.constData(), std::size_t(rects.size())),
                               absorbed.changed);
  return TRUE;
}

BOOL FrameMarking::desktopResize(rdpContext* context) {
  rdpSettings* settings = context->settings;
  const UINT32 w = freerdp_settings_get_uint32(settings, FreeRDP_DesktopWidth);
  const UINT32 h = freerdp_settings_get_uint32(settings, FreeRDP_DesktopHeight);
  if (!gdi_resize(context->gdi, w, h))
    return FALSE;
  RdpSession* self = sessionOf(context);
  if (self->m_frames.resize(QSize(int(w), int(h))))
    self->postToMain([self] { self->handOutFrame(); });
  return TRUE;
}

} // namespace gc
