// ProgressiveQuant: the quantization of RemoteFX Progressive (MS-RDPEGFX 2.2.4.2.1.5,
// 3.2.8.1.2): a component's ten 4-bit band values (RFX_COMPONENT_CODEC_QUANT), the progressive
// quality tables that add to them, the bit positions a pass leaves (quant + progressive quant),
// the left shift a decoded band gets (bit position - 1: the 5 fractional bits of the
// colour conversion less the 6 the encoder's DWT adds), and dequantisation of a first pass's
// coefficients in either band layout.
//
// Thread: value types and stateless functions; any thread.
#pragma once

#include "rdp/front/Wire.h"

#include <array>
#include <cstdint>

namespace gc::codec {

class ProgressiveQuant {
public:
  // Band order of the wire: LL3, HL3, LH3, HH3, HL2, LH2, HH2, HL1, LH1, HH1.
  enum Band : uint8_t { LL3, HL3, LH3, HH3, HL2, LH2, HH2, HL1, LH1, HH1, kBands };
  using Values = std::array<uint8_t, kBands>;
  static constexpr uint8_t kMinQuant = 6;
  static constexpr uint8_t kMaxQuant = 15;
  static constexpr uint8_t kFullQuality = 0xFF;

  // Five bytes, low nibble first; false when they are not there.
  static bool read(front::Wire& r, Values& out);
  // Every value in 6..15 (MS-RDPRFX 2.2.2.1.5).
  static bool inRange(const Values& q);
  // quant + progressive quant, band by band (the bit position a pass leaves).
  static Values bitPositions(const Values& quant, const Values& progressive);
  // The coefficients a band holds in the reduce-extrapolate layout (what an upgrade walks).
  static uint32_t extrapolateCount(Band b);

  // Shifts each band of a first pass's 4096 coefficients left by its bit position - 1 and
  // undoes LL3's differential coding, in the layout the region's DWT flag selects. A shift of
  // 16 or more leaves the band as it is (FreeRDP's C primitive refuses it and the decoder goes
  // on: its output is what we equal).
  static void dequantize(int16_t* coefficients, const Values& bitPos, bool extrapolate);
};

} // namespace gc::codec
