// LegacyUpdates: the console's own handlers for the legacy graphics and pointer updates FreeRDP
// parses (after the fronts validated the PDU: FrontGuard), in place of FreeRDP's GDI and
// caches. FreeRDP decodes nothing for the session (DeactivateClientDecoding: it creates no codec
// context and registers no handler of its own), so every update that reaches the core has its
// handler here:
// - BitmapUpdate, SurfaceBits: drawn by LegacyGraphics (the project's decoders) into the
//   surface of record;
// - Palette: accepted once checked; no 8 bpp bitmap is accepted (the fronts refuse it; the
//   console asks for 32 bpp), so a palette colours nothing;
// - pointer updates (position, system, colour, new, large, cached): accepted once checked, not
//   drawn; the panel shows its own pointer, as it did when FreeRDP's pointer cache kept shapes
//   nobody drew;
// - drawing orders: never reach the core (the Order Capability Set advertises none and the
//   fronts refuse a PDU that carries one).
// A handler that finds a rule broken records the Violation on the fronts (the session's
// failure: RDP_PROTOCOL_VIOLATION or RDP_RESOURCE_LIMIT) and returns FALSE, so FreeRDP ends the
// session; nothing of the update reached the desktop.
//
// Thread: the session's FreeRDP worker, inside update processing. Static functions only; they
// recover the session's LegacyGraphics from RdpContext. Private to src/rdp/.
#pragma once

#include <freerdp/freerdp.h>

namespace gc {

struct LegacyUpdates {
  // PostConnect (after FreeRDP registered what it registers, before the first update).
  static void install(rdpContext* context);

  static BOOL bitmapUpdate(rdpContext* context, const BITMAP_UPDATE* update);
  static BOOL surfaceBits(rdpContext* context, const SURFACE_BITS_COMMAND* command);
  static BOOL palette(rdpContext* context, const PALETTE_UPDATE* palette);
  static BOOL pointerPosition(rdpContext* context, const POINTER_POSITION_UPDATE* pointer);
  static BOOL pointerSystem(rdpContext* context, const POINTER_SYSTEM_UPDATE* pointer);
  static BOOL pointerColor(rdpContext* context, const POINTER_COLOR_UPDATE* pointer);
  static BOOL pointerNew(rdpContext* context, const POINTER_NEW_UPDATE* pointer);
  static BOOL pointerLarge(rdpContext* context, const POINTER_LARGE_UPDATE* pointer);
  static BOOL pointerCached(rdpContext* context, const POINTER_CACHED_UPDATE* pointer);
};

} // namespace gc
