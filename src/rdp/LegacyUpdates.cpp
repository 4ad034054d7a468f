#include "rdp/LegacyUpdates.h"

#include "rdp/FrontGuard.h"
#include "rdp/LegacyGraphics.h"
#include "rdp/RdpContext.h"
#include "rdp/WLogRouter.h"

#include <freerdp/pointer.h>
#include <freerdp/update.h>

#include <span>

namespace gc {

using front::Violation;

namespace {

constexpr std::string_view kPalettePdu = "legacy.Palette";
constexpr std::string_view kPointerPdu = "legacy.Pointer";
constexpr uint32_t kMaxPaletteColors = 256;
constexpr uint32_t kSysPointerNull = 0x00000000;
constexpr uint32_t kSysPointerDefault = 0x00007F00;

RdpContext* contextOf(rdpContext* context) {
  return reinterpret_cast<RdpContext*>(context);
}

// The update fails: the fronts keep why (the session's failure), FreeRDP disconnects.
BOOL refuse(rdpContext* context, const Violation& v) {
  if (FrontGuard* front = contextOf(context)->front)
    front->refuse(v);
  else
    qCWarning(lcRdp).nospace() << "refused a guest update: " << QLatin1StringView(v.pdu.data(), v.pdu.size())
                               << ": " << QLatin1StringView(v.rule.data(), v.rule.size());
  return FALSE;
}

BOOL drawn(rdpContext* context, const front::Checked<front::Ok>& result) {
  if (const auto* v = std::get_if<Violation>(&result))
    return refuse(context, *v);
  return TRUE;
}

LegacyGraphics* graphicsOf(rdpContext* context) {
  return context ? contextOf(context)->legacy : nullptr;
}

// The pointer bounds the console advertised (ClientBaseline: the pointer cache sizes).
BOOL checkPointerShape(rdpContext* context, uint32_t cacheIndex, uint32_t width, uint32_t height) {
  const FrontGuard* front = contextOf(context)->front;
  const front::Limits limits = front ? front->limits() : front::Limits{};
  if (cacheIndex >= limits.maxPointerCacheEntries)
    return refuse(context, Violation::resource(kPointerPdu, "pointer cache index beyond the cache"));
  if (width > limits.maxPointerSide || height > limits.maxPointerSide)
    return refuse(context, Violation::resource(kPointerPdu, "pointer larger than the bound"));
  return TRUE;
}

} // namespace

void LegacyUpdates::install(rdpContext* context) {
  rdpUpdate* update = context->update;
  update->BitmapUpdate = &bitmapUpdate;
  update->SurfaceBits = &surfaceBits;
  update->Palette = &palette;
  rdpPointerUpdate* pointer = update->pointer;
  pointer->PointerPosition = &pointerPosition;
  pointer->PointerSystem = &pointerSystem;
  pointer->PointerColor = &pointerColor;
  pointer->PointerNew = &pointerNew;
  pointer->PointerLarge = &pointerLarge;
  pointer->PointerCached = &pointerCached;
}

BOOL LegacyUpdates::bitmapUpdate(rdpContext* context, const BITMAP_UPDATE* update) {
  LegacyGraphics* graphics = graphicsOf(context);
  if (!graphics || !update)
    return FALSE;
  for (UINT32 i = 0; i < update->number; ++i) {
    const BITMAP_DATA& r = update->rectangles[i];
    LegacyGraphics::Bitmap bitmap;
    bitmap.left = r.destLeft;
    bitmap.top = r.destTop;
    bitmap.right = r.destRight;
    bitmap.bottom = r.destBottom;
    bitmap.width = r.width;
    bitmap.height = r.height;
    bitmap.bpp = r.bitsPerPixel;
    bitmap.compressed = r.compressed;
    if (r.bitmapDataStream)
      bitmap.data = std::span<const uint8_t>(r.bitmapDataStream, r.bitmapLength);
    if (!drawn(context, graphics->draw(bitmap)))
      return FALSE;
  }
  return TRUE;
}

BOOL LegacyUpdates::surfaceBits(rdpContext* context, const SURFACE_BITS_COMMAND* command) {
  LegacyGraphics* graphics = graphicsOf(context);
  if (!graphics || !command)
    return FALSE;
  LegacyGraphics::SurfaceBits bits;
  bits.left = command->destLeft;
  bits.top = command->destTop;
  bits.right = command->destRight;
  bits.bottom = command->destBottom;
  bits.width = command->bmp.width;
  bits.height = command->bmp.height;
  bits.bpp = command->bmp.bpp;
  bits.codecId = command->bmp.codecID;
  if (command->bmp.bitmapData)
    bits.data = std::span<const uint8_t>(command->bmp.bitmapData, command->bmp.bitmapDataLength);
  return drawn(context, graphics->draw(bits));
}

BOOL LegacyUpdates::palette(rdpContext* context, const PALETTE_UPDATE* palette) {
  if (!palette || palette->number > kMaxPaletteColors)
    return refuse(context, Violation::protocol(kPalettePdu, "numberColors beyond 256"));
  return TRUE;
}

BOOL LegacyUpdates::pointerPosition(rdpContext*, const POINTER_POSITION_UPDATE*) {
  return TRUE;
}

BOOL LegacyUpdates::pointerSystem(rdpContext* context, const POINTER_SYSTEM_UPDATE* pointer) {
  if (!pointer || (pointer->type != kSysPointerNull && pointer->type != kSysPointerDefault))
    return refuse(context, Violation::protocol(kPointerPdu, "unknown systemPointerType"));
  return TRUE;
}

BOOL LegacyUpdates::pointerColor(rdpContext* context, const POINTER_COLOR_UPDATE* pointer) {
  return pointer && checkPointerShape(context, pointer->cacheIndex, pointer->width, pointer->height);
}

BOOL LegacyUpdates::pointerNew(rdpContext* context, const POINTER_NEW_UPDATE* pointer) {
  return pointer && checkPointerShape(context, pointer->colorPtrAttr.cacheIndex, pointer->colorPtrAttr.width,
                                      pointer->colorPtrAttr.height);
}

BOOL LegacyUpdates::pointerLarge(rdpContext* context, const POINTER_LARGE_UPDATE* pointer) {
  return pointer && checkPointerShape(context, pointer->cacheIndex, pointer->width, pointer->height);
}

BOOL LegacyUpdates::pointerCached(rdpContext* context, const POINTER_CACHED_UPDATE* pointer) {
  return pointer && checkPointerShape(context, pointer->cacheIndex, 0, 0);
}

} // namespace gc
