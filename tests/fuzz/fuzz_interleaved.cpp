// InterleavedDecoder on guest bytes. Input: width byte, height byte, depth byte (15/16/24),
// then the RLE stream. Besides sanitizer findings: nothing is written outside the Pixels, and
// a stream it accepts decodes with FreeRDP 3.10.3's interleaved_decompress to the same pixels.
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
constexpr size_t kGuard = 64;
constexpr uint8_t kGuardByte = 0xA5;
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3)
    return 0;
  const uint32_t w = 1 + data[0] % kMaxSide;
  const uint32_t h = 1 + data[1] % kMaxSide;
  static const uint32_t depths[3] = {15, 16, 24};
  const uint32_t bpp = depths[data[2] % 3];
  const std::span<const uint8_t> stream(data + 3, size - 3);
  const size_t stride = size_t(w) * 4 + kGuard;
  std::vector<uint8_t> buffer(2 * kGuard + stride * h, kGuardByte);
  uint8_t* bits = buffer.data() + kGuard;
  static InterleavedDecoder ours;
  const auto r = ours.decode(stream, bpp, {bits, stride, w, h});
  for (size_t i = 0; i < kGuard; ++i)
    if (buffer[i] != kGuardByte || buffer[buffer.size() - 1 - i] != kGuardByte)
      std::abort();
  for (uint32_t y = 0; y < h; ++y)
    for (size_t i = size_t(w) * 4; i < stride; ++i)
      if (bits[y * stride + i] != kGuardByte)
        std::abort();
  if (gc::front::isViolation(r))
    return 0;
  static BITMAP_INTERLEAVED_CONTEXT* interleaved = bitmap_interleaved_context_new(FALSE);
  std::vector<uint8_t> theirs(size_t(w) * h * 4, 0);
  if (!interleaved_decompress(interleaved, stream.data(), uint32_t(stream.size()), w, h, bpp, theirs.data(),
                              PIXEL_FORMAT_BGRX32, w * 4, 0, 0, w, h, nullptr))
    std::abort();
  for (uint32_t y = 0; y < h; ++y)
    for (uint32_t x = 0; x < w; ++x)
      if (std::memcmp(bits + y * stride + x * 4, theirs.data() + (size_t(y) * w + x) * 4, 3) != 0)
        std::abort();
  return 0;
}
