#include "rdp/LegacyBitmaps.h"

#include "rdp/RdpContext.h"
#include "rdp/WLogRouter.h"
#include "rdp/codec/PlanarDecoder.h"

#include <freerdp/codec/color.h>
#include <freerdp/constants.h>
#include <freerdp/gdi/gdi.h>
#include <winpr/crt.h>

#include <span>

namespace gc {

bool LegacyBitmaps::install(rdpContext* context) {
  rdpGraphics* graphics = context ? context->graphics : nullptr;
  if (!graphics || !graphics->Bitmap_Prototype || !graphics->Bitmap_Prototype->Decompress)
    return false;
  auto* ctx = reinterpret_cast<RdpContext*>(context);
  if (graphics->Bitmap_Prototype->Decompress == &decompress)
    return true;
  ctx->gdiBitmapDecompress = graphics->Bitmap_Prototype->Decompress;
  graphics->Bitmap_Prototype->Decompress = &decompress;
  return true;
}

BOOL LegacyBitmaps::decompress(rdpContext* context, rdpBitmap* bitmap, const BYTE* data, UINT32 width,
                               UINT32 height, UINT32 bpp, UINT32 length, BOOL compressed, UINT32 codecId) {
  auto* ctx = reinterpret_cast<RdpContext*>(context);
  const bool planar =
      compressed && bpp == 32 && codecId != RDP_CODEC_ID_REMOTEFX && codecId != RDP_CODEC_ID_IMAGE_REMOTEFX;
  if (!planar)
    return ctx->gdiBitmapDecompress ? ctx->gdiBitmapDecompress(context, bitmap, data, width, height, bpp,
                                                               length, compressed, codecId)
                                    : FALSE;
  rdpGdi* gdi = context->gdi;
  if (!gdi || !bitmap || !data || length == 0 || width == 0 || height == 0 ||
      width > codec::Pixels::kMaxSide || height > codec::Pixels::kMaxSide)
    return FALSE;
  bitmap->compressed = FALSE;
  bitmap->format = gdi->dstFormat;
  if (FreeRDPGetBytesPerPixel(bitmap->format) != codec::Pixels::kBytesPerPixel)
    return FALSE;
  const std::size_t stride = std::size_t(width) * codec::Pixels::kBytesPerPixel;
  bitmap->length = UINT32(stride * height); // at most 8192 x 8192 x 4: fits
  bitmap->data = static_cast<BYTE*>(winpr_aligned_malloc(bitmap->length, 16));
  if (!bitmap->data)
    return FALSE;
  const codec::Pixels out{bitmap->data, stride, width, height};
  codec::PlanarDecoder::Options options;
  options.rows = codec::PlanarDecoder::Rows::BottomUp;
  options.alpha = codec::PlanarDecoder::Alpha::Opaque;
  if (front::isViolation(
          codec::PlanarDecoder::decode(std::span<const uint8_t>(data, length), out, options))) {
    qCWarning(lcRdp) << "legacy planar bitmap refused by the decoder";
    return FALSE;
  }
  return TRUE;
}

} // namespace gc
