// ClearCodec streams built by hand per MS-RDPEGFX 2.2.4.1 (FreeRDP has no encoder) and NSCodec
// streams by hand and by FreeRDP's encoder, for the tests and the benchmarks. Test code only.
#pragma once

#include "tests/auto/rdpcodec/CodecTestSupport.h"

#include <freerdp/codec/color.h>
#include <freerdp/codec/nsc.h>
#include <winpr/stream.h>

#include <array>
#include <cstdint>
#include <random>
#include <vector>

namespace codectest {

inline void runLength(Bytes& b, uint32_t run) {
  if (run < 0xFF) {
    b.u8(run);
  } else if (run < 0xFFFF) {
    b.u8(0xFF).u16(run);
  } else {
    b.u8(0xFF).u16(0xFFFF).u32(run);
  }
}

struct Residual {
  Bytes b;
  Residual& run(uint8_t blue, uint8_t green, uint8_t red, uint32_t n) {
    b.u8(blue).u8(green).u8(red);
    runLength(b, n);
    return *this;
  }
};

struct Band {
  Bytes b;
  Band(uint16_t xStart, uint16_t xEnd, uint16_t yStart, uint16_t yEnd, uint8_t blue, uint8_t green,
       uint8_t red) {
    b.u16(xStart).u16(xEnd).u16(yStart).u16(yEnd).u8(blue).u8(green).u8(red);
  }
  // SHORT_VBAR_CACHE_MISS: pixels from yOn (BGR triplets).
  Band& shortMiss(unsigned yOn, const std::vector<uint8_t>& bgr) {
    const unsigned yOff = yOn + unsigned(bgr.size() / 3);
    b.u16((yOff << 8) | yOn).bytes(bgr);
    return *this;
  }
  Band& shortHit(unsigned index, unsigned yOn) {
    b.u16(0x4000 | index).u8(yOn);
    return *this;
  }
  Band& vbarHit(unsigned index) {
    b.u16(0x8000 | index);
    return *this;
  }
};

struct Subcodec {
  Bytes b;
  Subcodec(uint16_t x, uint16_t y, uint16_t w, uint16_t h, uint8_t id, const Bytes& data) {
    b.u16(x).u16(y).u16(w).u16(h).u32(uint32_t(data.size())).u8(id).bytes(data);
  }
};

using Palette = std::vector<std::array<uint8_t, 3>>;

struct Rlex {
  Bytes b;
  unsigned stopBits = 1;
  explicit Rlex(const Palette& palette) {
    b.u8(unsigned(palette.size()));
    for (const auto& c : palette)
      b.u8(c[0]).u8(c[1]).u8(c[2]);
    while (stopBits < 7 && (1u << stopBits) < palette.size())
      ++stopBits;
  }
  Rlex& segment(unsigned stopIndex, unsigned suiteDepth, uint32_t run) {
    b.u8((suiteDepth << stopBits) | stopIndex);
    runLength(b, run);
    return *this;
  }
};

inline Bytes clearStream(uint8_t flags, uint8_t seq, const Bytes* residual, const Bytes* bands,
                         const Bytes* subcodecs, int glyphIndex = -1) {
  Bytes s;
  s.u8(flags).u8(seq);
  if (glyphIndex >= 0)
    s.u16(unsigned(glyphIndex));
  if (flags & 0x02) // glyph hit: no composite payload
    return s;
  s.u32(residual ? uint32_t(residual->size()) : 0)
      .u32(bands ? uint32_t(bands->size()) : 0)
      .u32(subcodecs ? uint32_t(subcodecs->size()) : 0);
  if (residual)
    s.bytes(*residual);
  if (bands)
    s.bytes(*bands);
  if (subcodecs)
    s.bytes(*subcodecs);
  return s;
}

// NSCodec streams (MS-RDPNSC 2.2.2).

// NSCodec RLE of one plane as the spec's encoder rules write it (MS-RDPNSC 3.1.8).
inline std::vector<uint8_t> nscRle(const std::vector<uint8_t>& in) {
  std::vector<uint8_t> out;
  size_t i = 0;
  const size_t n = in.size();
  while (n - i > 4) {
    size_t k = 1;
    while (i + k < n - 4 && in[i + k] == in[i])
      ++k;
    if (k == 1) {
      out.push_back(in[i]);
    } else if (k < 256) {
      out.insert(out.end(), {in[i], in[i], uint8_t(k - 2)});
    } else {
      out.insert(out.end(),
                 {in[i], in[i], 0xFF, uint8_t(k), uint8_t(k >> 8), uint8_t(k >> 16), uint8_t(k >> 24)});
    }
    i += k;
  }
  out.insert(out.end(), in.begin() + ptrdiff_t(i), in.end());
  return out;
}

// Planes of arbitrary values (all the decoders must agree on any), raw or RLE, or absent.
enum class PlaneForm { Raw, Rle, Absent };
inline Bytes nscByHand(uint32_t w, uint32_t h, unsigned cll, bool cs, PlaneForm forms[4], uint32_t seed) {
  const uint32_t pw = (w + 7) / 8 * 8;
  const uint32_t ph = (h + 1) / 2 * 2;
  const size_t sizes[4] = {cs ? size_t(pw) * h : size_t(w) * h,
                           cs ? size_t(pw / 2) * (ph / 2) : size_t(w) * h,
                           cs ? size_t(pw / 2) * (ph / 2) : size_t(w) * h, size_t(w) * h};
  std::mt19937 rng(seed);
  std::vector<uint8_t> planes[4];
  for (int i = 0; i < 4; ++i) {
    std::vector<uint8_t> p(sizes[i]);
    for (size_t j = 0; j < p.size(); ++j)
      p[j] = (rng() % 4 == 0) ? uint8_t(rng()) : uint8_t(j / 7 * 13); // runs and noise
    if (forms[i] == PlaneForm::Rle) {
      auto e = nscRle(p);
      if (e.size() >= p.size())
        forms[i] = PlaneForm::Raw;
      else
        p = e;
    }
    if (forms[i] == PlaneForm::Absent)
      p.clear();
    planes[i] = p;
  }
  Bytes b;
  for (int i = 0; i < 4; ++i)
    b.u32(uint32_t(planes[i].size()));
  b.u8(cll).u8(cs ? 1 : 0).u16(0);
  for (int i = 0; i < 4; ++i)
    b.bytes(planes[i]);
  return b;
}

inline Bytes nscByFreeRdp(const std::vector<uint8_t>& bgrx, uint32_t w, uint32_t h, unsigned cll, bool cs) {
  NSC_CONTEXT* nsc = nsc_context_new();
  nsc_context_set_parameters(nsc, NSC_COLOR_FORMAT, PIXEL_FORMAT_BGRX32);
  nsc_context_set_parameters(nsc, NSC_COLOR_LOSS_LEVEL, cll);
  nsc_context_set_parameters(nsc, NSC_ALLOW_SUBSAMPLING, cs ? 1 : 0);
  nsc_context_reset(nsc, w, h);
  wStream* s = Stream_New(nullptr, 1024);
  Bytes b;
  if (nsc_compose_message(nsc, s, bgrx.data(), w, h, w * 4))
    b.bytes(std::span<const uint8_t>(Stream_Buffer(s), Stream_GetPosition(s)));
  Stream_Free(s, TRUE);
  nsc_context_free(nsc);
  return b;
}

inline std::vector<uint8_t> bgrRun(unsigned n, uint8_t seed) {
  std::vector<uint8_t> v;
  for (unsigned i = 0; i < n; ++i)
    v.insert(v.end(), {uint8_t(seed + i * 9), uint8_t(seed * 3 + i), uint8_t(255 - i * 5)});
  return v;
}

} // namespace codectest
