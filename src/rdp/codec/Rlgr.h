// Rlgr: the RemoteFX adaptive run-length / Golomb-Rice entropy decoder (MS-RDPRFX 3.1.8.1.7.1),
// both variants: RLGR1 (one coefficient per GR code; what progressive tiles use) and RLGR3
// (two per code, as RemoteFX tiles may use). It fills exactly `out.size()` coefficients: a
// stream that ends early leaves the rest zero, one that holds more is cut at the end of
// `out` — the behaviour of FreeRDP's and Windows' decoders, which an encoder relies on when it
// drops trailing zeros. Nothing past the input span is read.
//
// Thread: stateless; any thread.
#pragma once

#include <cstdint>
#include <span>

namespace gc::codec {

class Rlgr {
public:
  enum class Mode : uint8_t { Rlgr1, Rlgr3 };

  // False (and `out` untouched) for an empty input: there is no coefficient to decode.
  static bool decode(Mode mode, std::span<const uint8_t> in, std::span<int16_t> out);
};

} // namespace gc::codec
