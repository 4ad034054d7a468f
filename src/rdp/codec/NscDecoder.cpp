#include "rdp/codec/NscDecoder.h"

#include "rdp/front/Wire.h"

#include <algorithm>
#include <cstring>

namespace gc::codec {

namespace {

constexpr front::ProtocolRules bad{NscDecoder::kPdu};

// Receives one plane in stream order (row after row of planeWidth values) and puts each value
// into its channel of the output: luma and alpha at their pixel, subsampled chroma at the
// top-left pixel of its 2x2 block. Values for the padding columns and rows the encoder added
// (the plane is wider or taller than the bitmap) are dropped; channel < 0 drops everything.
class PlaneSink {
public:
  PlaneSink(const Pixels& out, int channel, uint32_t planeWidth, bool subsampled)
      : m_out(out), m_channel(channel), m_planeWidth(planeWidth), m_scale(subsampled ? 2 : 1) {}

  void put(uint8_t value, uint64_t count) {
    while (count > 0) {
      const uint64_t n = count < uint64_t(m_planeWidth - m_x) ? count : uint64_t(m_planeWidth - m_x);
      if (m_channel >= 0 && uint64_t(m_y) * m_scale < m_out.height) {
        uint8_t* row = m_out.row(m_y * m_scale) + m_channel;
        for (uint64_t i = 0; i < n; ++i) {
          const uint64_t px = (m_x + i) * m_scale;
          if (px < m_out.width)
            row[px * 4] = value;
        }
      }
      m_x += uint32_t(n);
      count -= n;
      if (m_x == m_planeWidth) {
        m_x = 0;
        ++m_y;
      }
    }
  }

  // `count` values in stream order (a raw plane).
  void put(const uint8_t* values, uint64_t count) {
    while (count > 0) {
      const uint64_t n = count < uint64_t(m_planeWidth - m_x) ? count : uint64_t(m_planeWidth - m_x);
      if (m_channel >= 0 && uint64_t(m_y) * m_scale < m_out.height) {
        uint8_t* row = m_out.row(m_y * m_scale) + m_channel;
        const uint64_t first = m_x;
        const uint64_t last = std::min<uint64_t>(first + n, (uint64_t(m_out.width) + m_scale - 1) / m_scale);
        const size_t step = size_t(m_scale) * 4;
        uint8_t* d = row + first * step;
        for (uint64_t i = first; i < last; ++i, d += step)
          *d = values[i - first];
      }
      values += n;
      m_x += uint32_t(n);
      count -= n;
      if (m_x == m_planeWidth) {
        m_x = 0;
        ++m_y;
      }
    }
  }

private:
  const Pixels& m_out;
  int m_channel;
  uint32_t m_planeWidth;
  uint32_t m_scale;
  uint32_t m_x = 0;
  uint32_t m_y = 0;
};

// NSCodec RLE (MS-RDPNSC 3.1.8): a value followed by the
// same value starts a run (one more byte: length - 2, or 0xFF and a 32-bit length); the last
// four bytes of the plane are raw. Must produce exactly `size` values from exactly `in`.
Checked<Ok> decodeRle(std::span<const uint8_t> in, uint64_t size, PlaneSink& sink) {
  front::Wire r(in);
  uint64_t left = size;
  while (left > 4) {
    uint8_t value = 0;
    if (!r.u8(value))
      return bad("RLE plane ends before its size");
    if (left == 5) {
      sink.put(value, 1);
      --left;
      continue;
    }
    uint8_t next = 0;
    if (!r.peek(next))
      return bad("RLE plane ends before its size");
    if (next != value) {
      sink.put(value, 1);
      --left;
      continue;
    }
    r.skip(1);
    uint8_t len8 = 0;
    if (!r.u8(len8))
      return bad("RLE plane ends before its size");
    uint64_t len = uint64_t(len8) + 2;
    if (len8 == 0xFF) {
      uint32_t len32 = 0;
      if (!r.u32le(len32))
        return bad("RLE plane ends before its size");
      len = len32;
    }
    if (len > left)
      return bad("RLE run past the plane");
    sink.put(value, len);
    left -= len;
  }
  if (left != 4)
    return bad("RLE run over the plane's last four bytes");
  for (int i = 0; i < 4; ++i) {
    uint8_t v = 0;
    if (!r.u8(v))
      return bad("RLE plane ends before its size");
    sink.put(v, 1);
  }
  if (!r.atEnd())
    return bad("RLE plane longer than its values");
  return Ok{};
}

} // namespace

Checked<Ok> NscDecoder::decode(std::span<const uint8_t> stream, const Pixels& out) {
  if (!out.valid())
    return bad("bitmap size out of range");
  front::Wire r(stream);
  uint32_t planeBytes[4] = {};
  uint8_t cll = 0;
  uint8_t subsampling = 0;
  uint16_t reserved = 0;
  if (!r.u32le(planeBytes[0]) || !r.u32le(planeBytes[1]) || !r.u32le(planeBytes[2]) ||
      !r.u32le(planeBytes[3]) || !r.u8(cll) || !r.u8(subsampling) || !r.u16le(reserved))
    return bad("stream shorter than its header");
  if (cll < 1 || cll > 7)
    return bad("colour loss level out of range");
  const bool cs = subsampling != 0;
  const uint64_t total = uint64_t(planeBytes[0]) + planeBytes[1] + planeBytes[2] + planeBytes[3];
  if (total != r.remaining())
    return bad("plane sizes do not match the stream");

  const uint32_t w = out.width;
  const uint32_t h = out.height;
  const uint32_t paddedW = (w + 7) / 8 * 8; // subsampled planes are encoded 8-column aligned
  const uint32_t paddedH = (h + 1) / 2 * 2;
  struct Plane {
    int channel;
    uint32_t width;
    uint32_t height;
    bool subsampled;
  };
  const Plane planes[4] = {
      {2, cs ? paddedW : w, h, false},                     // luma
      {1, cs ? paddedW / 2 : w, cs ? paddedH / 2 : h, cs}, // orange chroma
      {0, cs ? paddedW / 2 : w, cs ? paddedH / 2 : h, cs}, // green chroma
      {-1, w, h, false},                                   // alpha: validated only
  };
  for (int i = 0; i < 4; ++i) {
    const Plane& p = planes[i];
    const uint64_t size = uint64_t(p.width) * p.height;
    std::span<const uint8_t> bytes;
    r.take(planeBytes[i], bytes); // the total was checked above
    PlaneSink sink(out, p.channel, p.width, p.subsampled);
    if (bytes.empty()) {
      sink.put(0xFF, size); // an absent plane is all 0xFF
    } else if (bytes.size() == size) {
      sink.put(bytes.data(), bytes.size());
    } else if (bytes.size() > size) {
      return bad("plane longer than its raw size");
    } else if (const auto rle = decodeRle(bytes, size, sink); front::isViolation(rle)) {
      return rle;
    }
  }

  // AYCoCg to BGRX (MS-RDPNSC 3.1.8, MS-RDPEGDI 3.1.9.1.2): shift = CLL - 1 restores the colour
  // loss and the halving of the chroma in one step; tables for the chroma bytes and the clamp
  // (luma 0..255 plus or minus two chroma terms of -128..127: -256..511).
  const int shift = cll - 1;
  int16_t chroma[256];
  for (int b = 0; b < 256; ++b)
    chroma[b] = int8_t(uint8_t(b << shift));
  uint8_t clampTable[768];
  for (int v = -256; v <= 511; ++v)
    clampTable[v + 256] = uint8_t(v < 0 ? 0 : (v > 255 ? 255 : v));
  auto toBgrx = [&](uint8_t* d, int co, int cg) {
    const int luma = d[2];
    const uint32_t px = uint32_t(clampTable[luma - co - cg + 256]) |
                        (uint32_t(clampTable[luma + cg + 256]) << 8) |
                        (uint32_t(clampTable[luma + co - cg + 256]) << 16) | 0xFF000000u;
    std::memcpy(d, &px, 4);
  };
  if (!cs) {
    for (uint32_t y = 0; y < h; ++y) {
      uint8_t* d = out.row(y);
      for (uint32_t x = 0; x < w; ++x, d += 4)
        toBgrx(d, chroma[d[1]], chroma[d[0]]);
    }
    return Ok{};
  }
  for (uint32_t y0 = 0; y0 < h; y0 += 2) {
    uint8_t* row0 = out.row(y0);
    uint8_t* row1 = y0 + 1 < h ? out.row(y0 + 1) : nullptr;
    for (uint32_t x0 = 0; x0 < w; x0 += 2) {
      uint8_t* d = row0 + size_t(x0) * 4;
      const int co = chroma[d[1]];
      const int cg = chroma[d[0]];
      const bool second = x0 + 1 < w;
      toBgrx(d, co, cg);
      if (second)
        toBgrx(d + 4, co, cg);
      if (row1) {
        toBgrx(row1 + size_t(x0) * 4, co, cg);
        if (second)
          toBgrx(row1 + size_t(x0) * 4 + 4, co, cg);
      }
    }
  }
  return Ok{};
}

} // namespace gc::codec
