// ProgressiveUpgrade: one component of an RFX_PROGRESSIVE_TILE_UPGRADE pass (MS-RDPEGFX
// 3.2.8.1.3): for each band, `numBits` more bits of every coefficient, at the band's new bit
// position. A coefficient already nonzero takes its bits from the RAW stream (its sign is
// known); one still zero takes them from the SRL stream (a run-length code of zeros, then a
// sign and a unary magnitude), and its sign is remembered from then on. LL3 is all RAW.
//
// The bit-plane bookkeeping is the caller's (ProgressiveDecoder checks every count before
// calling); here the two streams must be consumed exactly — to the byte for RAW, for SRL to
// the byte or with one byte of padding, as FreeRDP and Windows accept — or the pass is refused.
// Coefficients are in the reduce-extrapolate layout (the one upgrades always use).
//
// Thread: stateless; any thread.
#pragma once

#include "rdp/codec/ProgressiveQuant.h"

#include <cstdint>
#include <span>

namespace gc::codec {

class ProgressiveUpgrade {
public:
  // `current`: the 4096 dequantised coefficients kept from earlier passes; `sign`: per
  // coefficient -1, 0 or 1. Both are written even when false is returned (the caller passes
  // copies it commits only on success).
  static bool apply(std::span<const uint8_t> srl, std::span<const uint8_t> raw,
                    const ProgressiveQuant::Values& shift, const ProgressiveQuant::Values& numBits,
                    int16_t* current, int8_t* sign);
};

} // namespace gc::codec
