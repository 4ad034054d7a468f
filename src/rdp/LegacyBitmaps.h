// LegacyBitmaps: the legacy path's 32 bpp bitmaps (Bitmap Updates and cached bitmaps, RDP 6.0
// planar, rows bottom-up) decoded by the project's own PlanarDecoder (src/rdp/codec/), in
// front of FreeRDP's GDI. FreeRDP's planar context is sized for the whole desktop whatever the
// bitmaps are: at 1920x1080 it held 35.6 MiB resident in the reader, beside a
// decoder the graphics pipeline already has. Interleaved (15/16/24 bpp) and uncompressed
// bitmaps stay FreeRDP's (its interleaved context is 64x64-sized).
//
// The bitmap gets what FreeRDP's own Decompress gives it (gdi_Bitmap_Decompress, libfreerdp/
// gdi/graphics.c): the GDI's format, width x height x 4 bytes from winpr_aligned_malloc (its
// Bitmap_Free releases them); a stream PlanarDecoder refuses fails the bitmap as FreeRDP's
// planar_decompress failing would (the update, and so the session, fails).
//
// Thread: the session's FreeRDP worker (inside update processing). Static functions only;
// they recover the chained Decompress from RdpContext. Private to src/rdp/.
#pragma once

#include <freerdp/freerdp.h>
#include <freerdp/graphics.h>

namespace gc {

struct LegacyBitmaps {
  // After gdi_init_ex (which registers the GDI's bitmap prototype): ours in front of it.
  [[nodiscard]] static bool install(rdpContext* context);
  static BOOL decompress(rdpContext* context, rdpBitmap* bitmap, const BYTE* data, UINT32 width,
                         UINT32 height, UINT32 bpp, UINT32 length, BOOL compressed, UINT32 codecId);
};

} // namespace gc
