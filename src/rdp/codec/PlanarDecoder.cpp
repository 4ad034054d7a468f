#include "rdp/codec/PlanarDecoder.h"

#include <cstddef>
#include <cstring>

namespace gc::codec {

namespace {

constexpr uint8_t kCllMask = 0x07; // colour loss level: 0 = RGB planes, 1..7 = YCoCg
constexpr uint8_t kCs = 0x08;      // chroma subsampling (YCoCg only)
constexpr uint8_t kRle = 0x10;     // RDP 6.0 RLE planes
constexpr uint8_t kNa = 0x20;      // no alpha plane

constexpr front::ProtocolRules bad{PlanarDecoder::kPdu};

// Where one plane lands in the output: element (x, y) is the byte at base + y * rowStep +
// x * colStep (a channel of the pixel). base == nullptr: the plane is only validated.
struct PlaneView {
  uint8_t* base = nullptr;
  ptrdiff_t rowStep = 0;
  size_t colStep = 0;
  uint32_t width = 0;
  uint32_t height = 0;
};

// One RDP 6.0 RLE plane (MS-RDPEGDI 2.2.2.5.1.1): per scanline, control bytes (run length in
// the low nibble, raw byte count in the high one; run lengths 1 and 2 mean 16 + and 32 + the
// high nibble, without raw bytes); the first scanline holds values, every later one deltas
// (sign in bit 0) to the scanline above. Returns the bytes the plane took.
Checked<size_t> decodeRlePlane(std::span<const uint8_t> in, const PlaneView& v) {
  size_t pos = 0;
  for (uint32_t y = 0; y < v.height; ++y) {
    uint8_t* row = v.base ? v.base + ptrdiff_t(y) * v.rowStep : nullptr;
    const uint8_t* above = (row && y > 0) ? row - v.rowStep : nullptr;
    uint32_t x = 0;
    int last = 0; // the last value (first scanline) or delta (later ones) of this scanline
    while (x < v.width) {
      if (pos >= in.size())
        return bad("RLE plane ends before its last scanline");
      const uint8_t control = in[pos++];
      uint32_t run = control & 0x0F;
      uint32_t raw = control >> 4;
      if (run == 1) {
        run = 16 + raw;
        raw = 0;
      } else if (run == 2) {
        run = 32 + raw;
        raw = 0;
      }
      if (raw + run > v.width - x)
        return bad("RLE segment runs past the scanline");
      if (raw > in.size() - pos)
        return bad("RLE plane ends before its last scanline");
      if (!row) {
        pos += raw;
        x += raw + run;
        continue;
      }
      const size_t step = v.colStep;
      uint8_t* d = row + size_t(x) * step;
      const uint8_t* src = in.data() + pos;
      pos += raw;
      x += raw + run;
      if (!above) {
        for (uint32_t i = 0; i < raw; ++i, d += step)
          *d = uint8_t(last = src[i]);
        for (uint32_t i = 0; i < run; ++i, d += step)
          *d = uint8_t(last);
      } else {
        const uint8_t* a = d - v.rowStep;
        for (uint32_t i = 0; i < raw; ++i, d += step, a += step) {
          const uint8_t delta = src[i];
          last = (delta & 1) ? -int(delta >> 1) - 1 : int(delta >> 1);
          *d = uint8_t(*a + last);
        }
        for (uint32_t i = 0; i < run; ++i, d += step, a += step)
          *d = uint8_t(*a + last);
      }
    }
  }
  return pos;
}

// YCoCg to BGRX (MS-RDPEGDI 3.1.9.1.2): the chroma values come shifted by the colour loss
// level; shift = CLL - 1 builds in the halving of Co and Cg. The tables hold, for every byte,
// the signed chroma value it stands for, and the clamp of every sum the conversion can make
// (luma 0..255 plus or minus two chroma terms of -128..127: -256..511).
struct Tables {
  int16_t chroma[256];
  uint8_t clamp[768];
  explicit Tables(int shift) {
    for (int b = 0; b < 256; ++b)
      chroma[b] = int8_t(uint8_t(b << shift));
    for (int v = -256; v <= 511; ++v)
      clamp[v + 256] = uint8_t(v < 0 ? 0 : (v > 255 ? 255 : v));
  }
  void toBgrx(uint8_t* d, int y, int co, int cg, uint32_t alpha) const {
    const int t = y - cg;
    const uint32_t px = uint32_t(clamp[t + co + 256]) | (uint32_t(clamp[y + cg + 256]) << 8) |
                        (uint32_t(clamp[t - co + 256]) << 16) | (alpha << 24);
    std::memcpy(d, &px, 4);
  }
};

inline void storeBgrx(uint8_t* d, uint8_t b, uint8_t g, uint8_t r, uint32_t alpha) {
  const uint32_t px = uint32_t(b) | (uint32_t(g) << 8) | (uint32_t(r) << 16) | (alpha << 24);
  std::memcpy(d, &px, 4);
}

} // namespace

Checked<Ok> PlanarDecoder::decode(std::span<const uint8_t> stream, const Pixels& out, Options options) {
  if (!out.valid())
    return bad("bitmap size out of range");
  if (stream.empty())
    return bad("empty stream");

  const uint8_t header = stream[0];
  const uint32_t cll = header & kCllMask;
  const bool cs = (header & kCs) != 0;
  const bool rle = (header & kRle) != 0;
  const bool hasAlpha = (header & kNa) == 0;
  const bool keepAlpha = hasAlpha && options.alpha == Alpha::FromStream;
  if (cs && cll == 0)
    return bad("chroma subsampling without YCoCg");

  const uint32_t w = out.width;
  const uint32_t h = out.height;
  const uint32_t subW = cs ? (w + 1) / 2 : w;
  const uint32_t subH = cs ? (h + 1) / 2 : h;
  const size_t planeSize = size_t(w) * h;
  const size_t chromaSize = size_t(subW) * subH;
  const int shift = cll > 0 ? int(cll) - 1 : 0;
  const bool bottomUp = options.rows == Rows::BottomUp;
  auto pixelRow = [&](uint32_t streamRow) { return bottomUp ? h - 1 - streamRow : streamRow; };
  std::span<const uint8_t> body = stream.subspan(1);

  if (!rle) {
    const size_t needed = (hasAlpha ? planeSize : 0) + planeSize + 2 * chromaSize;
    if (body.size() < needed)
      return bad("raw planes shorter than the bitmap");
    if (body.size() > needed + 1) // one pad byte may follow (MS-RDPEGDI 2.2.2.5.1)
      return bad("bytes after the raw planes");
    const uint8_t* a = hasAlpha ? body.data() : nullptr;
    const uint8_t* p0 = body.data() + (hasAlpha ? planeSize : 0);
    const uint8_t* p1 = p0 + planeSize;
    const uint8_t* p2 = p1 + chromaSize;
    const Tables tables(shift);
    for (uint32_t r = 0; r < h; ++r) {
      uint8_t* d = out.row(pixelRow(r));
      const size_t at = size_t(r) * w;
      const uint8_t* pa = keepAlpha ? a + at : nullptr;
      if (cll == 0) {
        const uint8_t* rp = p0 + at;
        const uint8_t* gp = p1 + at;
        const uint8_t* bp = p2 + at;
        if (pa)
          for (uint32_t x = 0; x < w; ++x, d += 4)
            storeBgrx(d, bp[x], gp[x], rp[x], pa[x]);
        else
          for (uint32_t x = 0; x < w; ++x, d += 4)
            storeBgrx(d, bp[x], gp[x], rp[x], 0xFF);
        continue;
      }
      const uint8_t* yp = p0 + at;
      const size_t chromaAt = size_t(cs ? r / 2 : r) * subW;
      const uint8_t* cop = p1 + chromaAt;
      const uint8_t* cgp = p2 + chromaAt;
      for (uint32_t x = 0; x < w; ++x, d += 4) {
        const uint32_t c = cs ? x / 2 : x;
        tables.toBgrx(d, yp[x], tables.chroma[cop[c]], tables.chroma[cgp[c]], pa ? pa[x] : 0xFF);
      }
    }
    return Ok{};
  }

  // RLE: each plane into its channel of the output (chroma planes, when subsampled, into the
  // top-left pixel of each 2x2 block), then the pixels are completed in place.
  const ptrdiff_t rowStep = bottomUp ? -ptrdiff_t(out.stride) : ptrdiff_t(out.stride);
  uint8_t* origin = out.row(pixelRow(0));
  auto view = [&](unsigned channel, bool subsampled) {
    PlaneView v;
    v.base = origin + channel;
    v.rowStep = subsampled ? 2 * rowStep : rowStep;
    v.colStep = subsampled ? 8 : 4;
    v.width = subsampled ? subW : w;
    v.height = subsampled ? subH : h;
    return v;
  };
  PlaneView planes[4];
  unsigned count = 0;
  if (hasAlpha) {
    planes[count] = view(3, false);
    if (!keepAlpha)
      planes[count].base = nullptr; // validated, not kept
    ++count;
  }
  planes[count++] = view(2, false); // red or luma
  planes[count++] = view(1, cs);    // green or orange chroma
  planes[count++] = view(0, cs);    // blue or green chroma
  size_t pos = 0;
  for (unsigned i = 0; i < count; ++i) {
    const auto used = decodeRlePlane(body.subspan(pos), planes[i]);
    if (const auto* v = std::get_if<Violation>(&used))
      return *v;
    pos += std::get<size_t>(used);
  }
  if (pos != body.size())
    return bad("bytes after the RLE planes");

  if (cll == 0) {
    if (!keepAlpha)
      for (uint32_t y = 0; y < h; ++y) {
        uint8_t* d = out.row(y) + 3;
        for (uint32_t x = 0; x < w; ++x, d += 4)
          *d = 0xFF;
      }
    return Ok{};
  }
  const Tables tables(shift);
  auto alphaOf = [&](const uint8_t* d) { return keepAlpha ? uint32_t(d[3]) : 0xFFu; };
  if (!cs) {
    for (uint32_t y = 0; y < h; ++y) {
      uint8_t* d = out.row(y);
      for (uint32_t x = 0; x < w; ++x, d += 4)
        tables.toBgrx(d, d[2], tables.chroma[d[1]], tables.chroma[d[0]], alphaOf(d));
    }
    return Ok{};
  }
  // Subsampled: each 2x2 block's chroma sits in its top-left pixel (stream order).
  for (uint32_t r0 = 0; r0 < h; r0 += 2) {
    uint8_t* row0 = out.row(pixelRow(r0));
    uint8_t* row1 = r0 + 1 < h ? out.row(pixelRow(r0 + 1)) : nullptr;
    for (uint32_t x0 = 0; x0 < w; x0 += 2) {
      uint8_t* d = row0 + size_t(x0) * 4;
      const int co = tables.chroma[d[1]];
      const int cg = tables.chroma[d[0]];
      const bool second = x0 + 1 < w;
      tables.toBgrx(d, d[2], co, cg, alphaOf(d));
      if (second)
        tables.toBgrx(d + 4, d[6], co, cg, alphaOf(d + 4));
      if (row1) {
        uint8_t* e = row1 + size_t(x0) * 4;
        tables.toBgrx(e, e[2], co, cg, alphaOf(e));
        if (second)
          tables.toBgrx(e + 4, e[6], co, cg, alphaOf(e + 4));
      }
    }
  }
  return Ok{};
}

} // namespace gc::codec
