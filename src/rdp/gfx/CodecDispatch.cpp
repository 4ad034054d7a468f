#include "rdp/gfx/CodecDispatch.h"

#include "rdp/codec/AlphaDecoder.h"
#include "rdp/codec/ClearContext.h"
#include "rdp/codec/PlanarDecoder.h"
#include "rdp/codec/ProgressiveFront.h"
#include "rdp/gfx/GfxFront.h"

#include <freerdp/codec/color.h>
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

gc::codec::Pixels view(const Pixels& p) {
  return gc::codec::Pixels{p.bits, std::size_t(p.stride), uint32_t(p.width), uint32_t(p.height)};
}

} // namespace

struct CodecDispatch::State {
  explicit State(const front::Limits& limits) : progressiveFront(limits) {}
  gc::codec::ClearContext clear;
  gc::codec::ProgressiveFront progressiveFront;
  PROGRESSIVE_CONTEXT* progressive = nullptr;
  std::set<uint16_t> progressiveSurfaces;

  ~State() { release(); }
  void release() {
    clear.reset();
    progressiveFront.reset();
    if (progressive)
      progressive_context_free(progressive);
    progressive = nullptr;
    progressiveSurfaces.clear();
  }
};

CodecDispatch::CodecDispatch(const front::Limits& limits) : m_state(std::make_unique<State>(limits)) {}

CodecDispatch::~CodecDispatch() = default;

void CodecDispatch::reset() {
  m_state->release();
}

void CodecDispatch::resetGraphics() {
  m_state->clear.resetSequence();
}

Checked<Ok> CodecDispatch::decode(uint16_t codecId, std::span<const uint8_t> data, Pixels out, bool alpha) {
  const gc::codec::Pixels to = view(out);
  if (out.width <= 0 || out.height <= 0 || out.stride < qsizetype(out.width) * 4 || !to.valid())
    return Violation::resource(kWts1, "no scratch for the rectangle");
  switch (codecId) {
  case codec::kPlanar: {
    gc::codec::PlanarDecoder::Options options;
    options.rows = gc::codec::PlanarDecoder::Rows::TopDown;
    options.alpha =
        alpha ? gc::codec::PlanarDecoder::Alpha::FromStream : gc::codec::PlanarDecoder::Alpha::Opaque;
    return gc::codec::PlanarDecoder::decode(data, to, options);
  }
  case codec::kClearCodec:
    return m_state->clear.decode(data, to);
  case codec::kAlpha:
    return gc::codec::AlphaDecoder::decode(data, to);
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
    if (Checked<Ok> ok =
            s.progressiveFront.createSurface(surfaceId, uint32_t(surface.width), uint32_t(surface.height));
        front::isViolation(ok))
      return ok;
    if (progressive_create_surface_context(s.progressive, surfaceId, UINT32(surface.width),
                                           UINT32(surface.height)) < 0) {
      s.progressiveFront.deleteSurface(surfaceId);
      return Violation::resource(kWts2, "progressive surface context cannot be made");
    }
    s.progressiveSurfaces.insert(surfaceId);
  }
  // The whole stream is checked against the mirror of FreeRDP's tile state before FreeRDP
  // parses a byte of it.
  if (Checked<gc::codec::ProgressiveFront::Update> checked = s.progressiveFront.check(surfaceId, data);
      front::isViolation(checked))
    return std::get<Violation>(checked);
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
  if (s.progressive && s.progressiveSurfaces.erase(surfaceId)) {
    progressive_delete_surface_context(s.progressive, surfaceId);
    s.progressiveFront.deleteSurface(surfaceId);
  }
}

} // namespace gc::gfx
