// Builders for the server-to-client PDUs the fronts read (MS-RDPBCGR, MS-RDPEDYC), written from
// the specifications for tst_rdpfront and the fuzzers' seed corpora. Header-only, std only.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

namespace gc::front::build {

using Bytes = std::vector<uint8_t>;

inline void put8(Bytes& b, uint32_t v) {
  b.push_back(uint8_t(v));
}
inline void put16(Bytes& b, uint32_t v) {
  b.push_back(uint8_t(v));
  b.push_back(uint8_t(v >> 8));
}
inline void put16be(Bytes& b, uint32_t v) {
  b.push_back(uint8_t(v >> 8));
  b.push_back(uint8_t(v));
}
inline void put32(Bytes& b, uint32_t v) {
  put16(b, v & 0xFFFF);
  put16(b, v >> 16);
}
inline void append(Bytes& b, const Bytes& more) {
  b.reserve(b.size() + more.size());
  for (uint8_t x : more) // not insert(): GCC 12 at -O3 warns falsely on its memmove
    b.push_back(x);
}
inline Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes b;
  for (const Bytes& p : parts)
    append(b, p);
  return b;
}
inline Bytes filled(std::size_t n, uint8_t v = 0x5A) {
  return Bytes(n, v);
}

inline Bytes tpkt(const Bytes& payload) {
  Bytes b{0x03, 0x00};
  put16be(b, uint32_t(payload.size() + 4));
  append(b, payload);
  return b;
}
inline Bytes x224Data(const Bytes& mcs) {
  return tpkt(cat({{0x02, 0xF0, 0x80}, mcs}));
}
inline Bytes connectionConfirm(uint32_t selectedProtocol = 2) {
  Bytes b{0x0E, 0xD0, 0, 0, 0, 0, 0, 0x02, 0x00};
  put16(b, 8);
  put32(b, selectedProtocol);
  return tpkt(b);
}
inline Bytes tsRequest(std::size_t contentBytes) {
  Bytes b{0x30};
  if (contentBytes < 0x80) {
    put8(b, uint32_t(contentBytes));
  } else {
    put8(b, 0x82);
    put16be(b, uint32_t(contentBytes));
  }
  append(b, filled(contentBytes, 0xA0));
  return b;
}
inline Bytes connectResponse() {
  const Bytes content = filled(40, 0x04);
  Bytes b{0x7F, 0x66, uint8_t(content.size())};
  append(b, content);
  return x224Data(b);
}
inline Bytes attachUserConfirm(uint16_t userId = 6) {
  Bytes b{0x2E, 0x00};
  put16be(b, userId);
  return x224Data(b);
}
inline Bytes channelJoinConfirm(uint16_t channelId, uint8_t result = 0) {
  Bytes b{0x3E, result};
  put16be(b, 6);
  put16be(b, channelId);
  put16be(b, channelId);
  return x224Data(b);
}
inline Bytes sendData(uint16_t channelId, const Bytes& data) {
  Bytes b{0x68};
  put16be(b, 2);
  put16be(b, channelId);
  put8(b, 0x70);
  if (data.size() < 0x80) {
    put8(b, uint32_t(data.size()));
  } else {
    put8(b, 0x80 | uint32_t(data.size() >> 8));
    put8(b, uint32_t(data.size() & 0xFF));
  }
  append(b, data);
  return x224Data(b);
}
inline Bytes licenseValidClient() {
  Bytes b;
  put16(b, 0x0080);
  put16(b, 0);
  put8(b, 0xFF);
  put8(b, 0x03);
  put16(b, 16);
  put32(b, 7); // STATUS_VALID_CLIENT
  put32(b, 2); // ST_NO_TRANSITION
  put16(b, 4);
  put16(b, 0);
  return sendData(1003, b);
}
inline Bytes shareControl(uint16_t type, const Bytes& body) {
  Bytes b;
  put16(b, uint32_t(body.size() + 6));
  put16(b, 0x10u | type);
  put16(b, 0x03EA);
  append(b, body);
  return b;
}
inline Bytes shareData(uint8_t type2, const Bytes& payload, uint8_t compressedType = 0) {
  Bytes b;
  put32(b, 0x000103EA);
  put8(b, 0);
  put8(b, 1);
  put16(b, uint32_t(payload.size()));
  put8(b, type2);
  put8(b, compressedType);
  put16(b, 0);
  append(b, payload);
  return shareControl(7, b);
}
inline Bytes capabilitySet(uint16_t type, const Bytes& body) {
  Bytes b;
  put16(b, type);
  put16(b, uint32_t(body.size() + 4));
  append(b, body);
  return b;
}
inline Bytes bitmapCapability(uint16_t width, uint16_t height) {
  Bytes b;
  put16(b, 32);
  put16(b, 1);
  put16(b, 1);
  put16(b, 1);
  put16(b, width);
  put16(b, height);
  put16(b, 0);
  put16(b, 1);
  put16(b, 1);
  put8(b, 0);
  put8(b, 0);
  put16(b, 1);
  put16(b, 0);
  return capabilitySet(2, b);
}
inline Bytes demandActiveBody(uint16_t width, uint16_t height, int bitmapSets = 1) {
  Bytes caps = capabilitySet(1, filled(20, 0));
  for (int i = 0; i < bitmapSets; ++i)
    append(caps, bitmapCapability(width, height));
  Bytes b;
  put32(b, 0x000103EA);
  put16(b, 4);
  put16(b, uint32_t(caps.size() + 4));
  append(b, {'R', 'D', 'P', 0});
  put16(b, uint32_t(1 + bitmapSets));
  put16(b, 0);
  append(b, caps);
  put32(b, 0); // sessionId
  return b;
}
inline Bytes demandActive(uint16_t width, uint16_t height) {
  return sendData(1003, shareControl(1, demandActiveBody(width, height)));
}
inline Bytes deactivateAll() {
  Bytes b;
  put32(b, 0x000103EA);
  put16(b, 1);
  put8(b, 0);
  return sendData(1003, shareControl(6, b));
}
inline Bytes slowData(uint8_t type2, const Bytes& payload) {
  return sendData(1003, shareData(type2, payload));
}
inline Bytes synchronize() {
  Bytes b;
  put16(b, 1);
  put16(b, 0x03EA);
  return slowData(31, b);
}
inline Bytes control(uint16_t action) {
  Bytes b;
  put16(b, action);
  put16(b, 0);
  put32(b, 0);
  return slowData(20, b);
}
inline Bytes fontMap() {
  Bytes b;
  put16(b, 0);
  put16(b, 0);
  put16(b, 3);
  put16(b, 4);
  return slowData(40, b);
}

// Fast path: one PDU of updates.
inline Bytes fpUpdate(uint8_t code, uint8_t fragmentation, const Bytes& data, uint8_t compression = 0) {
  Bytes b{uint8_t(code | (fragmentation << 4) | (compression << 6))};
  put16(b, uint32_t(data.size()));
  append(b, data);
  return b;
}
inline Bytes fastPath(std::initializer_list<Bytes> updates) {
  const Bytes body = cat(updates);
  Bytes b{0x00};
  if (body.size() + 2 <= 0x7F) {
    put8(b, uint32_t(body.size() + 2));
  } else {
    const std::size_t total = body.size() + 3;
    put8(b, 0x80 | uint32_t(total >> 8));
    put8(b, uint32_t(total & 0xFF));
  }
  append(b, body);
  return b;
}
inline Bytes surfaceBits(uint16_t left, uint16_t top, uint16_t right, uint16_t bottom, uint8_t codec = 0,
                         uint8_t bpp = 32) {
  const uint32_t w = uint32_t(right - left), h = uint32_t(bottom - top);
  Bytes b;
  put16(b, 1);
  put16(b, left);
  put16(b, top);
  put16(b, right);
  put16(b, bottom);
  put8(b, bpp);
  put8(b, 0);
  put8(b, 0);
  put8(b, codec);
  put16(b, w);
  put16(b, h);
  put32(b, w * h * 4);
  append(b, filled(std::size_t(w) * h * 4, 0x11));
  return b;
}
inline Bytes frameMarker(uint16_t action, uint32_t id) {
  Bytes b;
  put16(b, 4);
  put16(b, action);
  put32(b, id);
  return b;
}
inline Bytes bitmapRect(uint16_t left, uint16_t top, uint16_t right, uint16_t bottom, uint16_t width,
                        uint16_t height, uint16_t bpp, bool compressed) {
  Bytes b;
  put16(b, left);
  put16(b, top);
  put16(b, right);
  put16(b, bottom);
  put16(b, width);
  put16(b, height);
  put16(b, bpp);
  if (compressed) {
    put16(b, 0x0001);
    put16(b, 8 + 20);
    put16(b, 0);
    put16(b, 20);
    put16(b, (uint32_t(width) * ((bpp + 7u) / 8u)) & 0xFFFF);
    put16(b, (uint32_t(width) * ((bpp + 7u) / 8u) * height) & 0xFFFF);
    append(b, filled(20, 0x22));
  } else {
    const uint32_t length = uint32_t(width) * height * ((bpp + 7u) / 8u);
    put16(b, 0);
    put16(b, length);
    append(b, filled(length, 0x33));
  }
  return b;
}
inline Bytes bitmapUpdate(std::initializer_list<Bytes> rects) {
  Bytes b;
  put16(b, 1);
  put16(b, uint32_t(rects.size()));
  for (const Bytes& r : rects)
    append(b, r);
  return b;
}
inline uint32_t maskBytes(uint32_t width, uint32_t height, uint32_t bits) {
  return ((width * bits + 15) / 16) * 2 * height;
}
// TS_COLORPOINTERATTRIBUTE (24 bpp) or, with xorBpp, TS_POINTERATTRIBUTE.
inline Bytes pointerAttribute(uint16_t cacheIndex, uint16_t width, uint16_t height, uint16_t xorBpp = 0,
                              int xorDelta = 0) {
  const uint32_t bpp = xorBpp ? xorBpp : 24;
  const uint32_t xorLength = uint32_t(int(maskBytes(width, height, bpp)) + xorDelta);
  const uint32_t andLength = maskBytes(width, height, 1);
  Bytes b;
  if (xorBpp)
    put16(b, xorBpp);
  put16(b, cacheIndex);
  put16(b, 0);
  put16(b, 0);
  put16(b, width);
  put16(b, height);
  put16(b, andLength);
  put16(b, xorLength);
  append(b, filled(xorLength, 0x44));
  append(b, filled(andLength, 0xFF));
  put8(b, 0); // pad
  return b;
}
inline Bytes channelChunk(uint16_t channelId, uint32_t total, uint32_t flags, const Bytes& chunk) {
  Bytes b;
  put32(b, total);
  put32(b, flags);
  append(b, chunk);
  return sendData(channelId, b);
}

// The connection up to an active session on a 1024x768 desktop: the I/O channel, drdynvc on
// 1004 (static) and the message channel 1005.
inline std::vector<Bytes> connectionToActive(uint16_t width = 1024, uint16_t height = 768) {
  return {connectionConfirm(),
          tsRequest(60),
          tsRequest(300),
          connectResponse(),
          attachUserConfirm(),
          channelJoinConfirm(1007),
          channelJoinConfirm(1003),
          channelJoinConfirm(1004),
          channelJoinConfirm(1005),
          licenseValidClient(),
          demandActive(width, height),
          synchronize(),
          control(4),
          control(2),
          fontMap()};
}

// drdynvc (MS-RDPEDYC 2.2).
inline Bytes dvcCaps(uint16_t version) {
  Bytes b{0x50, 0x00};
  put16(b, version);
  if (version >= 2)
    append(b, filled(8, 0));
  return b;
}
inline Bytes dvcCreate(uint8_t channelId, const char* name) {
  Bytes b{0x10, channelId};
  for (const char* p = name; *p; ++p)
    b.push_back(uint8_t(*p));
  b.push_back(0);
  return b;
}
inline Bytes dvcDataFirst(uint8_t channelId, uint32_t declared, std::size_t carried) {
  Bytes b{0x28, channelId}; // Len as 4 bytes
  put32(b, declared);
  append(b, filled(carried, 0x66));
  return b;
}
inline Bytes dvcData(uint8_t channelId, std::size_t carried) {
  Bytes b{0x30, channelId};
  append(b, filled(carried, 0x77));
  return b;
}
inline Bytes dvcClose(uint8_t channelId) {
  return Bytes{0x40, channelId};
}

} // namespace gc::front::build
