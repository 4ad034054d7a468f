// InterleavedDecoder on guest bytes. Input: width byte, height byte, depth byte (15/16/24),
// then the RLE stream. Besides sanitizer findings: nothing is written outside the Pixels, and
// a stream it accepts decodes with FreeRDP 3.10.3's interleaved_decompress to the same pixels.
#include "GuardedPixels.h"
#include "rdp/codec/InterleavedDecoder.h"

#include <freerdp/codec/color.h>
#include <freerdp/codec/interleaved.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

using gc::codec::InterleavedDecoder;

namespace {
constexpr uint32_t kMaxSide = 96;
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3)
    return 0;
  const uint32_t w = 1 + data[0] % kMaxSide;
  const uint32_t h = 1 + data[1] % kMaxSide;
  static const uint32_t depths[3] = {15, 16, 24};
  const uint32_t bpp = depths[data[2] % 3];
  const std::span<const uint8_t> stream(data + 3, size - 3);
  gc::fuzz::GuardedPixels out(w, h, gc::fuzz::GuardedPixels::kGuardByte);
  static InterleavedDecoder ours;
  const auto r = ours.decode(stream, bpp, out.pixels());
  out.requireGuardsIntact();
  if (gc::front::isViolation(r))
    return 0;
  static BITMAP_INTERLEAVED_CONTEXT* interleaved = bitmap_interleaved_context_new(FALSE);
  std::vector<uint8_t> theirs(size_t(w) * h * 4, 0);
  if (!interleaved_decompress(interleaved, stream.data(), uint32_t(stream.size()), w, h, bpp, theirs.data(),
                              PIXEL_FORMAT_BGRX32, w * 4, 0, 0, w, h, nullptr))
    std::abort();
  out.requireEqualsPacked(theirs, 3);
  return 0;
}
