// PlanarDecoder on guest bytes. Input: width byte, height byte, options byte, then the stream.
// Besides sanitizer findings: the decoder must not write outside its Pixels (a guard band
// around them), and a stream it accepts is a valid stream, which FreeRDP 3.10.3's decoder must
// decode to the same pixels.
#include "GuardedPixels.h"
#include "rdp/codec/PlanarDecoder.h"

#include <freerdp/codec/color.h>
#include <freerdp/codec/planar.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

using gc::codec::PlanarDecoder;

namespace {
constexpr uint32_t kMaxSide = 96;
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3)
    return 0;
  const uint32_t w = 1 + data[0] % kMaxSide;
  const uint32_t h = 1 + data[1] % kMaxSide;
  const PlanarDecoder::Options options{
      (data[2] & 1) ? PlanarDecoder::Rows::BottomUp : PlanarDecoder::Rows::TopDown,
      (data[2] & 2) ? PlanarDecoder::Alpha::FromStream : PlanarDecoder::Alpha::Opaque};
  const std::span<const uint8_t> stream(data + 3, size - 3);

  gc::fuzz::GuardedPixels out(w, h, 0);
  const auto r = PlanarDecoder::decode(stream, out.pixels(), options);
  out.requireGuardsIntact();
  if (gc::front::isViolation(r))
    return 0;

  static BITMAP_PLANAR_CONTEXT* planar = freerdp_bitmap_planar_context_new(0, kMaxSide, kMaxSide);
  std::vector<uint8_t> theirs(size_t(w) * h * 4, 0);
  const bool alpha = options.alpha == PlanarDecoder::Alpha::FromStream;
  if (!planar_decompress(planar, stream.data(), uint32_t(stream.size()), w, h, theirs.data(),
                         alpha ? PIXEL_FORMAT_BGRA32 : PIXEL_FORMAT_BGRX32, w * 4, 0, 0, w, h,
                         options.rows == PlanarDecoder::Rows::BottomUp))
    std::abort(); // accepted here, refused by FreeRDP: one of the two misreads the spec
  out.requireEqualsPacked(theirs, 4);
  return 0;
}
