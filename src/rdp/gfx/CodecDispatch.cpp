#include "rdp/gfx/CodecDispatch.h"

#include "rdp/codec/AlphaDecoder.h"
#include "rdp/codec/ClearContext.h"
#include "rdp/codec/PlanarDecoder.h"
#include "rdp/codec/ProgressiveDecoder.h"
#include "rdp/codec/ProgressiveFront.h"
#include "rdp/gfx/GfxFront.h"

#include <set>

namespace gc::gfx {

namespace {

using front::Checked;
using front::Ok;
using front::Violation;

constexpr std::string_view kWts1 = "rdpgfx.WireToSurface1";
constexpr std::string_view kWts2 = "rdpgfx.WireToSurface2";

gc::codec::Pixels view(const Pixels& p) {
  return gc::codec::Pixels{p.bits, std::size_t(p.stride), uint32_t(p.width), uint32_t(p.height)};
}

} // namespace

struct CodecDispatch::State {
  explicit State(const front::Limits& limits) : progressiveFront(limits), progressive(limits) {}
  gc::codec::ClearContext clear;
  gc::codec::ProgressiveFront progressiveFront;
  gc::codec::ProgressiveDecoder progressive;
  std::set<uint16_t> progressiveSurfaces;
  std::vector<gc::codec::ProgressiveDecoder::Rect> progressiveTouched;

  ~State() { release(); }
  void release() {
    clear.reset();
    progressiveFront.reset();
    progressive.reset();
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
                                             Pixels surface, bool alpha, std::vector<QRect>& touched) {
  if (!surface.bits || surface.width <= 0 || surface.height <= 0)
    return Violation::resource(kWts2, "no pixels for the surface");
  State& s = *m_state;
  if (!s.progressiveSurfaces.contains(surfaceId)) {
    if (Checked<Ok> ok =
            s.progressiveFront.createSurface(surfaceId, uint32_t(surface.width), uint32_t(surface.height));
        front::isViolation(ok))
      return ok;
    if (Checked<Ok> ok =
            s.progressive.createSurface(surfaceId, uint32_t(surface.width), uint32_t(surface.height));
        front::isViolation(ok)) {
      s.progressiveFront.deleteSurface(surfaceId);
      return ok;
    }
    s.progressiveSurfaces.insert(surfaceId);
  }
  // The front checks the whole stream against its own mirror of the tile state first; the
  // decoder checks again what it needs before a coefficient is touched.
  if (Checked<gc::codec::ProgressiveFront::Update> checked = s.progressiveFront.check(surfaceId, data);
      front::isViolation(checked))
    return std::get<Violation>(checked);
  const gc::codec::Pixels to = view(surface);
  if (!to.valid())
    return Violation::resource(kWts2, "no pixels for the surface");
  Checked<Ok> decoded = s.progressive.decode(surfaceId, data, to, alpha, s.progressiveTouched);
  touched.clear();
  for (const auto& r : s.progressiveTouched)
    touched.emplace_back(int(r.x), int(r.y), int(r.width), int(r.height));
  return decoded;
}

void CodecDispatch::deleteSurface(uint16_t surfaceId) {
  State& s = *m_state;
  if (s.progressiveSurfaces.erase(surfaceId)) {
    s.progressive.deleteSurface(surfaceId);
    s.progressiveFront.deleteSurface(surfaceId);
  }
}

} // namespace gc::gfx
