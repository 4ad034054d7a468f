#include "rdp/codec/RfxColor.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

void pixels(const int16_t* py, const int16_t* pcb, const int16_t* pcr, uint8_t* d, uint32_t from, uint32_t to,
            bool keepX) {
  d += size_t(from) * 4;
  for (uint32_t x = from; x < to; ++x, d += 4) {
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

#if defined(__SSE2__)
// Bits 16..31 of each sum, modulo 2^16. Y contributes y + 4096 (its low half is zero). A
// constant c * 2^16 + k contributes the high half of v * k plus c * v, so:
//   B: kCbB = 2 * 2^16 - 15080       -> mulhi(Cb, -15080) + 2 Cb
//   R: kCrR = 2^16 + 26379           -> mulhi(Cr, 26379) + Cr
//   G: -kCbG Cb - kCrG Cr = -22526 Cb + 18718 Cr - 2^16 Cr
//      -> the high half of the exact 32-bit madd (|sum| < 2^31) minus Cr.
inline __m128i highBlue(__m128i cb) {
  return _mm_add_epi16(_mm_mulhi_epi16(cb, _mm_set1_epi16(-15080)), _mm_add_epi16(cb, cb));
}
inline __m128i highRed(__m128i cr) {
  return _mm_add_epi16(_mm_mulhi_epi16(cr, _mm_set1_epi16(26379)), cr);
}
inline __m128i highGreen(__m128i cb, __m128i cr) {
  const __m128i k = _mm_set1_epi32(int32_t(uint32_t(uint16_t(-22526)) | (uint32_t(18718) << 16)));
  const __m128i lo = _mm_srai_epi32(_mm_madd_epi16(_mm_unpacklo_epi16(cb, cr), k), 16);
  const __m128i hi = _mm_srai_epi32(_mm_madd_epi16(_mm_unpackhi_epi16(cb, cr), k), 16);
  return _mm_sub_epi16(_mm_packs_epi32(lo, hi), cr);
}

// Eight pixels' three channels as 16-bit values, already clamped to 0..255 by the caller's pack.
struct Eight {
  __m128i b, g, r;
};
inline Eight eight(const int16_t* py, const int16_t* pcb, const int16_t* pcr) {
  const __m128i y =
      _mm_add_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(py)), _mm_set1_epi16(4096));
  const __m128i cb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(pcb));
  const __m128i cr = _mm_loadu_si128(reinterpret_cast<const __m128i*>(pcr));
  return {_mm_srai_epi16(_mm_add_epi16(highBlue(cb), y), 5),
          _mm_srai_epi16(_mm_add_epi16(highGreen(cb, cr), y), 5),
          _mm_srai_epi16(_mm_add_epi16(highRed(cr), y), 5)};
}

// Sixteen pixels from x; the saturating packs are the clamp to 0..255.
inline void sixteen(const int16_t* py, const int16_t* pcb, const int16_t* pcr, uint8_t* d, bool keepX) {
  const Eight a = eight(py, pcb, pcr);
  const Eight c = eight(py + 8, pcb + 8, pcr + 8);
  const __m128i b = _mm_packus_epi16(a.b, c.b);
  const __m128i g = _mm_packus_epi16(a.g, c.g);
  const __m128i r = _mm_packus_epi16(a.r, c.r);
  const __m128i x = keepX ? _mm_setzero_si128() : _mm_set1_epi8(char(0xFF));
  const __m128i bgLo = _mm_unpacklo_epi8(b, g), bgHi = _mm_unpackhi_epi8(b, g);
  const __m128i rxLo = _mm_unpacklo_epi8(r, x), rxHi = _mm_unpackhi_epi8(r, x);
  __m128i out[4] = {_mm_unpacklo_epi16(bgLo, rxLo), _mm_unpackhi_epi16(bgLo, rxLo),
                    _mm_unpacklo_epi16(bgHi, rxHi), _mm_unpackhi_epi16(bgHi, rxHi)};
  auto* dst = reinterpret_cast<__m128i*>(d);
  for (int i = 0; i < 4; ++i) {
    if (keepX) {
      const __m128i kept = _mm_and_si128(_mm_loadu_si128(dst + i), _mm_set1_epi32(int32_t(0xFF000000u)));
      out[i] = _mm_or_si128(out[i], kept);
    }
    _mm_storeu_si128(dst + i, out[i]);
  }
}
#endif

} // namespace

void RfxColor::toBgrx(const int16_t* y, const int16_t* cb, const int16_t* cr, uint8_t* dst, size_t stride,
                      uint32_t columns, uint32_t rows, bool keepX, Path path) {
  for (uint32_t row = 0; row < rows; ++row) {
    const int16_t* py = y + size_t(row) * kSide;
    const int16_t* pcb = cb + size_t(row) * kSide;
    const int16_t* pcr = cr + size_t(row) * kSide;
    uint8_t* d = dst + size_t(row) * stride;
    uint32_t x = 0;
#if defined(__SSE2__)
    if (path == Path::Fastest)
      for (; x + 16 <= columns; x += 16)
        sixteen(py + x, pcb + x, pcr + x, d + size_t(x) * 4, keepX);
#else
    (void)path;
#endif
    pixels(py, pcb, pcr, d, x, columns, keepX);
  }
}

} // namespace gc::codec
