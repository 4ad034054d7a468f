// A planar encoder written from MS-RDPEGDI 2.2.2.5.1 for the tests: what FreeRDP's encoder
// does not produce (YCoCg, colour loss, chroma subsampling, alpha planes of any picture), raw
// or RLE. Test code only; correctness of the decoders is judged against FreeRDP's decoder.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace codectest {

struct PlanarFlags {
  unsigned cll = 0;
  bool cs = false;
  bool rle = false;
  bool na = false;
  bool bottomUp = false;
  bool pad = true;           // raw streams: the pad byte the spec asks for
  bool randomPlanes = false; // planes of random bytes, not derived from the picture
  uint32_t seed = 1;
};

// One scanline of RLE symbols (values on the first scanline, encoded deltas after).
inline void rleRow(const uint8_t* sym, uint32_t n, std::vector<uint8_t>& out) {
  std::vector<uint8_t> raw;
  uint8_t last = 0;
  auto flush = [&](uint32_t run) {
    out.push_back(uint8_t((raw.size() << 4) | run));
    out.insert(out.end(), raw.begin(), raw.end());
    raw.clear();
  };
  auto pushRaw = [&](uint8_t s) {
    if (raw.size() == 15)
      flush(0);
    raw.push_back(s);
    last = s;
  };
  uint32_t i = 0;
  while (i < n) {
    uint32_t k = 1;
    while (i + k < n && sym[i + k] == sym[i])
      ++k;
    if (k < 3) {
      pushRaw(sym[i++]);
      continue;
    }
    if (!(raw.empty() && sym[i] == last)) {
      pushRaw(sym[i++]);
      --k;
    }
    if (k < 3) {
      while (k--)
        pushRaw(sym[i++]);
      continue;
    }
    const uint32_t r = std::min<uint32_t>(k, 15);
    flush(r);
    i += r;
    k -= r;
    while (k >= 16) {
      const uint32_t m = std::min<uint32_t>(k, 47);
      out.push_back(uint8_t(m >= 32 ? ((m - 32) << 4) | 2 : ((m - 16) << 4) | 1));
      i += m;
      k -= m;
    }
    if (k >= 3) {
      out.push_back(uint8_t(k));
      i += k;
    }
  }
  if (!raw.empty())
    flush(0);
}

inline std::vector<uint8_t> rlePlane(const std::vector<uint8_t>& plane, uint32_t w, uint32_t h) {
  std::vector<uint8_t> out;
  std::vector<uint8_t> sym(w);
  for (uint32_t y = 0; y < h; ++y) {
    for (uint32_t x = 0; x < w; ++x) {
      const uint8_t cur = plane[size_t(y) * w + x];
      if (y == 0) {
        sym[x] = cur;
      } else {
        const int d = int8_t(uint8_t(cur - plane[size_t(y - 1) * w + x]));
        sym[x] = uint8_t(d >= 0 ? 2 * d : 2 * -d - 1);
      }
    }
    rleRow(sym.data(), w, out);
  }
  return out;
}

inline std::vector<uint8_t> encodePlanar(const std::vector<uint8_t>& bgrx, uint32_t w, uint32_t h,
                                         PlanarFlags f) {
  const uint32_t subW = f.cs ? (w + 1) / 2 : w;
  const uint32_t subH = f.cs ? (h + 1) / 2 : h;
  std::vector<uint8_t> a(size_t(w) * h), p0(size_t(w) * h), p1(size_t(subW) * subH), p2(size_t(subW) * subH);
  const int shift = f.cll > 0 ? int(f.cll) - 1 : 0;
  for (uint32_t r = 0; r < h; ++r)
    for (uint32_t x = 0; x < w; ++x) {
      const uint32_t y = f.bottomUp ? h - 1 - r : r;
      const uint8_t* px = &bgrx[(size_t(y) * w + x) * 4];
      const int B = px[0], G = px[1], R = px[2];
      a[size_t(r) * w + x] = px[3];
      const bool chromaSample = !f.cs || (x % 2 == 0 && r % 2 == 0);
      const size_t c = f.cs ? size_t(r / 2) * subW + x / 2 : size_t(r) * w + x;
      if (f.cll == 0) {
        p0[size_t(r) * w + x] = uint8_t(R);
        p1[c] = uint8_t(G);
        p2[c] = uint8_t(B);
      } else {
        const int Y = (R + 2 * G + B) / 4;
        p0[size_t(r) * w + x] = uint8_t(Y);
        if (chromaSample) {
          p1[c] = uint8_t(((B - R) / 2) >> shift);
          p2[c] = uint8_t((G - Y) >> shift);
        }
      }
    }
  if (f.randomPlanes) { // every byte value, so every extreme of the conversion is reached
    std::mt19937 rng(f.seed);
    for (auto* p : {&a, &p0, &p1, &p2})
      for (auto& v : *p)
        v = uint8_t(rng());
  }
  std::vector<uint8_t> s;
  s.push_back(uint8_t(f.cll | (f.cs ? 0x08 : 0) | (f.rle ? 0x10 : 0) | (f.na ? 0x20 : 0)));
  auto add = [&](const std::vector<uint8_t>& p, uint32_t pw, uint32_t ph) {
    const std::vector<uint8_t> e = f.rle ? rlePlane(p, pw, ph) : p;
    s.insert(s.end(), e.begin(), e.end());
  };
  if (!f.na)
    add(a, w, h);
  add(p0, w, h);
  add(p1, subW, subH);
  add(p2, subW, subH);
  if (!f.rle && f.pad)
    s.push_back(0);
  return s;
}

} // namespace codectest
