#include "rdp/codec/RfxColor.h"

namespace gc::codec {

namespace {

// (int64)(c * 65536) of FreeRDP's float constants 1.402525f, 0.714401f, 0.343730f, 1.769905f.
constexpr int64_t kCrR = 91915;
constexpr int64_t kCrG = 46818;
constexpr int64_t kCbG = 22526;
constexpr int64_t kCbB = 115992;

inline uint8_t clamp(int v) {
  return uint8_t(v < 0 ? 0 : v > 255 ? 255 : v);
}

// The 16.16 sum narrowed to 16 bits (as FreeRDP stores it in an INT16), then >> 5.
inline int channel(int64_t sum) {
  return int16_t(int32_t(uint32_t(uint64_t(sum >> 16)))) >> 5;
}

} // namespace

void RfxColor::toBgrx(const int16_t* y, const int16_t* cb, const int16_t* cr, uint8_t* dst, size_t stride,
                      uint32_t columns, uint32_t rows, bool keepX) {
  for (uint32_t row = 0; row < rows; ++row) {
    const int16_t* py = y + size_t(row) * kSide;
    const int16_t* pcb = cb + size_t(row) * kSide;
    const int16_t* pcr = cr + size_t(row) * kSide;
    uint8_t* d = dst + size_t(row) * stride;
    for (uint32_t x = 0; x < columns; ++x, d += 4) {
      // FreeRDP forms Y as a 32-bit value: (uint32)(y + 4096) << 16, read back as signed.
      const int64_t Y = int32_t(uint32_t(int32_t(py[x]) + 4096) << 16);
      const int64_t Cb = pcb[x];
      const int64_t Cr = pcr[x];
      d[0] = clamp(channel(Cb * kCbB + Y));
      d[1] = clamp(channel(Y - Cb * kCbG - Cr * kCrG));
      d[2] = clamp(channel(Cr * kCrR + Y));
      if (!keepX)
        d[3] = 0xFF;
    }
  }
}

} // namespace gc::codec
