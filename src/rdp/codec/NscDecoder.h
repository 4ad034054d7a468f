// NscDecoder: NSCodec (MS-RDPNSC 2.2.2, 3.1.8), as ClearCodec's subcodec 1 carries it: four
// planes (luma, orange and green chroma, alpha), each raw or NSCodec-RLE, colour loss level
// 1..7, optional chroma subsampling. Every plane's byte count is checked against the size
// the bitmap implies before a byte of it is used; the planes are decoded into the output's
// own channels and converted in place (no allocation). The X byte is written as 0xFF (the
// alpha plane is validated, not kept).
//
// Thread: stateless; any thread.
#pragma once

#include "rdp/codec/Pixels.h"
#include "rdp/front/Violation.h"

#include <cstdint>
#include <span>
#include <string_view>

namespace gc::codec {

class NscDecoder {
public:
  static constexpr std::string_view kPdu = "codec.NSCodec";

  static front::Checked<front::Ok> decode(std::span<const uint8_t> stream, const Pixels& out);
};

} // namespace gc::codec
