#include "rdp/codec/AlphaDecoder.h"

#include "rdp/front/Wire.h"

namespace gc::codec {

namespace {

constexpr front::ProtocolRules bad{AlphaDecoder::kPdu};

} // namespace

Checked<Ok> AlphaDecoder::decode(std::span<const uint8_t> stream, const Pixels& out) {
  if (!out.valid())
    return bad("bitmap size out of range");
  front::Wire r(stream);
  uint16_t signature = 0;
  uint16_t compressed = 0;
  if (!r.u16le(signature) || !r.u16le(compressed))
    return bad("stream shorter than its header");
  if (signature != kSignature)
    return bad("wrong signature");
  const uint64_t total = uint64_t(out.width) * out.height;
  if (compressed == 0) {
    if (r.remaining() != total)
      return bad("uncompressed alpha does not match the bitmap");
    const uint8_t* a = r.rest().data();
    for (uint32_t y = 0; y < out.height; ++y) {
      uint8_t* d = out.row(y) + 3;
      for (uint32_t x = 0; x < out.width; ++x, d += 4)
        *d = *a++;
    }
    return Ok{};
  }
  if (compressed != 1)
    return bad("unknown compression");
  uint64_t done = 0;
  uint32_t x = 0;
  uint32_t y = 0;
  while (!r.atEnd()) {
    uint8_t alpha = 0;
    uint8_t count8 = 0;
    if (!r.u8(alpha) || !r.u8(count8))
      return bad("segment cut short");
    uint32_t count = count8;
    if (count8 == 0xFF) {
      uint16_t count16 = 0;
      if (!r.u16le(count16))
        return bad("segment cut short");
      count = count16;
      if (count16 == 0xFFFF && !r.u32le(count))
        return bad("segment cut short");
    }
    if (count > total - done)
      return bad("segment runs past the bitmap");
    done += count;
    while (count > 0) {
      const uint32_t n = count < out.width - x ? count : out.width - x;
      uint8_t* d = out.at(x, y) + 3;
      for (uint32_t i = 0; i < n; ++i, d += 4)
        *d = alpha;
      x += n;
      count -= n;
      if (x == out.width) {
        x = 0;
        ++y;
      }
    }
  }
  if (done != total)
    return bad("compressed alpha does not cover the bitmap");
  return Ok{};
}

} // namespace gc::codec
