#include "rdp/codec/RfxDwt.h"

#include <cstddef>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gc::codec {

namespace {

// The arithmetic both transforms are made of, one 16-bit sample at a time. Each halving's
// result fits 16 bits for any two 16-bit inputs, so only sums and doublings wrap, as FreeRDP's
// narrowing to INT16 does.
struct Scalar {
  using V = int16_t;
  static constexpr size_t kWidth = 1;
  static V load(const int16_t* p) { return *p; }
  static void store(int16_t* p, V v) { *p = v; }
  static V add(V a, V b) { return int16_t(a + b); }
  static V sub(V a, V b) { return int16_t(a - b); }
  static V twice(V a) { return int16_t(a * 2); }
  static V halfUp(V a, V b) { return int16_t((a + b + 1) >> 1); }
  static V halfDown(V a, V b) { return int16_t((a + b) >> 1); }
  static V halfTowardsZero(V a, V b) { return int16_t((a + b) / 2); }
  static V halfTowardsZero(V a) { return int16_t(a / 2); }
};

#if defined(__SSE2__)
// The same arithmetic on eight samples. Sums wrap modulo 2^16 like the scalar narrowing; each
// halving is computed without widening, by identities exact for every pair of 16-bit values.
struct Sse2 {
  using V = __m128i;
  static constexpr size_t kWidth = 8;
  static V load(const int16_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
  static void store(int16_t* p, V v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }
  static V add(V a, V b) { return _mm_add_epi16(a, b); }
  static V sub(V a, V b) { return _mm_sub_epi16(a, b); }
  static V twice(V a) { return _mm_add_epi16(a, a); }
  // floor((a + b + 1) / 2): the unsigned rounding average of the values offset by 2^15.
  static V halfUp(V a, V b) {
    const V bias = _mm_set1_epi16(INT16_MIN);
    return _mm_xor_si128(_mm_avg_epu16(_mm_xor_si128(a, bias), _mm_xor_si128(b, bias)), bias);
  }
  // floor((a + b) / 2) = (a & b) + ((a ^ b) >> 1).
  static V halfDown(V a, V b) {
    return _mm_add_epi16(_mm_and_si128(a, b), _mm_srai_epi16(_mm_xor_si128(a, b), 1));
  }
  // C's (a + b) / 2: the floor, plus one where the sum is negative and odd.
  static V halfTowardsZero(V a, V b) {
    const V f = halfDown(a, b);
    return _mm_add_epi16(f, _mm_and_si128(_mm_srli_epi16(f, 15), _mm_xor_si128(a, b)));
  }
  static V halfTowardsZero(V a) { return _mm_srai_epi16(_mm_add_epi16(a, _mm_srli_epi16(a, 15)), 1); }
  // The eight values before p[0..7] of a row whose element -1 is taken as its element 0.
  static V previousAtStart(V v) {
    return _mm_or_si128(_mm_slli_si128(v, 2), _mm_and_si128(v, _mm_set_epi16(0, 0, 0, 0, 0, 0, 0, -1)));
  }
};
#endif

// The horizontal half of a classic level: four bands of side `w` (HL, LH, HH, LL in that
// order) into the L and H halves of a 2w x 2w block in `idwt`, row by row.
template <class A> void classicRows(const int16_t* buffer, int16_t* idwt, size_t w) {
  const size_t total = w << 1;
  const int16_t* ll = buffer + w * w * 3;
  const int16_t* hl = buffer;
  int16_t* lDst = idwt;
  const int16_t* lh = buffer + w * w;
  const int16_t* hh = buffer + w * w * 2;
  int16_t* hDst = idwt + w * w * 2;

  for (size_t y = 0; y < w; ++y) {
    lDst[0] = A::sub(ll[0], A::halfUp(hl[0], hl[0]));
    hDst[0] = A::sub(lh[0], A::halfUp(hh[0], hh[0]));
    for (size_t n = 1; n < w; ++n) {
      const size_t x = n << 1;
      lDst[x] = A::sub(ll[n], A::halfUp(hl[n - 1], hl[n]));
      hDst[x] = A::sub(lh[n], A::halfUp(hh[n - 1], hh[n]));
    }
    size_t n = 0;
    for (; n < w - 1; ++n) {
      const size_t x = n << 1;
      lDst[x + 1] = A::add(A::twice(hl[n]), A::halfDown(lDst[x], lDst[x + 2]));
      hDst[x + 1] = A::add(A::twice(hh[n]), A::halfDown(hDst[x], hDst[x + 2]));
    }
    const size_t x = n << 1;
    lDst[x + 1] = A::add(A::twice(hl[n]), lDst[x]);
    hDst[x + 1] = A::add(A::twice(hh[n]), hDst[x]);
    ll += w;
    hl += w;
    lDst += total;
    lh += w;
    hh += w;
    hDst += total;
  }
}

#if defined(__SSE2__)
// classicRows on eight coefficients of a row at a time (w is 8, 16 or 32): the even outputs
// E[n] = L[n] - halfUp(H[n-1], H[n]) (H[-1] = H[0]) and the odd ones
// O[n] = 2 H[n] + halfDown(E[n], E[n+1]) (E[w] = E[w-1]), interleaved.
void classicRowSse2(const int16_t* low, const int16_t* high, int16_t* dst, size_t w) {
  using A = Sse2;
  int16_t even[32 + 8];
  for (size_t n = 0; n < w; n += 8) {
    const __m128i h = A::load(high + n);
    const __m128i before = n ? A::load(high + n - 1) : A::previousAtStart(h);
    A::store(even + n, A::sub(A::load(low + n), A::halfUp(before, h)));
  }
  even[w] = even[w - 1];
  for (size_t n = 0; n < w; n += 8) {
    const __m128i e = A::load(even + n);
    const __m128i o = A::add(A::twice(A::load(high + n)), A::halfDown(e, A::load(even + n + 1)));
    A::store(dst + 2 * n, _mm_unpacklo_epi16(e, o));
    A::store(dst + 2 * n + 8, _mm_unpackhi_epi16(e, o));
  }
}

void classicRowsSse2(const int16_t* buffer, int16_t* idwt, size_t w) {
  const size_t total = w << 1;
  for (size_t y = 0; y < w; ++y) {
    classicRowSse2(buffer + w * w * 3 + y * w, buffer + y * w, idwt + y * total, w);
    classicRowSse2(buffer + w * w + y * w, buffer + w * w * 2 + y * w, idwt + w * w * 2 + y * total, w);
  }
}
#endif

// The vertical half of a classic level, A::kWidth of the 2w columns at a time (2w is a
// multiple of eight).
template <class A> void classicColumns(int16_t* buffer, const int16_t* idwt, size_t w) {
  const size_t total = w << 1;
  for (size_t x = 0; x < total; x += A::kWidth) {
    const int16_t* l = idwt + x;
    const int16_t* h = idwt + x + w * total;
    int16_t* dst = buffer + x;
    auto hPrev = A::load(h);
    auto dPrev = A::sub(A::load(l), A::halfUp(hPrev, hPrev));
    A::store(dst, dPrev);
    for (size_t n = 1; n < w; ++n) {
      l += total;
      h += total;
      const auto hNext = A::load(h);
      const auto dNext = A::sub(A::load(l), A::halfUp(hPrev, hNext));
      A::store(dst + 2 * total, dNext);
      A::store(dst + total, A::add(A::twice(hPrev), A::halfDown(dPrev, dNext)));
      dst += 2 * total;
      dPrev = dNext;
      hPrev = hNext;
    }
    A::store(dst + total, A::add(A::twice(hPrev), A::halfDown(dPrev, dPrev)));
  }
}

// One level of the classic transform: four bands of side `w` into a 2w x 2w block at the
// same place.
void classicLevel(int16_t* buffer, int16_t* idwt, size_t w, RfxDwt::Path path) {
#if defined(__SSE2__)
  if (path == RfxDwt::Path::Fastest) {
    classicRowsSse2(buffer, idwt, w);
    classicColumns<Sse2>(buffer, idwt, w);
    return;
  }
#else
  (void)path;
#endif
  classicRows<Scalar>(buffer, idwt, w);
  classicColumns<Scalar>(buffer, idwt, w);
}

// One 1-D reduce-extrapolate synthesis of `lowCount` low and `highCount` high coefficients
// (lowCount is highCount + 1 or + 2), reading each with its step and writing with dstStep;
// A::kWidth such lines side by side. Divisions are C's (towards zero), as FreeRDP's. From
// `from` on: the outputs before 2 * from are the caller's.
template <class A>
inline void extrapolateLine(const int16_t* pL, size_t lStep, const int16_t* pH, size_t hStep, int16_t* pX,
                            size_t xStep, size_t lowCount, size_t highCount, size_t from = 0) {
  auto h0 = A::load(pH + from * hStep);
  auto l0 = A::load(pL + from * lStep);
  auto x0 = from ? A::sub(l0, A::halfTowardsZero(A::load(pH + (from - 1) * hStep), h0)) : A::sub(l0, h0);
  pH += (from + 1) * hStep;
  pL += (from + 1) * lStep;
  pX += 2 * from * xStep;
  auto x2 = x0;
  for (size_t j = from; j + 1 < highCount; ++j) {
    const auto h1 = A::load(pH);
    pH += hStep;
    l0 = A::load(pL);
    pL += lStep;
    x2 = A::sub(l0, A::halfTowardsZero(h0, h1));
    const auto x1 = A::add(A::halfTowardsZero(x0, x2), A::twice(h0));
    A::store(pX, x0);
    A::store(pX + xStep, x1);
    pX += 2 * xStep;
    x0 = x2;
    h0 = h1;
  }
  if (lowCount <= highCount + 1) {
    if (lowCount <= highCount) {
      A::store(pX, x2);
      A::store(pX + xStep, A::add(x2, A::twice(h0)));
    } else {
      l0 = A::load(pL);
      x0 = A::sub(l0, h0);
      A::store(pX, x2);
      A::store(pX + xStep, A::add(A::halfTowardsZero(x0, x2), A::twice(h0)));
      A::store(pX + 2 * xStep, x0);
    }
  } else {
    l0 = A::load(pL);
    pL += lStep;
    x0 = A::sub(l0, A::halfTowardsZero(h0));
    A::store(pX, x2);
    A::store(pX + xStep, A::add(A::halfTowardsZero(x0, x2), A::twice(h0)));
    A::store(pX + 2 * xStep, x0);
    l0 = A::load(pL);
    A::store(pX + 3 * xStep, A::halfTowardsZero(x0, l0));
  }
}

#if defined(__SSE2__)
// extrapolateLine along one row, eight outputs of each parity at a time while every value a
// lane reads lies inside the row: E[k] = l[k] - tz(h[k-1], h[k]) (h[-1] = h[0]) and
// O[k] = tz(E[k], E[k+1]) + 2 h[k], tz being C's halving, interleaved; the scalar line does
// the rest from there.
void extrapolateRowSse2(const int16_t* l, const int16_t* h, int16_t* x, size_t nL, size_t nH) {
  using A = Sse2;
  size_t k = 0;
  for (; k + 9 <= nH; k += 8) {
    const __m128i hk = A::load(h + k);
    const __m128i before = k ? A::load(h + k - 1) : A::previousAtStart(hk);
    const __m128i even = A::sub(A::load(l + k), A::halfTowardsZero(before, hk));
    const __m128i evenNext = A::sub(A::load(l + k + 1), A::halfTowardsZero(hk, A::load(h + k + 1)));
    const __m128i odd = A::add(A::halfTowardsZero(even, evenNext), A::twice(hk));
    A::store(x + 2 * k, _mm_unpacklo_epi16(even, odd));
    A::store(x + 2 * k + 8, _mm_unpackhi_epi16(even, odd));
  }
  extrapolateLine<Scalar>(l, 1, h, 1, x, 1, nL, nH, k);
}
#endif

size_t lowCount(int level) {
  return (64u >> level) + 1;
}
size_t highCount(int level) {
  return level == 1 ? (64u >> 1) - 1 : (64u + (1u << (level - 1))) >> level;
}

void extrapolateLevel(int16_t* buffer, int16_t* temp, int level, RfxDwt::Path path) {
  const size_t nL = lowCount(level);
  const size_t nH = highCount(level);
  const int16_t* hl = buffer;
  const int16_t* lh = hl + nH * nL;
  const int16_t* hh = lh + nL * nH;
  const int16_t* ll = hh + nH * nH;
  const size_t step = nL + nH;
  int16_t* l = temp;
  int16_t* h = temp + nL * step;
  // Horizontal: LL + HL -> L (nL rows), LH + HH -> H (nH rows). Vertical: L + H -> the
  // level's output, column by column (eight at a time where it can).
  size_t i = 0;
#if defined(__SSE2__)
  if (path == RfxDwt::Path::Fastest) {
    for (size_t r = 0; r < nL; ++r)
      extrapolateRowSse2(ll + r * nL, hl + r * nH, l + r * step, nL, nH);
    for (size_t r = 0; r < nH; ++r)
      extrapolateRowSse2(lh + r * nL, hh + r * nH, h + r * step, nL, nH);
    for (; i + Sse2::kWidth <= step; i += Sse2::kWidth)
      extrapolateLine<Sse2>(l + i, step, h + i, step, buffer + i, step, nL, nH);
  } else
#else
  (void)path;
#endif
  {
    for (size_t r = 0; r < nL; ++r)
      extrapolateLine<Scalar>(ll + r * nL, 1, hl + r * nH, 1, l + r * step, 1, nL, nH);
    for (size_t r = 0; r < nH; ++r)
      extrapolateLine<Scalar>(lh + r * nL, 1, hh + r * nH, 1, h + r * step, 1, nL, nH);
  }
  for (; i < step; ++i)
    extrapolateLine<Scalar>(l + i, step, h + i, step, buffer + i, step, nL, nH);
}

} // namespace

void RfxDwt::inverseClassic(int16_t* coefficients, int16_t* temp, Path path) {
  classicLevel(coefficients + 3840, temp, 8, path);
  classicLevel(coefficients + 3072, temp, 16, path);
  classicLevel(coefficients, temp, 32, path);
}

void RfxDwt::inverseExtrapolate(int16_t* coefficients, int16_t* temp, Path path) {
  extrapolateLevel(coefficients + 3807, temp, 3, path);
  extrapolateLevel(coefficients + 3007, temp, 2, path);
  extrapolateLevel(coefficients, temp, 1, path);
}

} // namespace gc::codec
