#include "rdp/codec/ProgressiveFront.h"

#include "rdp/front/Wire.h"

#include <algorithm>
#include <array>
#include <utility>

namespace gc::codec {

using front::Checked;
using front::Ok;
using front::Violation;

namespace {

enum : uint16_t {
  kSync = 0xCCC0,
  kFrameBegin = 0xCCC1,
  kFrameEnd = 0xCCC2,
  kContext = 0xCCC3,
  kRegion = 0xCCC4,
  kTileSimple = 0xCCC5,
  kTileFirst = 0xCCC6,
  kTileUpgrade = 0xCCC7,
};
constexpr uint32_t kSyncMagic = 0xCACCACCA;
constexpr uint16_t kSyncVersion = 0x0100;
constexpr uint8_t kTileDifference = 0x01;
constexpr uint8_t kFullQuality = 0xFF;

// Coefficients per band as FreeRDP's upgrade pass walks them, in the order the 4-bit
// quantization values come (LL3, HL3, LH3, HH3, HL2, LH2, HH2, HL1, LH1, HH1).
constexpr uint32_t kUpgradeBandCount[10] = {81, 72, 72, 64, 272, 272, 256, 1023, 1023, 961};
constexpr int kLL3 = 0;

Violation bad(std::string_view rule) {
  return Violation::protocol(ProgressiveFront::kPdu, rule);
}

struct Quant {
  uint8_t v[10];
};

// RFX_COMPONENT_CODEC_QUANT: ten 4-bit values, low nibble first.
bool readQuant(front::Wire& r, Quant& q) {
  for (int i = 0; i < 5; ++i) {
    uint8_t b = 0;
    if (!r.u8(b))
      return false;
    q.v[2 * i] = b & 0x0F;
    q.v[2 * i + 1] = b >> 4;
  }
  return true;
}

} // namespace

class ProgressiveFront::Parser {
public:
  Parser(ProgressiveFront& front, Surface& surface) : m_f(front), m_s(surface) {}

  Checked<Ok> stream(std::span<const uint8_t> bytes, uint32_t& regions) {
    if (bytes.empty())
      return bad("empty stream");
    front::Wire r(bytes);
    bool sync = false, context = false, begun = false, ended = false;
    while (!r.atEnd()) {
      uint16_t type = 0;
      uint32_t length = 0;
      if (!r.u16le(type) || !r.u32le(length))
        return bad("block header cut short");
      if (length < 6)
        return bad("block shorter than its header");
      std::span<const uint8_t> body;
      if (!r.take(uint64_t(length) - 6, body))
        return bad("block runs past the stream");
      if (ended)
        return bad("block after the frame's end");
      front::Wire b(body);
      switch (type) {
      case kSync: {
        uint32_t magic = 0;
        uint16_t version = 0;
        if (length != 12 || !b.u32le(magic) || !b.u16le(version))
          return bad("SYNC block length");
        if (magic != kSyncMagic || version != kSyncVersion)
          return bad("SYNC magic or version");
        if (sync)
          return bad("second SYNC block");
        if (begun)
          return bad("SYNC inside a frame");
        sync = true;
        break;
      }
      case kContext: {
        uint8_t ctxId = 0, flags = 0;
        uint16_t tileSize = 0;
        if (length != 10 || !b.u8(ctxId) || !b.u16le(tileSize) || !b.u8(flags))
          return bad("CONTEXT block length");
        if (tileSize != kTileSide)
          return bad("tile size not 64");
        if (context)
          return bad("second CONTEXT block");
        if (begun)
          return bad("CONTEXT inside a frame");
        context = true;
        break;
      }
      case kFrameBegin:
        if (length != 12)
          return bad("FRAME_BEGIN block length");
        if (begun)
          return bad("second FRAME_BEGIN block");
        begun = true;
        break;
      case kFrameEnd:
        if (length != 6)
          return bad("FRAME_END block length");
        if (!begun)
          return bad("FRAME_END without FRAME_BEGIN");
        ended = true;
        break;
      case kRegion:
        if (!begun)
          return bad("REGION outside a frame");
        if (++regions > kMaxRegions)
          return bad("more than 16 regions");
        if (auto res = region(b); front::isViolation(res))
          return res;
        break;
      case kTileSimple:
      case kTileFirst:
      case kTileUpgrade:
        return bad("tile outside a region");
      default:
        return bad("unknown block type");
      }
    }
    if (begun && !ended)
      return bad("frame not ended");
    return Ok{};
  }

private:
  Checked<Ok> region(front::Wire& r) {
    uint8_t tileSize = 0, numQuant = 0, numProgQuant = 0, flags = 0;
    uint16_t numRects = 0, numTiles = 0;
    uint32_t tileDataSize = 0;
    if (!r.u8(tileSize) || !r.u16le(numRects) || !r.u8(numQuant) || !r.u8(numProgQuant) || !r.u8(flags) ||
        !r.u16le(numTiles) || !r.u32le(tileDataSize))
      return bad("REGION header cut short");
    (void)flags; // RFX_DWT_REDUCE_EXTRAPOLATE selects FreeRDP's DWT; every value is safe
    if (tileSize != kTileSide)
      return bad("tile size not 64");
    if (numRects == 0)
      return bad("REGION without rectangles");
    if (numQuant > 7)
      return bad("more than 7 quantization tables");
    if (numTiles > uint64_t(m_s.gridWidth) * m_s.gridHeight)
      return bad("more tiles than the surface has");
    const uint64_t expected =
        uint64_t(numRects) * 8 + uint64_t(numQuant) * 5 + uint64_t(numProgQuant) * 16 + tileDataSize;
    if (expected != r.remaining())
      return bad("REGION sizes do not match its block");

    m_f.m_regionRects.clear();
    for (uint32_t i = 0; i < numRects; ++i) {
      Rect rc;
      r.u16le(rc.x), r.u16le(rc.y), r.u16le(rc.width), r.u16le(rc.height);
      if (uint32_t(rc.x) + rc.width > m_s.width || uint32_t(rc.y) + rc.height > m_s.height)
        return bad("rectangle outside the surface");
      m_f.m_regionRects.push_back(rc);
    }
    for (uint32_t i = 0; i < numQuant; ++i) {
      readQuant(r, m_quant[i]);
      for (uint8_t v : m_quant[i].v)
        if (v < 6 || v > 15)
          return bad("quantization value outside 6..15");
    }
    m_numProgQuant = numProgQuant;
    for (uint32_t i = 0; i < numProgQuant; ++i) {
      uint8_t quality = 0; // "SHOULD be ignored by the decoder"
      r.u8(quality);
      for (int c = 0; c < 3; ++c)
        readQuant(r, m_progQuant[i][c]);
    }
    m_numQuant = numQuant;

    std::span<const uint8_t> data;
    r.take(tileDataSize, data);
    front::Wire t(data);
    const uint32_t serial = ++m_f.m_regionSerial;
    uint32_t count = 0;
    while (!t.atEnd()) {
      uint16_t type = 0;
      uint32_t length = 0;
      if (!t.u16le(type) || !t.u32le(length))
        return bad("tile block header cut short");
      if (length < 6)
        return bad("block shorter than its header");
      std::span<const uint8_t> body;
      if (!t.take(uint64_t(length) - 6, body))
        return bad("tile block runs past the region");
      front::Wire b(body);
      Checked<Ok> res = Ok{};
      switch (type) {
      case kTileSimple:
      case kTileFirst:
        res = tile(b, type == kTileFirst, serial);
        break;
      case kTileUpgrade:
        res = upgrade(b, serial);
        break;
      default:
        return bad("block inside a region is not a tile");
      }
      if (front::isViolation(res))
        return res;
      ++count;
    }
    if (count != numTiles)
      return bad("tile count does not match numTiles");
    // What FreeRDP clips with once the stream is through (committed by check()).
    m_f.m_pendingRects.swap(m_f.m_regionRects);
    m_f.m_havePending = true;
    return Ok{};
  }

  // The tile's grid slot, after the checks every tile kind shares.
  Checked<size_t> slot(uint8_t qy, uint8_t qcb, uint8_t qcr, uint16_t xIdx, uint16_t yIdx, uint8_t quality,
                       uint32_t serial) {
    if (qy >= m_numQuant || qcb >= m_numQuant || qcr >= m_numQuant)
      return bad("quantization index out of range");
    if (quality != kFullQuality && quality >= m_numProgQuant)
      return bad("quality index out of range");
    if (xIdx >= m_s.gridWidth || yIdx >= m_s.gridHeight)
      return bad("tile outside the surface");
    const size_t index = size_t(yIdx) * m_s.gridWidth + xIdx;
    TileState& st = m_s.tiles[index];
    if (st.region == serial)
      return bad("tile twice in one region");
    m_f.m_undo.emplace_back(index, st);
    st.region = serial;
    return index;
  }

  // The bit positions a pass leaves: quantization plus progressive quantization, per band.
  void bitPositions(const uint8_t q[3], uint8_t quality, uint8_t out[3][10]) const {
    for (int c = 0; c < 3; ++c)
      for (int b = 0; b < 10; ++b)
        out[c][b] =
            uint8_t(m_quant[q[c]].v[b] + (quality == kFullQuality ? 0 : m_progQuant[quality][c].v[b]));
  }

  Checked<Ok> tile(front::Wire& r, bool first, uint32_t serial) {
    uint8_t q[3] = {}, flags = 0, quality = kFullQuality;
    uint16_t xIdx = 0, yIdx = 0, yLen = 0, cbLen = 0, crLen = 0, tailLen = 0;
    if (!r.u8(q[0]) || !r.u8(q[1]) || !r.u8(q[2]) || !r.u16le(xIdx) || !r.u16le(yIdx) || !r.u8(flags) ||
        (first && !r.u8(quality)) || !r.u16le(yLen) || !r.u16le(cbLen) || !r.u16le(crLen) ||
        !r.u16le(tailLen))
      return bad("tile header cut short");
    if (uint64_t(yLen) + cbLen + crLen + tailLen != r.remaining())
      return bad("tile lengths do not match its block");
    if (yLen == 0 || cbLen == 0 || crLen == 0)
      return bad("empty RLGR component");
    if (flags & ~kTileDifference)
      return bad("unknown tile flags");
    const auto index = slot(q[0], q[1], q[2], xIdx, yIdx, quality, serial);
    if (const auto* v = std::get_if<Violation>(&index))
      return *v;
    TileState& st = m_s.tiles[std::get<size_t>(index)];
    if ((flags & kTileDifference) && !st.decoded)
      return bad("tile difference on a tile never decoded");
    bitPositions(q, quality, st.bitPos);
    st.decoded = 1;
    m_f.m_tiles.push_back({xIdx, yIdx, first ? TileKind::First : TileKind::Simple, quality});
    return Ok{};
  }

  Checked<Ok> upgrade(front::Wire& r, uint32_t serial) {
    uint8_t q[3] = {}, quality = 0;
    uint16_t xIdx = 0, yIdx = 0;
    uint16_t srl[3] = {}, raw[3] = {};
    if (!r.u8(q[0]) || !r.u8(q[1]) || !r.u8(q[2]) || !r.u16le(xIdx) || !r.u16le(yIdx) || !r.u8(quality) ||
        !r.u16le(srl[0]) || !r.u16le(raw[0]) || !r.u16le(srl[1]) || !r.u16le(raw[1]) || !r.u16le(srl[2]) ||
        !r.u16le(raw[2]))
      return bad("tile header cut short");
    if (uint64_t(srl[0]) + raw[0] + srl[1] + raw[1] + srl[2] + raw[2] != r.remaining())
      return bad("tile lengths do not match its block");
    const auto index = slot(q[0], q[1], q[2], xIdx, yIdx, quality, serial);
    if (const auto* v = std::get_if<Violation>(&index))
      return *v;
    TileState& st = m_s.tiles[std::get<size_t>(index)];
    if (!st.decoded)
      return bad("upgrade of a tile never decoded");
    uint8_t next[3][10];
    bitPositions(q, quality, next);
    for (int c = 0; c < 3; ++c) {
      uint64_t minBits = 0, maxBits = 0;
      for (int b = 0; b < 10; ++b) {
        if (next[c][b] > st.bitPos[c][b])
          return bad("upgrade lowers the quality");
        const uint32_t bits = st.bitPos[c][b] - next[c][b];
        if (bits > kMaxUpgradeBits)
          return bad("upgrade of more than 15 bits");
        maxBits += uint64_t(kUpgradeBandCount[b]) * bits;
        if (b == kLL3)
          minBits += uint64_t(kUpgradeBandCount[b]) * bits; // LL3 is read raw, all of it
      }
      if (raw[c] < (minBits + 7) / 8 || raw[c] > (maxBits + 7) / 8)
        return bad("raw length outside what the upgrade reads");
    }
    std::copy(&next[0][0], &next[0][0] + 30, &st.bitPos[0][0]);
    m_f.m_tiles.push_back({xIdx, yIdx, TileKind::Upgrade, quality});
    return Ok{};
  }

  ProgressiveFront& m_f;
  Surface& m_s;
  Quant m_quant[7] = {};
  std::array<Quant, 3> m_progQuant[255] = {};
  uint32_t m_numQuant = 0;
  uint32_t m_numProgQuant = 0;
};

ProgressiveFront::ProgressiveFront(const front::Limits& limits) : m_limits(limits) {}

ProgressiveFront::~ProgressiveFront() = default;

ProgressiveFront::Surface* ProgressiveFront::find(uint16_t surfaceId) {
  for (Surface& s : m_surfaces)
    if (s.id == surfaceId)
      return &s;
  return nullptr;
}

Checked<Ok> ProgressiveFront::createSurface(uint16_t surfaceId, uint32_t width, uint32_t height) {
  if (Surface* s = find(surfaceId)) {
    if (s->width == width && s->height == height)
      return Ok{};
    return bad("surface context of another size");
  }
  if (width < 1 || height < 1 || width > front::Limits::kMaxSide || height > front::Limits::kMaxSide)
    return Violation::resource(kPdu, "surface size out of range");
  if (m_surfaces.size() >= m_limits.maxSurfaces)
    return Violation::resource(kPdu, "more surface contexts than surfaces allowed");
  uint64_t pixels = uint64_t(width) * height;
  for (const Surface& s : m_surfaces)
    pixels += uint64_t(s.width) * s.height;
  if (pixels * 4 > m_limits.pixelBudgetBytes())
    return Violation::resource(kPdu, "surface contexts beyond the pixel budget");
  Surface s;
  s.id = surfaceId;
  s.width = width;
  s.height = height;
  s.gridWidth = (width + kTileSide - 1) / kTileSide;
  s.gridHeight = (height + kTileSide - 1) / kTileSide;
  s.tiles.assign(size_t(s.gridWidth) * s.gridHeight, TileState{});
  m_surfaces.push_back(std::move(s));
  return Ok{};
}

void ProgressiveFront::deleteSurface(uint16_t surfaceId) {
  std::erase_if(m_surfaces, [&](const Surface& s) { return s.id == surfaceId; });
}

void ProgressiveFront::reset() {
  m_surfaces.clear();
  m_lastRects.clear();
}

Checked<ProgressiveFront::Update> ProgressiveFront::check(uint16_t surfaceId,
                                                          std::span<const uint8_t> stream) {
  Surface* s = find(surfaceId);
  if (!s)
    return bad("no surface context for the surface");
  m_tiles.clear();
  m_undo.clear();
  m_havePending = false;
  uint32_t regions = 0;
  Parser parser(*this, *s);
  if (auto res = parser.stream(stream, regions); front::isViolation(res)) {
    for (auto it = m_undo.rbegin(); it != m_undo.rend(); ++it)
      s->tiles[it->first] = it->second;
    m_tiles.clear();
    return std::get<Violation>(res);
  }
  if (m_havePending)
    m_lastRects.swap(m_pendingRects);
  m_clip.clear();
  for (Rect r : m_lastRects) {
    // Remembered rectangles may come from another surface: clip them to this one.
    const uint32_t right = std::min<uint32_t>(uint32_t(r.x) + r.width, s->width);
    const uint32_t bottom = std::min<uint32_t>(uint32_t(r.y) + r.height, s->height);
    if (r.x < right && r.y < bottom)
      m_clip.push_back({r.x, r.y, uint16_t(right - r.x), uint16_t(bottom - r.y)});
  }
  Update u;
  u.clip = m_clip;
  u.tiles = m_tiles;
  u.regions = regions;
  return u;
}

} // namespace gc::codec
