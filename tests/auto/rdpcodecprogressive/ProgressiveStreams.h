// Building and taking apart RemoteFX Progressive streams (MS-RDPEGFX 2.2.4.2) for the front's
// tests and seeds: blocks by hand, and FreeRDP 3.10.3's encoder output split into its tiles so
// they can be re-sent as FIRST and UPGRADE passes. Test code only.
#pragma once

#include "rdp/front/Wire.h"
#include "tests/auto/rdpcodec/CodecTestSupport.h"

#include <array>
#include <cstdint>
#include <vector>

namespace progtest {

using codectest::Bytes;
using Quant = std::array<uint8_t, 10>; // LL3 HL3 LH3 HH3 HL2 LH2 HH2 HL1 LH1 HH1
using ProgQuant = std::array<Quant, 3>;

inline void quant(Bytes& b, const Quant& q) {
  for (int i = 0; i < 5; ++i)
    b.u8(unsigned(q[size_t(2 * i)] & 0x0F) | unsigned(q[size_t(2 * i + 1)] << 4));
}
inline Quant flat(uint8_t v) {
  Quant q;
  q.fill(v);
  return q;
}

struct Tile {
  uint16_t type = 0xCCC5; // SIMPLE
  uint8_t q[3] = {0, 0, 0};
  uint16_t x = 0, y = 0;
  uint8_t flags = 0;
  uint8_t quality = 0xFF;
  std::vector<uint8_t> data[3]; // y/cb/cr RLGR (SIMPLE, FIRST) or SRL (UPGRADE)
  std::vector<uint8_t> raw[3];  // UPGRADE only
  std::vector<uint8_t> tail;

  Bytes block() const {
    Bytes body;
    body.u8(q[0]).u8(q[1]).u8(q[2]).u16(x).u16(y);
    if (type == 0xCCC7) {
      body.u8(quality);
      for (int c = 0; c < 3; ++c)
        body.u16(unsigned(data[c].size())).u16(unsigned(raw[c].size()));
      for (int c = 0; c < 3; ++c)
        body.bytes(data[c]).bytes(raw[c]);
    } else {
      body.u8(flags);
      if (type == 0xCCC6)
        body.u8(quality);
      body.u16(unsigned(data[0].size())).u16(unsigned(data[1].size())).u16(unsigned(data[2].size()));
      body.u16(unsigned(tail.size()));
      body.bytes(data[0]).bytes(data[1]).bytes(data[2]).bytes(tail);
    }
    Bytes b;
    b.u16(type).u32(uint32_t(body.size() + 6)).bytes(body);
    return b;
  }
};

struct Region {
  std::vector<std::array<uint16_t, 4>> rects;
  std::vector<Quant> quants{flat(6)};
  std::vector<ProgQuant> progQuants;
  std::vector<Tile> tiles;
  uint8_t flags = 0;
  uint8_t tileSize = 64;
  int numTilesOverride = -1;

  Bytes block() const {
    Bytes tileData;
    for (const Tile& t : tiles)
      tileData.bytes(t.block());
    Bytes body;
    body.u8(tileSize).u16(unsigned(rects.size())).u8(unsigned(quants.size())).u8(unsigned(progQuants.size()));
    body.u8(flags).u16(numTilesOverride >= 0 ? unsigned(numTilesOverride) : unsigned(tiles.size()));
    body.u32(uint32_t(tileData.size()));
    for (const auto& r : rects)
      body.u16(r[0]).u16(r[1]).u16(r[2]).u16(r[3]);
    for (const Quant& q : quants)
      quant(body, q);
    for (const ProgQuant& p : progQuants) {
      body.u8(50);
      for (const Quant& q : p)
        quant(body, q);
    }
    body.bytes(tileData);
    Bytes b;
    b.u16(0xCCC4).u32(uint32_t(body.size() + 6)).bytes(body);
    return b;
  }
};

inline Bytes syncBlock() {
  Bytes b;
  b.u16(0xCCC0).u32(12).u32(0xCACCACCA).u16(0x0100);
  return b;
}
inline Bytes context(uint8_t flags = 0) {
  Bytes b;
  b.u16(0xCCC3).u32(10).u8(0).u16(64).u8(flags);
  return b;
}
inline Bytes frameBegin(uint32_t index = 1, uint16_t regions = 1) {
  Bytes b;
  b.u16(0xCCC1).u32(12).u32(index).u16(regions);
  return b;
}
inline Bytes frameEnd() {
  Bytes b;
  b.u16(0xCCC2).u32(6);
  return b;
}
inline Bytes frame(const std::vector<Region>& regions, bool withSync = true) {
  Bytes b;
  if (withSync)
    b.bytes(syncBlock()).bytes(context());
  b.bytes(frameBegin(1, uint16_t(regions.size())));
  for (const Region& r : regions)
    b.bytes(r.block());
  b.bytes(frameEnd());
  return b;
}

// The first REGION of a stream FreeRDP's encoder wrote (SYNC, CONTEXT, FRAME_BEGIN, REGION of
// SIMPLE tiles, FRAME_END), taken apart.
inline bool parse(std::span<const uint8_t> s, Region& out) {
  gc::front::Wire r(s);
  while (!r.atEnd()) {
    uint16_t type = 0;
    uint32_t len = 0;
    if (!r.u16le(type) || !r.u32le(len) || len < 6)
      return false;
    std::span<const uint8_t> body;
    if (!r.take(len - 6, body))
      return false;
    if (type != 0xCCC4)
      continue;
    gc::front::Wire b(body);
    uint8_t tileSize = 0, numQuant = 0, numProg = 0, flags = 0;
    uint16_t numRects = 0, numTiles = 0;
    uint32_t tileDataSize = 0;
    b.u8(tileSize), b.u16le(numRects), b.u8(numQuant), b.u8(numProg), b.u8(flags), b.u16le(numTiles),
        b.u32le(tileDataSize);
    out = Region();
    out.flags = flags;
    out.quants.clear();
    for (unsigned i = 0; i < numRects; ++i) {
      std::array<uint16_t, 4> rc{};
      b.u16le(rc[0]), b.u16le(rc[1]), b.u16le(rc[2]), b.u16le(rc[3]);
      out.rects.push_back(rc);
    }
    for (unsigned i = 0; i < numQuant; ++i) {
      Quant q{};
      for (int k = 0; k < 5; ++k) {
        uint8_t v = 0;
        b.u8(v);
        q[size_t(2 * k)] = v & 0x0F;
        q[size_t(2 * k + 1)] = v >> 4;
      }
      out.quants.push_back(q);
    }
    if (numProg != 0)
      return false;
    for (unsigned i = 0; i < numTiles; ++i) {
      uint16_t ttype = 0;
      uint32_t tlen = 0;
      b.u16le(ttype), b.u32le(tlen);
      Tile t;
      t.type = ttype;
      uint16_t lens[4] = {};
      b.u8(t.q[0]), b.u8(t.q[1]), b.u8(t.q[2]), b.u16le(t.x), b.u16le(t.y), b.u8(t.flags);
      b.u16le(lens[0]), b.u16le(lens[1]), b.u16le(lens[2]), b.u16le(lens[3]);
      for (int c = 0; c < 3; ++c) {
        std::span<const uint8_t> d;
        if (!b.take(lens[c], d))
          return false;
        t.data[c].assign(d.begin(), d.end());
      }
      b.skip(lens[3]);
      out.tiles.push_back(std::move(t));
    }
    return true;
  }
  return false;
}

} // namespace progtest
