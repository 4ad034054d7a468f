// RfxDwt: the two inverse 2-D 5/3 wavelet transforms a 64x64 RemoteFX tile may need, in place
// on its 4096 coefficients, with integer rounding exactly as FreeRDP 3.10's C decoder (and so
// Windows) performs it — integer division where it divides, arithmetic shifts where it
// shifts, every intermediate narrowed to 16 bits where FreeRDP stores one:
// - classic (MS-RDPRFX 3.1.8.1.6): three levels of 8/16/32-wide bands, HL HL.. order
//   HL1 LH1 HH1 HL2 LH2 HH2 HL3 LH3 HH3 LL3 at offsets 0, 1024, .. 4032;
// - reduce-extrapolate (MS-RDPEGFX 3.2.8.1.2.2, progressive with RFX_DWT_REDUCE_EXTRAPOLATE):
//   bands of 33/31, 17/16 and 9/8 coefficients at offsets 0, 1023, 2046, 3007, 3279, 3551,
//   3807, 3879, 3951, 4015.
// The output is the tile's 64x64 samples, row-major.
//
// Where the target has SSE2 the column and row passes run eight coefficients at a time in
// 16-bit lanes (the last few of a reduce-extrapolate row, which its odd length leaves, one at
// a time): every step is either a sum (exact modulo 2^16, as the narrowing is) or a halving
// that has an exact 16-bit form, so the result equals the scalar path for every input.
// Path::Scalar keeps the one-at-a-time path reachable, for the test that proves that.
//
// Thread: stateless; any thread (the caller owns both buffers).
#pragma once

#include <cstdint>

namespace gc::codec {

class RfxDwt {
public:
  static constexpr int kCoefficients = 4096;

  enum class Path { Fastest, Scalar };

  // `temp` holds kCoefficients values of scratch.
  static void inverseClassic(int16_t* coefficients, int16_t* temp, Path path = Path::Fastest);
  static void inverseExtrapolate(int16_t* coefficients, int16_t* temp, Path path = Path::Fastest);
};

} // namespace gc::codec
