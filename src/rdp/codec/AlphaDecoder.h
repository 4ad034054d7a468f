// AlphaDecoder: the RDPGFX alpha codec (MS-RDPEGFX 2.2.4.3, codec id 0x000C), uncompressed (one
// byte per pixel) and compressed (runs of one alpha value). It sets the X byte of every pixel
// of the output and leaves B, G, R as they are. The stream must cover the bitmap exactly.
//
// Thread: stateless; any thread.
#pragma once

#include "rdp/codec/Pixels.h"
#include "rdp/front/Violation.h"

#include <cstdint>
#include <span>
#include <string_view>

namespace gc::codec {

class AlphaDecoder {
public:
  static constexpr std::string_view kPdu = "codec.Alpha";
  static constexpr uint16_t kSignature = 0x414C; // "LA" as little-endian bytes

  static front::Checked<front::Ok> decode(std::span<const uint8_t> stream, const Pixels& out);
};

} // namespace gc::codec
