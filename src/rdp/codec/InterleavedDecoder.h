// InterleavedDecoder: interleaved RLE (MS-RDPBCGR 2.2.9.1.1.3.1.2.4, the decoder of 3.1.9), the
// compressed legacy bitmaps at 15, 16 and 24 bpp, into BGRX32. Rows are bottom-up as the
// bitmap carries them. Every order's run is checked against the pixels left before anything
// is written, and the stream must fill the bitmap exactly: an order that would write past it,
// an unknown order or a stream that ends early is a Violation. The XOR orders need the pixel
// above as the stream had it: two rows of native pixels are kept in a scratch the decoder owns
// (8 bytes a column, at most Pixels::kMaxSide columns), reused and zeroed when it goes.
// Colours expand as FreeRDP's do (16 bpp green: 4c + c/8, capped at 255).
//
// Thread: one decoder per thread (the RDP worker's).
#pragma once

#include "rdp/codec/Pixels.h"
#include "rdp/front/Violation.h"

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace gc::codec {

class InterleavedDecoder {
public:
  static constexpr std::string_view kPdu = "codec.Interleaved";

  InterleavedDecoder() = default;
  ~InterleavedDecoder();
  InterleavedDecoder(const InterleavedDecoder&) = delete;
  InterleavedDecoder& operator=(const InterleavedDecoder&) = delete;

  // bpp: 15 (RGB555), 16 (RGB565) or 24 (BGR); anything else is refused.
  front::Checked<front::Ok> decode(std::span<const uint8_t> stream, uint32_t bpp, const Pixels& out);

private:
  std::vector<uint32_t> m_rows; // the current and the previous row, native values
};

} // namespace gc::codec
