#include "rdp/codec/InterleavedDecoder.h"

#include "privacy/SecureZero.h"
#include "rdp/front/Wire.h"

#include <algorithm>
#include <utility>

namespace gc::codec {

namespace {

constexpr front::ProtocolRules bad{InterleavedDecoder::kPdu};

// Compression order codes (MS-RDPBCGR 2.2.9.1.1.3.1.2.4).
enum : uint32_t {
  RegularBgRun = 0x0,
  RegularFgRun = 0x1,
  RegularFgBgImage = 0x2,
  RegularColorRun = 0x3,
  RegularColorImage = 0x4,
  LiteSetFgFgRun = 0xC,
  LiteSetFgFgBgImage = 0xD,
  LiteDitheredRun = 0xE,
  MegaMegaBgRun = 0xF0,
  MegaMegaFgRun = 0xF1,
  MegaMegaFgBgImage = 0xF2,
  MegaMegaColorRun = 0xF3,
  MegaMegaColorImage = 0xF4,
  MegaMegaSetFgRun = 0xF6,
  MegaMegaSetFgBgImage = 0xF7,
  MegaMegaDitheredRun = 0xF8,
  SpecialFgBg1 = 0xF9,
  SpecialFgBg2 = 0xFA,
  SpecialWhite = 0xFD,
  SpecialBlack = 0xFE,
};

uint32_t codeOf(uint8_t header) {
  if ((header & 0xC0) != 0xC0)
    return header >> 5; // regular orders
  if ((header & 0xF0) == 0xF0)
    return header;    // mega-mega and special orders
  return header >> 4; // lite orders
}

inline uint8_t expand5(uint32_t c) {
  return uint8_t((c << 3) | (c >> 2));
}
// FreeRDP's 6-bit expansion (4c + c/8, capped): kept so that pixels equal FreeRDP's.
inline uint8_t expand6(uint32_t c) {
  return uint8_t(std::min<uint32_t>(255, (c << 2) + (c >> 3)));
}

// Writes native pixels (15/16/24 bpp values) into the BGRX output, bottom-up, keeping the
// previous stream row's native values for the XOR orders.
class Writer {
public:
  Writer(const Pixels& out, uint32_t bpp, uint32_t* rows)
      : m_out(out), m_bpp(bpp), m_total(uint64_t(out.width) * out.height), m_cur(rows),
        m_prev(rows + out.width) {
    m_row = out.row(out.height - 1);
  }
  uint64_t left() const { return m_total - m_written; }
  uint64_t written() const { return m_written; }
  uint32_t white() const { return m_bpp == 24 ? 0xFFFFFF : 0xFFFF; }
  // The pixel above (the previous stream row); only asked for after the first row.
  uint32_t above() const { return m_prev[m_x]; }
  // The caller checked left() > 0.
  void put(uint32_t v) {
    m_cur[m_x] = v;
    uint8_t* d = m_row + size_t(m_x) * 4;
    switch (m_bpp) {
    case 24:
      d[0] = uint8_t(v), d[1] = uint8_t(v >> 8), d[2] = uint8_t(v >> 16);
      break;
    case 16:
      d[0] = expand5(v & 0x1F), d[1] = expand6((v >> 5) & 0x3F), d[2] = expand5((v >> 11) & 0x1F);
      break;
    default:
      d[0] = expand5(v & 0x1F), d[1] = expand5((v >> 5) & 0x1F), d[2] = expand5((v >> 10) & 0x1F);
      break;
    }
    d[3] = 0xFF;
    ++m_written;
    if (++m_x == m_out.width && m_written < m_total) {
      m_x = 0;
      m_row -= m_out.stride;
      std::swap(m_cur, m_prev);
    }
  }

private:
  const Pixels& m_out;
  uint32_t m_bpp;
  uint64_t m_total;
  uint64_t m_written = 0;
  uint32_t m_x = 0;
  uint8_t* m_row;
  uint32_t* m_cur;
  uint32_t* m_prev;
};

bool readPixel(front::Wire& r, uint32_t bpp, uint32_t& v) {
  if (bpp == 24) {
    uint8_t b0 = 0, b1 = 0, b2 = 0;
    if (!r.u8(b0) || !r.u8(b1) || !r.u8(b2))
      return false;
    v = uint32_t(b0) | (uint32_t(b1) << 8) | (uint32_t(b2) << 16);
    return true;
  }
  uint16_t p = 0;
  if (!r.u16le(p))
    return false;
  v = p;
  return true;
}

// A run held in the header's low bits (`mask`: 5 bits for the regular orders, 4 for the lite
// ones), counted in `unit`s; zero there means the next byte holds it, plus `bias`.
bool shortRun(front::Wire& r, uint8_t header, uint8_t mask, uint32_t unit, uint32_t bias, uint32_t& run) {
  run = header & mask;
  if (run != 0) {
    run *= unit;
    return true;
  }
  uint8_t next = 0;
  if (!r.u8(next))
    return false;
  run = uint32_t(next) + bias;
  return true;
}

// The run length of an order whose header byte was just read.
bool runLength(front::Wire& r, uint32_t code, uint8_t header, uint32_t& run) {
  switch (code) {
  case RegularFgBgImage:
    return shortRun(r, header, 0x1F, 8, 1, run);
  case LiteSetFgFgBgImage:
    return shortRun(r, header, 0x0F, 8, 1, run);
  case RegularBgRun:
  case RegularFgRun:
  case RegularColorRun:
  case RegularColorImage:
    return shortRun(r, header, 0x1F, 1, 32, run);
  case LiteSetFgFgRun:
  case LiteDitheredRun:
    return shortRun(r, header, 0x0F, 1, 16, run);
  default: { // mega-mega orders
    uint16_t mega = 0;
    if (!r.u16le(mega))
      return false;
    run = mega;
    return true;
  }
  }
}

} // namespace

InterleavedDecoder::~InterleavedDecoder() {
  secureZero(m_rows.data(), m_rows.size() * sizeof(uint32_t));
}

Checked<Ok> InterleavedDecoder::decode(std::span<const uint8_t> stream, uint32_t bpp, const Pixels& out) {
  if (!out.valid())
    return bad("bitmap size out of range");
  if (bpp != 15 && bpp != 16 && bpp != 24)
    return bad("colour depth not 15, 16 or 24");
  if (m_rows.size() < size_t(out.width) * 2) {
    secureZero(m_rows.data(), m_rows.size() * sizeof(uint32_t));
    m_rows.assign(size_t(out.width) * 2, 0); // bounded: out.width <= Pixels::kMaxSide
  }
  front::Wire r(stream);
  Writer w(out, bpp, m_rows.data());
  const uint64_t width = out.width;
  uint32_t fgPel = w.white();
  bool firstLine = true;
  bool insertFgPel = false;

  // One FGBG image byte: bit set = foreground (XORed with the pixel above after the first line).
  auto fgbg = [&](uint8_t mask, uint32_t bits) {
    for (uint32_t i = 0; i < bits; ++i) {
      const bool fg = (mask >> i) & 1;
      if (firstLine)
        w.put(fg ? fgPel : 0);
      else
        w.put(fg ? w.above() ^ fgPel : w.above());
    }
  };

  while (!r.atEnd()) {
    if (firstLine && w.written() >= width) {
      firstLine = false;
      insertFgPel = false;
    }
    uint8_t header = 0;
    r.u8(header);
    const uint32_t code = codeOf(header);
    uint32_t run = 0;
    switch (code) {
    case RegularBgRun:
    case MegaMegaBgRun: {
      if (!runLength(r, code, header, run))
        return bad("order cut short");
      if (insertFgPel && run == 0)
        return bad("empty background run after a background run");
      if (run > w.left())
        return bad("order writes past the bitmap");
      uint32_t n = run;
      if (insertFgPel) { // two background runs in a row are split by one foreground pixel
        w.put(firstLine ? fgPel : w.above() ^ fgPel);
        --n;
      }
      for (uint32_t i = 0; i < n; ++i)
        w.put(firstLine ? 0 : w.above());
      insertFgPel = true;
      continue;
    }
    case RegularFgRun:
    case MegaMegaFgRun:
    case LiteSetFgFgRun:
    case MegaMegaSetFgRun:
      if (!runLength(r, code, header, run))
        return bad("order cut short");
      if ((code == LiteSetFgFgRun || code == MegaMegaSetFgRun) && !readPixel(r, bpp, fgPel))
        return bad("order cut short");
      if (run > w.left())
        return bad("order writes past the bitmap");
      for (uint32_t i = 0; i < run; ++i)
        w.put(firstLine ? fgPel : w.above() ^ fgPel);
      break;
    case LiteDitheredRun:
    case MegaMegaDitheredRun: {
      uint32_t a = 0, b = 0;
      if (!runLength(r, code, header, run) || !readPixel(r, bpp, a) || !readPixel(r, bpp, b))
        return bad("order cut short");
      if (uint64_t(run) * 2 > w.left())
        return bad("order writes past the bitmap");
      for (uint32_t i = 0; i < run; ++i) {
        w.put(a);
        w.put(b);
      }
      break;
    }
    case RegularColorRun:
    case MegaMegaColorRun: {
      uint32_t a = 0;
      if (!runLength(r, code, header, run) || !readPixel(r, bpp, a))
        return bad("order cut short");
      if (run > w.left())
        return bad("order writes past the bitmap");
      for (uint32_t i = 0; i < run; ++i)
        w.put(a);
      break;
    }
    case RegularFgBgImage:
    case MegaMegaFgBgImage:
    case LiteSetFgFgBgImage:
    case MegaMegaSetFgBgImage: {
      if (!runLength(r, code, header, run))
        return bad("order cut short");
      if ((code == LiteSetFgFgBgImage || code == MegaMegaSetFgBgImage) && !readPixel(r, bpp, fgPel))
        return bad("order cut short");
      if (run > w.left())
        return bad("order writes past the bitmap");
      if (!r.has((uint64_t(run) + 7) / 8))
        return bad("order cut short");
      for (uint32_t done = 0; done < run; done += 8) {
        uint8_t mask = 0;
        r.u8(mask);
        fgbg(mask, run - done < 8 ? run - done : 8);
      }
      break;
    }
    case RegularColorImage:
    case MegaMegaColorImage: {
      if (!runLength(r, code, header, run))
        return bad("order cut short");
      if (run > w.left())
        return bad("order writes past the bitmap");
      if (!r.has(uint64_t(run) * (bpp == 24 ? 3 : 2)))
        return bad("order cut short");
      for (uint32_t i = 0; i < run; ++i) {
        uint32_t v = 0;
        readPixel(r, bpp, v);
        w.put(v);
      }
      break;
    }
    case SpecialFgBg1:
    case SpecialFgBg2:
      if (w.left() < 8)
        return bad("order writes past the bitmap");
      fgbg(code == SpecialFgBg1 ? 0x03 : 0x05, 8);
      break;
    case SpecialWhite:
    case SpecialBlack:
      if (w.left() < 1)
        return bad("order writes past the bitmap");
      w.put(code == SpecialWhite ? w.white() : 0);
      break;
    default:
      return bad("unknown order");
    }
    insertFgPel = false;
  }
  if (w.left() != 0)
    return bad("stream ends before the bitmap is complete");
  return Ok{};
}

} // namespace gc::codec
