// GfxBytes: RDPGFX server PDUs (MS-RDPEGFX 2.2.2) written byte by byte for the tests, and the
// ZGFX wrapping (an uncompressed RDP_SEGMENTED_DATA single segment). Independent of the code
// under test: it writes the wire format from the spec.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace gfxbytes {

using Bytes = std::vector<uint8_t>;

inline void u8(Bytes& b, uint32_t v) {
  b.push_back(uint8_t(v));
}
inline void u16(Bytes& b, uint32_t v) {
  u8(b, v & 0xFF);
  u8(b, (v >> 8) & 0xFF);
}
inline void u32(Bytes& b, uint32_t v) {
  u16(b, v & 0xFFFF);
  u16(b, v >> 16);
}
inline void rect(Bytes& b, uint16_t l, uint16_t t, uint16_t r, uint16_t bo) {
  u16(b, l);
  u16(b, t);
  u16(b, r);
  u16(b, bo);
}

// A PDU: header (cmdId, flags 0, pduLength = 8 + body) and body.
inline Bytes pdu(uint16_t cmd, const Bytes& body) {
  Bytes b;
  u16(b, cmd);
  u16(b, 0);
  u32(b, uint32_t(8 + body.size()));
  b.insert(b.end(), body.begin(), body.end());
  return b;
}
inline Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts)
    out.insert(out.end(), p.begin(), p.end());
  return out;
}
// The ZGFX envelope, RDP 8.0, not compressed: one segment, or multipart (segments of at most
// 65535 bytes) for a longer message.
inline Bytes zgfx(const Bytes& plain) {
  if (plain.size() <= 65535) {
    Bytes b{0xE0, 0x04};
    b.insert(b.end(), plain.begin(), plain.end());
    return b;
  }
  Bytes b{0xE1};
  const std::size_t count = (plain.size() + 65534) / 65535;
  u16(b, uint32_t(count));
  u32(b, uint32_t(plain.size()));
  for (std::size_t at = 0; at < plain.size(); at += 65535) {
    const std::size_t n = std::min<std::size_t>(65535, plain.size() - at);
    u32(b, uint32_t(n + 1));
    b.push_back(0x04);
    b.insert(b.end(), plain.begin() + std::ptrdiff_t(at), plain.begin() + std::ptrdiff_t(at + n));
  }
  return b;
}

inline Bytes capsConfirm(uint32_t version, uint32_t flags) {
  Bytes b;
  u32(b, version);
  u32(b, 4);
  u32(b, flags);
  return pdu(0x0013, b);
}
inline Bytes resetGraphics(uint32_t w, uint32_t h, uint32_t monitors = 1, uint32_t length = 340) {
  Bytes b;
  u32(b, w);
  u32(b, h);
  u32(b, monitors);
  for (uint32_t i = 0; i < monitors && i < 16; ++i) {
    u32(b, 0);
    u32(b, 0);
    u32(b, w - 1);
    u32(b, h - 1);
    u32(b, 1);
  }
  b.resize(length - 8, 0);
  return pdu(0x000E, b);
}
inline Bytes createSurface(uint16_t id, uint16_t w, uint16_t h, uint8_t format = 0x20) {
  Bytes b;
  u16(b, id);
  u16(b, w);
  u16(b, h);
  u8(b, format);
  return pdu(0x0009, b);
}
inline Bytes deleteSurface(uint16_t id) {
  Bytes b;
  u16(b, id);
  return pdu(0x000A, b);
}
inline Bytes mapToOutput(uint16_t id, uint32_t x, uint32_t y) {
  Bytes b;
  u16(b, id);
  u16(b, 0);
  u32(b, x);
  u32(b, y);
  return pdu(0x000F, b);
}
inline Bytes startFrame(uint32_t id) {
  Bytes b;
  u32(b, 0);
  u32(b, id);
  return pdu(0x000B, b);
}
inline Bytes endFrame(uint32_t id) {
  Bytes b;
  u32(b, id);
  return pdu(0x000C, b);
}
struct R {
  uint16_t l, t, r, b;
};
inline Bytes solidFill(uint16_t id, uint8_t red, uint8_t green, uint8_t blue,
                       std::initializer_list<R> rects) {
  Bytes b;
  u16(b, id);
  u8(b, blue);
  u8(b, green);
  u8(b, red);
  u8(b, 0);
  u16(b, uint32_t(rects.size()));
  for (const R& r : rects)
    rect(b, r.l, r.t, r.r, r.b);
  return pdu(0x0004, b);
}
struct P {
  uint16_t x, y;
};
inline Bytes surfaceToSurface(uint16_t from, uint16_t to, R source, std::initializer_list<P> pts) {
  Bytes b;
  u16(b, from);
  u16(b, to);
  rect(b, source.l, source.t, source.r, source.b);
  u16(b, uint32_t(pts.size()));
  for (const P& p : pts) {
    u16(b, p.x);
    u16(b, p.y);
  }
  return pdu(0x0005, b);
}
inline Bytes surfaceToCache(uint16_t id, uint16_t slot, R source) {
  Bytes b;
  u16(b, id);
  u32(b, 0x11223344);
  u32(b, 0x55667788);
  u16(b, slot);
  rect(b, source.l, source.t, source.r, source.b);
  return pdu(0x0006, b);
}
inline Bytes cacheToSurface(uint16_t slot, uint16_t id, std::initializer_list<P> pts) {
  Bytes b;
  u16(b, slot);
  u16(b, id);
  u16(b, uint32_t(pts.size()));
  for (const P& p : pts) {
    u16(b, p.x);
    u16(b, p.y);
  }
  return pdu(0x0007, b);
}
inline Bytes evict(uint16_t slot) {
  Bytes b;
  u16(b, slot);
  return pdu(0x0008, b);
}
inline Bytes wireToSurface1(uint16_t id, uint16_t codec, R dest, const Bytes& data, uint8_t format = 0x20) {
  Bytes b;
  u16(b, id);
  u16(b, codec);
  u8(b, format);
  rect(b, dest.l, dest.t, dest.r, dest.b);
  u32(b, uint32_t(data.size()));
  b.insert(b.end(), data.begin(), data.end());
  return pdu(0x0001, b);
}
inline Bytes wireToSurface2(uint16_t id, uint16_t codec, const Bytes& data, uint8_t format = 0x20) {
  Bytes b;
  u16(b, id);
  u16(b, codec);
  u32(b, 1);
  u8(b, format);
  u32(b, uint32_t(data.size()));
  b.insert(b.end(), data.begin(), data.end());
  return pdu(0x0002, b);
}

} // namespace gfxbytes
