#include "rdp/gfx/CodecDispatch.h"

#include "rdp/gfx/GfxFront.h"

#include <freerdp/codec/clear.h>
#include <freerdp/codec/color.h>
#include <freerdp/codec/planar.h>
#include <freerdp/codec/progressive.h>
#include <freerdp/codec/region.h>

#include <set>

namespace gc::gfx {

namespace {

using front::Checked;
using front::Ok;
using front::Violation;

constexpr std::string_view kWts1 = "rdpgfx.WireToSurface1";
constexpr std::string_view kWts2 = "rdpgfx.WireToSurface2";

UINT32 formatOf(bool alpha) {
  return alpha ? PIXEL_FORMAT_BGRA32 : PIXEL_FORMAT_BGRX32;
}

// MS-RDPEGFX 2.2.4.3 RDPGFX_ALPHA_CODEC_BITMAP: the alpha bytes of the rectangle, raw or as
// runs; the colour bytes stay what the surface had.
Checked<Ok> decodeAlpha(std::span<const uint8_t> data, Pixels out) {
  constexpr std::string_view rule = "alpha codec data malformed";
  if (data.size() < 4 || data[0] != 0x4C || data[1] != 0x41) // alphaSig 0x414C, little-endian
    return Violation::protocol(kWts1, "alpha codec signature missing");
  const bool compressed = (data[2] | data[3] << 8) != 0;
  std::size_t pos = 4;
  const uint64_t pixels = uint64_t(out.width) * uint64_t(out.height);
  const auto put = [&](uint64_t index, uint8_t a) {
    const uint64_t y = index / uint64_t(out.width), x = index % uint64_t(out.width);
    out.bits[qsizetype(y) * out.stride + qsizetype(x) * 4 + 3] = a;
  };
  if (!compressed) {
    if (data.size() - pos != pixels)
      return Violation::protocol(kWts1, rule);
    for (uint64_t i = 0; i < pixels; ++i)
      put(i, data[pos + i]);
    return Ok{};
  }
  uint64_t done = 0;
  while (done < pixels) {
    if (data.size() - pos < 2)
      return Violation::protocol(kWts1, rule);
    const uint8_t a = data[pos];
    uint64_t run = data[pos + 1];
    pos += 2;
    if (run == 0xFF) {
      if (data.size() - pos < 2)
        return Violation::protocol(kWts1, rule);
      run = uint64_t(data[pos]) | uint64_t(data[pos + 1]) << 8;
      pos += 2;
      if (run == 0xFFFF) {
        if (data.size() - pos < 4)
          return Violation::protocol(kWts1, rule);
        run = uint64_t(data[pos]) | uint64_t(data[pos + 1]) << 8 | uint64_t(data[pos + 2]) << 16 |
              uint64_t(data[pos + 3]) << 24;
        pos += 4;
      }
    }
    if (run > pixels - done)
      return Violation::protocol(kWts1, "alpha runs beyond the rectangle");
    for (uint64_t i = 0; i < run; ++i)
      put(done + i, a);
    done += run;
  }
  if (pos != data.size())
    return Violation::protocol(kWts1, rule);
  return Ok{};
}

} // namespace

struct CodecDispatch::State {
  BITMAP_PLANAR_CONTEXT* planar = nullptr;
  QSize planarMax;
  CLEAR_CONTEXT* clear = nullptr;
  PROGRESSIVE_CONTEXT* progressive = nullptr;
  std::set<uint16_t> progressiveSurfaces;
  gdiPalette palette{};

  ~State() { release(); }
  void release() {
    if (planar)
      freerdp_bitmap_planar_context_free(planar);
    planar = nullptr;
    planarMax = QSize();
    if (clear)
      clear_context_free(clear);
    clear = nullptr;
    if (progressive)
      progressive_context_free(progressive);
    progressive = nullptr;
    progressiveSurfaces.clear();
  }
};

CodecDispatch::CodecDispatch() : m_state(std::make_unique<State>()) {}

CodecDispatch::~CodecDispatch() = default;

void CodecDispatch::reset() {
  m_state->release();
}

Checked<Ok> CodecDispatch::decode(uint16_t codecId, std::span<const uint8_t> data, Pixels out, bool alpha) {
  if (!out.bits || out.width <= 0 || out.height <= 0 || out.stride < qsizetype(out.width) * 4)
    return Violation::resource(kWts1, "no scratch for the rectangle");
  if (data.size() > UINT32_MAX)
    return Violation::protocol(kWts1, "bitmap data beyond 4 GiB");
  State& s = *m_state;
  switch (codecId) {
  case codec::kPlanar: {
    // The planar context's buffers are sized for the largest rectangle it has seen; a larger
    // one (within its surface, checked by the front) resets it first.
    const QSize need(out.width, out.height);
    if (!s.planar || need.width() > s.planarMax.width() || need.height() > s.planarMax.height()) {
      const QSize max = need.expandedTo(s.planarMax);
      if (!s.planar)
        s.planar = freerdp_bitmap_planar_context_new(0, UINT32(max.width()), UINT32(max.height()));
      else if (!freerdp_bitmap_planar_context_reset(s.planar, UINT32(max.width()), UINT32(max.height())))
        return Violation::resource(kWts1, "planar context cannot grow");
      if (!s.planar)
        return Violation::resource(kWts1, "planar context cannot be made");
      s.planarMax = max;
    }
    if (!planar_decompress(s.planar, data.data(), UINT32(data.size()), UINT32(out.width), UINT32(out.height),
                           out.bits, formatOf(alpha), UINT32(out.stride), 0, 0, UINT32(out.width),
                           UINT32(out.height), FALSE))
      return Violation::protocol(kWts1, "planar data malformed");
    return Ok{};
  }
  case codec::kClearCodec: {
    if (!s.clear && !(s.clear = clear_context_new(FALSE)))
      return Violation::resource(kWts1, "ClearCodec context cannot be made");
    const INT32 rc = clear_decompress(s.clear, data.data(), UINT32(data.size()), UINT32(out.width),
                                      UINT32(out.height), out.bits, formatOf(alpha), UINT32(out.stride), 0, 0,
                                      UINT32(out.width), UINT32(out.height), &s.palette);
    if (rc < 0)
      return Violation::protocol(kWts1, "ClearCodec data malformed");
    return Ok{};
  }
  case codec::kAlpha:
    return decodeAlpha(data, out);
  default:
    return Violation::protocol(kWts1, "codec without a decoder");
  }
}

Checked<Ok> CodecDispatch::decodeProgressive(uint16_t surfaceId, std::span<const uint8_t> data,
                                             Pixels surface, bool alpha, uint32_t frameId,
                                             std::vector<QRect>& touched) {
  if (!surface.bits || surface.width <= 0 || surface.height <= 0)
    return Violation::resource(kWts2, "no pixels for the surface");
  if (data.size() > UINT32_MAX)
    return Violation::protocol(kWts2, "bitmap data beyond 4 GiB");
  State& s = *m_state;
  if (!s.progressive && !(s.progressive = progressive_context_new(FALSE)))
    return Violation::resource(kWts2, "progressive context cannot be made");
  if (!s.progressiveSurfaces.contains(surfaceId)) {
    if (progressive_create_surface_context(s.progressive, surfaceId, UINT32(surface.width),
                                           UINT32(surface.height)) < 0)
      return Violation::resource(kWts2, "progressive surface context cannot be made");
    s.progressiveSurfaces.insert(surfaceId);
  }
  REGION16 invalid;
  region16_init(&invalid);
  const INT32 rc =
      progressive_decompress(s.progressive, data.data(), UINT32(data.size()), surface.bits, formatOf(alpha),
                             UINT32(surface.stride), 0, 0, &invalid, surfaceId, frameId);
  UINT32 count = 0;
  const RECTANGLE_16* rects = region16_rects(&invalid, &count);
  touched.clear();
  for (UINT32 i = 0; rects && i < count; ++i) {
    const QRect r(int(rects[i].left), int(rects[i].top), int(rects[i].right) - int(rects[i].left),
                  int(rects[i].bottom) - int(rects[i].top));
    const QRect clipped = r.intersected(QRect(0, 0, surface.width, surface.height));
    if (!clipped.isEmpty())
      touched.push_back(clipped);
  }
  region16_uninit(&invalid);
  if (rc < 0)
    return Violation::protocol(kWts2, "progressive data malformed");
  return Ok{};
}

void CodecDispatch::deleteSurface(uint16_t surfaceId) {
  State& s = *m_state;
  if (s.progressive && s.progressiveSurfaces.erase(surfaceId))
    progressive_delete_surface_context(s.progressive, surfaceId);
}

} // namespace gc::gfx
