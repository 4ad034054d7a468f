#include "rdp/codec/RfxDwt.h"

#include <cstddef>

namespace gc::codec {

namespace {

// One level of the classic transform: four bands of side `w` (HL, LH, HH, LL in that order)
// into a 2w x 2w block at the same place.
void classicLevel(int16_t* buffer, int16_t* idwt, size_t w) {
  const size_t total = w << 1;
  const int16_t* ll = buffer + w * w * 3;
  const int16_t* hl = buffer;
  int16_t* lDst = idwt;
  const int16_t* lh = buffer + w * w;
  const int16_t* hh = buffer + w * w * 2;
  int16_t* hDst = idwt + w * w * 2;

  for (size_t y = 0; y < w; ++y) {
    lDst[0] = int16_t(ll[0] - ((hl[0] + hl[0] + 1) >> 1));
    hDst[0] = int16_t(lh[0] - ((hh[0] + hh[0] + 1) >> 1));
    for (size_t n = 1; n < w; ++n) {
      const size_t x = n << 1;
      lDst[x] = int16_t(ll[n] - ((hl[n - 1] + hl[n] + 1) >> 1));
      hDst[x] = int16_t(lh[n] - ((hh[n - 1] + hh[n] + 1) >> 1));
    }
    size_t n = 0;
    for (; n < w - 1; ++n) {
      const size_t x = n << 1;
      lDst[x + 1] = int16_t((hl[n] * 2) + ((lDst[x] + lDst[x + 2]) >> 1));
      hDst[x + 1] = int16_t((hh[n] * 2) + ((hDst[x] + hDst[x + 2]) >> 1));
    }
    const size_t x = n << 1;
    lDst[x + 1] = int16_t((hl[n] * 2) + lDst[x]);
    hDst[x + 1] = int16_t((hh[n] * 2) + hDst[x]);
    ll += w;
    hl += w;
    lDst += total;
    lh += w;
    hh += w;
    hDst += total;
  }

  for (size_t x = 0; x < total; ++x) {
    const int16_t* l = idwt + x;
    const int16_t* h = idwt + x + w * total;
    int16_t* dst = buffer + x;
    *dst = int16_t(*l - ((*h * 2 + 1) >> 1));
    for (size_t n = 1; n < w; ++n) {
      l += total;
      h += total;
      dst[2 * total] = int16_t(*l - ((*(h - total) + *h + 1) >> 1));
      dst[total] = int16_t((*(h - total) * 2) + ((*dst + dst[2 * total]) >> 1));
      dst += 2 * total;
    }
    dst[total] = int16_t((*h * 2) + ((*dst * 2) >> 1));
  }
}

// One 1-D reduce-extrapolate synthesis of `lowCount` low and `highCount` high coefficients
// (lowCount is highCount + 1 or + 2), reading each with its step and writing with dstStep.
// Divisions are C's (towards zero), as FreeRDP's.
inline void extrapolateLine(const int16_t* pL, size_t lStep, const int16_t* pH, size_t hStep, int16_t* pX,
                            size_t xStep, size_t lowCount, size_t highCount) {
  int16_t h0 = *pH;
  pH += hStep;
  int16_t l0 = *pL;
  pL += lStep;
  int16_t x0 = int16_t(l0 - h0);
  int16_t x2 = int16_t(l0 - h0);
  for (size_t j = 0; j + 1 < highCount; ++j) {
    const int16_t h1 = *pH;
    pH += hStep;
    l0 = *pL;
    pL += lStep;
    x2 = int16_t(l0 - ((h0 + h1) / 2));
    const int16_t x1 = int16_t(((x0 + x2) / 2) + (2 * h0));
    pX[0] = x0;
    pX[xStep] = x1;
    pX += 2 * xStep;
    x0 = x2;
    h0 = h1;
  }
  if (lowCount <= highCount + 1) {
    if (lowCount <= highCount) {
      pX[0] = x2;
      pX[xStep] = int16_t(x2 + (2 * h0));
    } else {
      l0 = *pL;
      x0 = int16_t(l0 - h0);
      pX[0] = x2;
      pX[xStep] = int16_t(((x0 + x2) / 2) + (2 * h0));
      pX[2 * xStep] = x0;
    }
  } else {
    l0 = *pL;
    pL += lStep;
    x0 = int16_t(l0 - (h0 / 2));
    pX[0] = x2;
    pX[xStep] = int16_t(((x0 + x2) / 2) + (2 * h0));
    pX[2 * xStep] = x0;
    l0 = *pL;
    pX[3 * xStep] = int16_t((x0 + l0) / 2);
  }
}

size_t lowCount(int level) {
  return (64u >> level) + 1;
}
size_t highCount(int level) {
  return level == 1 ? (64u >> 1) - 1 : (64u + (1u << (level - 1))) >> level;
}

void extrapolateLevel(int16_t* buffer, int16_t* temp, int level) {
  const size_t nL = lowCount(level);
  const size_t nH = highCount(level);
  const int16_t* hl = buffer;
  const int16_t* lh = hl + nH * nL;
  const int16_t* hh = lh + nL * nH;
  const int16_t* ll = hh + nH * nH;
  const size_t step = nL + nH;
  int16_t* l = temp;
  int16_t* h = temp + nL * step;
  // Horizontal: LL + HL -> L (nL rows), LH + HH -> H (nH rows).
  for (size_t i = 0; i < nL; ++i)
    extrapolateLine(ll + i * nL, 1, hl + i * nH, 1, l + i * step, 1, nL, nH);
  for (size_t i = 0; i < nH; ++i)
    extrapolateLine(lh + i * nL, 1, hh + i * nH, 1, h + i * step, 1, nL, nH);
  // Vertical: L + H -> the level's output, column by column.
  for (size_t i = 0; i < step; ++i)
    extrapolateLine(l + i, step, h + i, step, buffer + i, step, nL, nH);
}

} // namespace

void RfxDwt::inverseClassic(int16_t* coefficients, int16_t* temp) {
  classicLevel(coefficients + 3840, temp, 8);
  classicLevel(coefficients + 3072, temp, 16);
  classicLevel(coefficients, temp, 32);
}

void RfxDwt::inverseExtrapolate(int16_t* coefficients, int16_t* temp) {
  extrapolateLevel(coefficients + 3807, temp, 3);
  extrapolateLevel(coefficients + 3007, temp, 2);
  extrapolateLevel(coefficients, temp, 1);
}

} // namespace gc::codec
