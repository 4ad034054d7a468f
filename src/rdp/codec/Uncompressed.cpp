#include "rdp/codec/Uncompressed.h"

#include <algorithm>
#include <cstring>

namespace gc::codec {

namespace {

inline uint8_t expand5(uint32_t c) {
  return uint8_t((c << 3) | (c >> 2));
}
// FreeRDP's 6-bit expansion (4c + c/8, capped), so that pixels equal FreeRDP's.
inline uint8_t expand6(uint32_t c) {
  return uint8_t(std::min<uint32_t>(255, (c << 2) + (c >> 3)));
}

} // namespace

Checked<Ok> Uncompressed::checkGfx(size_t length, uint8_t pixelFormat, uint32_t width, uint32_t height) {
  if (pixelFormat != kXrgb8888 && pixelFormat != kArgb8888)
    return Violation::protocol(kGfxPdu, "unknown pixel format");
  if (width < 1 || height < 1 || width > Pixels::kMaxSide || height > Pixels::kMaxSide)
    return Violation::protocol(kGfxPdu, "bitmap size out of range");
  if (uint64_t(length) != uint64_t(width) * height * 4)
    return Violation::protocol(kGfxPdu, "length does not match the bitmap");
  return Ok{};
}

Checked<Ok> Uncompressed::decodeGfx(std::span<const uint8_t> data, uint8_t pixelFormat, const Pixels& out) {
  if (!out.valid())
    return Violation::protocol(kGfxPdu, "bitmap size out of range");
  if (auto c = checkGfx(data.size(), pixelFormat, out.width, out.height); front::isViolation(c))
    return c;
  const size_t row = size_t(out.width) * 4;
  for (uint32_t y = 0; y < out.height; ++y) {
    uint8_t* d = out.row(y);
    std::memcpy(d, data.data() + size_t(y) * row, row);
    if (pixelFormat == kXrgb8888)
      for (uint32_t x = 0; x < out.width; ++x)
        d[size_t(x) * 4 + 3] = 0xFF;
  }
  return Ok{};
}

size_t Uncompressed::bitmapRowBytes(uint32_t width, uint32_t bpp, bool padded) {
  size_t bytes = 0;
  switch (bpp) {
  case 15:
  case 16:
    bytes = size_t(width) * 2;
    break;
  case 24:
    bytes = size_t(width) * 3;
    break;
  case 32:
    bytes = size_t(width) * 4;
    break;
  default:
    return 0;
  }
  return padded ? (bytes + 3) / 4 * 4 : bytes;
}

Checked<Ok> Uncompressed::decodeBitmap(std::span<const uint8_t> data, uint32_t bpp, const Pixels& out) {
  if (!out.valid())
    return Violation::protocol(kBitmapPdu, "bitmap size out of range");
  const size_t tight = bitmapRowBytes(out.width, bpp, false);
  if (tight == 0)
    return Violation::protocol(kBitmapPdu, "colour depth not 15, 16, 24 or 32");
  const size_t padded = bitmapRowBytes(out.width, bpp, true);
  size_t stride = 0;
  if (uint64_t(data.size()) == uint64_t(tight) * out.height)
    stride = tight;
  else if (uint64_t(data.size()) == uint64_t(padded) * out.height)
    stride = padded;
  else
    return Violation::protocol(kBitmapPdu, "length does not match the bitmap");
  for (uint32_t r = 0; r < out.height; ++r) {
    const uint8_t* s = data.data() + size_t(r) * stride;
    uint8_t* d = out.row(out.height - 1 - r); // bottom-up
    for (uint32_t x = 0; x < out.width; ++x, d += 4) {
      switch (bpp) {
      case 32:
        d[0] = s[0], d[1] = s[1], d[2] = s[2];
        s += 4;
        break;
      case 24:
        d[0] = s[0], d[1] = s[1], d[2] = s[2];
        s += 3;
        break;
      case 16: {
        const uint32_t v = uint32_t(s[0]) | (uint32_t(s[1]) << 8);
        d[0] = expand5(v & 0x1F), d[1] = expand6((v >> 5) & 0x3F), d[2] = expand5(v >> 11);
        s += 2;
        break;
      }
      default: {
        const uint32_t v = uint32_t(s[0]) | (uint32_t(s[1]) << 8);
        d[0] = expand5(v & 0x1F), d[1] = expand5((v >> 5) & 0x1F), d[2] = expand5((v >> 10) & 0x1F);
        s += 2;
        break;
      }
      }
      d[3] = 0xFF;
    }
  }
  return Ok{};
}

} // namespace gc::codec
