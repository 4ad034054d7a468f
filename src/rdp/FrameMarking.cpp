#include "rdp/FrameMarking.h"

#include "rdp/GraphicsPipeline.h"
#include "rdp/RdpContext.h"
#include "rdp/RdpSession.h"
#include "rdp/TileDigest.h"
#include "rdp/gfx/GfxChannel.h"

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
    // The tiles drawn again after they changed get their final digest (TileDigest "Frames").
    if (TileDigest* digest = reinterpret_cast<RdpContext*>(context)->gdiDigest)
      digest->settle(self->desktop().constBits(), self->desktop().stride());
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

// Inside FreeRDP's update processing. The GDI has drawn the update in place, into the
// surface of record (SessionSetup: its primary buffer is the surface's), so the old pixels
// are gone: the tiles whose digest changed are the damage (TileDigest), within the invalid
// rectangles the GDI reported, and those rectangles are what the update touched (the guest
// sync's Refresh Rect answer repaints pixels unchanged). Outside a marked frame each update
// is a frame of its own.
BOOL FrameMarking::endPaint(rdpContext* context) {
  rdpGdi* gdi = context->gdi;
  if (!gdi || !gdi->primary || !gdi->primary->hdc || !gdi->primary->hdc->hwnd)
    return FALSE;
  HGDI_WND hwnd = gdi->primary->hdc->hwnd;
  if (hwnd->invalid->null || hwnd->ninvalid <= 0)
    return TRUE;
  auto* ctx = reinterpret_cast<RdpContext*>(context);
  RdpSession* self = ctx->session;
  DesktopSurface& desktop = self->desktop();
  const QRect gdiRect(0, 0, int(gdi->width), int(gdi->height));
  if (desktop.size() != gdiRect.size() || gdi->primary_buffer != desktop.bits() || !ctx->gdiDigest)
    return FALSE; // the GDI and the surface were resized together (desktopResize)
  QList<QRect> invalid;
  for (INT32 i = 0; i < hwnd->ninvalid; ++i) {
    const GDI_RGN& r = hwnd->cinvalid[i];
    const QRect area = QRect(r.x, r.y, r.w, r.h).intersected(gdiRect);
    if (!area.isEmpty())
      invalid.append(area);
  }
  // The RDPGFX client writes the same surface: a digest taken before it did is stale (a tile
  // drawn back to its old pixels would look unchanged). While the channel is open, and after
  // it was opened since, every tile is unknown: all the GDI touched is damage.
  TileDigest& digest = *ctx->gdiDigest;
  const gfx::GfxChannel* channel = ctx->pipeline ? ctx->pipeline->gfxChannel() : nullptr;
  const bool gfxOpen = channel && channel->isOpen();
  const int opens = channel ? channel->opens() : 0;
  if (gfxOpen || opens != ctx->gdiDigestOpens || digest.size() != gdiRect.size())
    digest.reset(gdiRect.size());
  ctx->gdiDigestOpens = opens;
  // Inside a marked frame a tile found changed is not hashed again until the frame's end.
  const QList<QRect> changed = self->m_legacyFrameOpen
                                   ? digest.touch(desktop.constBits(), desktop.stride(), invalid)
                                   : digest.changed(desktop.constBits(), desktop.stride(), invalid);
  if (gfxOpen)
    digest.reset(gdiRect.size());
  for (const QRect& area : std::as_const(invalid)) {
    // Touched: the pixels compared with themselves (never damage, only the note).
    desktop.write(area,
                  desktop.constBits() + qsizetype(area.top()) * desktop.stride() +
                      qsizetype(area.left()) * DesktopSurface::kBytesPerPixel,
                  desktop.stride());
    for (const QRect& tile : changed) {
      if (const QRect damaged = tile.intersected(area); !damaged.isEmpty())
        desktop.noteWritten(damaged);
    }
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
  // The GDI's primary stays the surface (resized above: zeroed, the same buffer).
  DesktopSurface& desktop = self->desktop();
  if (!gdi_resize_ex(context->gdi, UINT32(size.width()), UINT32(size.height()), UINT32(desktop.stride()),
                     PIXEL_FORMAT_BGRX32, desktop.bits(), nullptr) ||
      context->gdi->primary_buffer != desktop.bits())
    return FALSE;
  if (auto* digest = reinterpret_cast<RdpContext*>(context)->gdiDigest)
    digest->reset(size);
  self->noteDesktopResized(size);
  return TRUE;
}

} // namespace gc
