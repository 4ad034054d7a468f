// RfxColor: a decoded RemoteFX tile's Y, Cb, Cr planes (64x64 16-bit samples with 5 fractional
// bits, Y offset by -4096, MS-RDPRFX 3.1.8.1.3) to BGRX, rounded exactly as FreeRDP 3.10's C
// primitive yCbCrToRGB_16s8u_P3AC4R does: the ITU-R BT.601 coefficients as 16.16 fixed point
// truncated from their float values, the sum narrowed to 16 bits, then the 5 fractional bits
// shifted off and the result clamped to 0..255. (FreeRDP's SIMD primitives round differently;
// its C path is what we are measured against.)
//
// Where the target has SSE2, sixteen pixels go at a time in 16-bit lanes: the narrowed sum is
// bits 16..31 of the 32-bit products plus Y, so each product's high half (with the constant
// split into a 16-bit part and whole multiples of 2^16) gives the same bits for every input.
// Path::Scalar keeps the pixel-at-a-time path reachable, for the test that proves that.
//
// Thread: stateless; any thread.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gc::codec {

class RfxColor {
public:
  static constexpr int kSide = 64;

  enum class Path { Fastest, Scalar };

  // `dst` holds `rows` x `columns` BGRX pixels `stride` bytes apart (columns, rows <= 64): a part
  // of the tile whose first sample y, cb and cr point at, rows kSide samples apart. With keepX
  // the fourth byte of every pixel is left as it was.
  static void toBgrx(const int16_t* y, const int16_t* cb, const int16_t* cr, uint8_t* dst, size_t stride,
                     uint32_t columns, uint32_t rows, bool keepX, Path path = Path::Fastest);
};

} // namespace gc::codec
