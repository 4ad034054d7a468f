#include "rdp/codec/ProgressiveDecoder.h"

#include "privacy/SecureZero.h"
#include "rdp/codec/ProgressiveUpgrade.h"
#include "rdp/codec/RfxColor.h"
#include "rdp/codec/RfxDwt.h"
#include "rdp/codec/Rlgr.h"
#include "rdp/front/Wire.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <new>

namespace gc::codec {

using front::Checked;
using front::Ok;
using front::Violation;
using Q = ProgressiveQuant;

namespace {

constexpr front::ProtocolRules bad{ProgressiveDecoder::kPdu};

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
constexpr uint8_t kReduceExtrapolate = 0x01;
constexpr size_t kN = RfxDwt::kCoefficients;
constexpr uint32_t kMaxQuantTables = 7;

int16_t saturatingAdd(int16_t a, int16_t b) {
  return int16_t(std::clamp(int32_t(a) + int32_t(b), int32_t(INT16_MIN), int32_t(INT16_MAX)));
}

} // namespace

// A tile whose last replacing pass (SIMPLE or FIRST, no difference) nothing has built on yet
// keeps only that pass's RLGR1 bytes: its coefficients follow from them whenever they are
// needed (to draw it, or for an upgrade or a difference to build on), by the same decode. A
// tile a later pass built on has its coefficients and signs (State); once it has one, it keeps
// that block for the next time (a desktop that refines its tiles reuses it frame after frame). A
// desktop that never refines a tile (freerdp-shadow-cli3 sends SIMPLE tiles only) so holds a few
// KiB a tile, not the 36 KiB of a State.
struct ProgressiveDecoder::Tile {
  struct State {
    int16_t current[3][kN];
    int8_t sign[3][kN];
    ~State() { secureZero(this, sizeof(*this)); }
  };
  std::unique_ptr<State> state;      // current unless `fromSource`
  bool fromSource = false;           // the coefficients are the ones `source` decodes to
  std::unique_ptr<uint8_t[]> source; // Y, Cb, Cr bytes, back to back
  size_t sourceCapacity = 0;
  uint32_t length[3] = {};
  Q::Values bitPos[3];
  bool extrapolate = false;

  std::span<const uint8_t> part(size_t c) const {
    const size_t offset = c == 0 ? 0 : c == 1 ? length[0] : size_t(length[0]) + length[1];
    return {source.get() + offset, length[c]};
  }
  bool keepSource(const std::span<const uint8_t> (&data)[3]) {
    const size_t total = data[0].size() + data[1].size() + data[2].size();
    if (total > sourceCapacity) {
      dropSource();
      source.reset(new (std::nothrow) uint8_t[total]);
      if (!source)
        return false;
      sourceCapacity = total;
    }
    size_t at = 0;
    for (size_t c = 0; c < 3; ++c) {
      std::memcpy(source.get() + at, data[c].data(), data[c].size());
      length[c] = uint32_t(data[c].size());
      at += data[c].size();
    }
    secureZero(source.get() + at, sourceCapacity - at); // what a longer earlier pass left
    fromSource = true;
    return true;
  }
  void dropSource() {
    if (source)
      secureZero(source.get(), sourceCapacity);
    source.reset();
    sourceCapacity = 0;
    length[0] = length[1] = length[2] = 0;
  }
  // The coefficients of component `c` as the last replacing pass left them, into `out`;
  // `sign` (if given) receives their signs.
  void decodeSource(size_t c, int16_t* out, int8_t* sign) const {
    Rlgr::decode(Rlgr::Mode::Rlgr1, part(c), std::span<int16_t>(out, kN));
    if (sign)
      for (size_t i = 0; i < kN; ++i)
        sign[i] = int8_t(out[i] > 0 ? 1 : out[i] < 0 ? -1 : 0);
    Q::dequantize(out, bitPos[c], extrapolate);
  }
  // The State a pass builds on, decoded from the source if that is where the coefficients are.
  bool materialise() {
    if (!fromSource)
      return true;
    if (!state)
      state.reset(new (std::nothrow) State);
    if (!state)
      return false;
    for (size_t c = 0; c < 3; ++c)
      decodeSource(c, state->current[c], state->sign[c]);
    fromSource = false;
    return true;
  }

  ~Tile() { dropSource(); }
};

struct ProgressiveDecoder::Surface {
  uint16_t id = 0;
  uint32_t width = 0;
  uint32_t height = 0;
  uint32_t gridWidth = 0;
  uint32_t gridHeight = 0;
  std::vector<std::unique_ptr<Tile>> tiles; // grid slots; empty until a first pass
  // Per slot, while a stream is checked: the serial of that stream and its last job for the
  // slot (the state the next job there builds on).
  std::vector<std::pair<uint32_t, uint32_t>> pending;
  uint32_t serial = 0;
};

struct ProgressiveDecoder::Job {
  uint32_t index = 0;
  bool upgrade = false;
  bool difference = false;
  bool extrapolate = false;
  Q::Values bitPos[3] = {};
  Q::Values numBits[3] = {};
  Q::Values shift[3] = {};
  std::span<const uint8_t> data[3]; // RLGR1 (first pass) or SRL (upgrade)
  std::span<const uint8_t> raw[3];  // upgrade only
};

// Reads and checks the whole stream into jobs, without touching a tile.
class ProgressiveDecoder::Parser {
public:
  Parser(ProgressiveDecoder& d, Surface& s) : m_d(d), m_s(s) {}

  Checked<Ok> stream(std::span<const uint8_t> bytes, bool& haveRegion) {
    if (bytes.empty())
      return bad("empty stream");
    front::Wire r(bytes);
    bool sync = false, context = false, begun = false, ended = false;
    uint32_t regions = 0;
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
        if (body.size() != 6 || !b.u32le(magic) || !b.u16le(version))
          return bad("SYNC block length");
        if (magic != kSyncMagic || version != kSyncVersion)
          return bad("SYNC magic or version");
        if (sync || begun)
          return bad("SYNC out of place");
        sync = true;
        break;
      }
      case kContext: {
        uint8_t ctxId = 0, flags = 0;
        uint16_t tileSize = 0;
        if (body.size() != 4 || !b.u8(ctxId) || !b.u16le(tileSize) || !b.u8(flags))
          return bad("CONTEXT block length");
        if (tileSize != kTileSide)
          return bad("tile size not 64");
        if (context || begun)
          return bad("CONTEXT out of place");
        context = true;
        break;
      }
      case kFrameBegin:
        if (body.size() != 6)
          return bad("FRAME_BEGIN block length");
        if (begun)
          return bad("second FRAME_BEGIN block");
        begun = true;
        break;
      case kFrameEnd:
        if (!body.empty())
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
        haveRegion = true;
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

  size_t newTiles() const { return m_newTiles; }

private:
  Checked<Ok> region(front::Wire& r) {
    uint8_t tileSize = 0, numQuant = 0, numProgQuant = 0, flags = 0;
    uint16_t numRects = 0, numTiles = 0;
    uint32_t tileDataSize = 0;
    if (!r.u8(tileSize) || !r.u16le(numRects) || !r.u8(numQuant) || !r.u8(numProgQuant) || !r.u8(flags) ||
        !r.u16le(numTiles) || !r.u32le(tileDataSize))
      return bad("REGION header cut short");
    if (tileSize != kTileSide)
      return bad("tile size not 64");
    if (numRects == 0)
      return bad("REGION without rectangles");
    if (numQuant > kMaxQuantTables)
      return bad("more than 7 quantization tables");
    const uint64_t expected =
        uint64_t(numRects) * 8 + uint64_t(numQuant) * 5 + uint64_t(numProgQuant) * 16 + tileDataSize;
    if (expected != r.remaining())
      return bad("REGION sizes do not match its block");
    m_d.m_rects.clear();
    for (uint32_t i = 0; i < numRects; ++i) {
      uint16_t x = 0, y = 0, w = 0, h = 0;
      r.u16le(x), r.u16le(y), r.u16le(w), r.u16le(h);
      if (uint32_t(x) + w > m_s.width || uint32_t(y) + h > m_s.height)
        return bad("rectangle outside the surface");
      if (w > 0 && h > 0)
        m_d.m_rects.push_back({x, y, w, h});
    }
    m_numQuant = numQuant;
    for (uint32_t i = 0; i < numQuant; ++i) {
      Q::read(r, m_quant[i]);
      if (!Q::inRange(m_quant[i]))
        return bad("quantization value outside 6..15");
    }
    m_numProgQuant = numProgQuant;
    for (uint32_t i = 0; i < numProgQuant; ++i) {
      uint8_t quality = 0; // "SHOULD be ignored by the decoder"
      r.u8(quality);
      for (int c = 0; c < 3; ++c)
        Q::read(r, m_progQuant[i][size_t(c)]);
    }
    m_extrapolate = (flags & kReduceExtrapolate) != 0;

    std::span<const uint8_t> data;
    r.take(tileDataSize, data);
    front::Wire t(data);
    uint32_t count = 0;
    const uint32_t firstJob = uint32_t(m_d.m_jobs.size());
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
      if (++count > numTiles)
        return bad("tile count does not match numTiles");
      front::Wire b(body);
      Checked<Ok> res = Ok{};
      switch (type) {
      case kTileSimple:
      case kTileFirst:
        res = first(b, type == kTileFirst, firstJob);
        break;
      case kTileUpgrade:
        res = upgrade(b, firstJob);
        break;
      default:
        return bad("block inside a region is not a tile");
      }
      if (front::isViolation(res))
        return res;
    }
    if (count != numTiles)
      return bad("tile count does not match numTiles");
    return Ok{};
  }

  // The bit positions a pass leaves, after the index checks every tile kind shares.
  Checked<Ok> positions(const uint8_t q[3], uint8_t quality, Q::Values out[3]) const {
    if (q[0] >= m_numQuant || q[1] >= m_numQuant || q[2] >= m_numQuant)
      return bad("quantization index out of range");
    if (quality != Q::kFullQuality && quality >= m_numProgQuant)
      return bad("quality index out of range");
    for (size_t c = 0; c < 3; ++c)
      out[c] =
          Q::bitPositions(m_quant[q[c]], quality == Q::kFullQuality ? Q::Values{} : m_progQuant[quality][c]);
    return Ok{};
  }

  // The grid slot, and the job before this one for it in the stream (or none).
  Checked<size_t> slot(uint16_t xIdx, uint16_t yIdx, uint32_t firstJob, const Job*& previous) {
    if (xIdx >= m_s.gridWidth || yIdx >= m_s.gridHeight)
      return bad("tile outside the surface");
    const size_t index = size_t(yIdx) * m_s.gridWidth + xIdx;
    const auto& p = m_s.pending[index];
    previous = p.first == m_s.serial ? &m_d.m_jobs[p.second] : nullptr;
    if (previous && p.second >= firstJob)
      return bad("tile twice in one region");
    return index;
  }

  void record(Job&& job) {
    m_s.pending[job.index] = {m_s.serial, uint32_t(m_d.m_jobs.size())};
    m_d.m_jobs.push_back(std::move(job));
  }

  Checked<Ok> first(front::Wire& r, bool withQuality, uint32_t firstJob) {
    uint8_t q[3] = {}, flags = 0, quality = Q::kFullQuality;
    uint16_t xIdx = 0, yIdx = 0, len[3] = {}, tailLen = 0;
    if (!r.u8(q[0]) || !r.u8(q[1]) || !r.u8(q[2]) || !r.u16le(xIdx) || !r.u16le(yIdx) || !r.u8(flags) ||
        (withQuality && !r.u8(quality)) || !r.u16le(len[0]) || !r.u16le(len[1]) || !r.u16le(len[2]) ||
        !r.u16le(tailLen))
      return bad("tile header cut short");
    if (uint64_t(len[0]) + len[1] + len[2] + tailLen != r.remaining())
      return bad("tile lengths do not match its block");
    if (len[0] == 0 || len[1] == 0 || len[2] == 0)
      return bad("empty RLGR component");
    if (flags & ~kTileDifference)
      return bad("unknown tile flags");
    Job job;
    if (auto res = positions(q, quality, job.bitPos); front::isViolation(res))
      return res;
    const Job* previous = nullptr;
    const auto index = slot(xIdx, yIdx, firstJob, previous);
    if (const auto* v = std::get_if<Violation>(&index))
      return *v;
    job.index = uint32_t(std::get<size_t>(index));
    const bool decoded = previous || m_s.tiles[job.index];
    job.difference = (flags & kTileDifference) != 0;
    if (job.difference && !decoded)
      return bad("tile difference on a tile never decoded");
    if (!decoded)
      ++m_newTiles;
    job.extrapolate = m_extrapolate;
    for (size_t c = 0; c < 3; ++c)
      r.take(len[c], job.data[c]);
    record(std::move(job));
    return Ok{};
  }

  Checked<Ok> upgrade(front::Wire& r, uint32_t firstJob) {
    uint8_t q[3] = {}, quality = 0;
    uint16_t xIdx = 0, yIdx = 0, srl[3] = {}, raw[3] = {};
    if (!r.u8(q[0]) || !r.u8(q[1]) || !r.u8(q[2]) || !r.u16le(xIdx) || !r.u16le(yIdx) || !r.u8(quality) ||
        !r.u16le(srl[0]) || !r.u16le(raw[0]) || !r.u16le(srl[1]) || !r.u16le(raw[1]) || !r.u16le(srl[2]) ||
        !r.u16le(raw[2]))
      return bad("tile header cut short");
    if (uint64_t(srl[0]) + raw[0] + srl[1] + raw[1] + srl[2] + raw[2] != r.remaining())
      return bad("tile lengths do not match its block");
    Job job;
    job.upgrade = true;
    if (auto res = positions(q, quality, job.bitPos); front::isViolation(res))
      return res;
    const Job* previous = nullptr;
    const auto index = slot(xIdx, yIdx, firstJob, previous);
    if (const auto* v = std::get_if<Violation>(&index))
      return *v;
    job.index = uint32_t(std::get<size_t>(index));
    const Tile* tile = m_s.tiles[job.index].get();
    if (!previous && !tile)
      return bad("upgrade of a tile never decoded");
    const Q::Values* before = previous ? previous->bitPos : tile->bitPos;
    for (size_t c = 0; c < 3; ++c) {
      uint64_t minBits = 0, maxBits = 0;
      for (size_t b = 0; b < Q::kBands; ++b) {
        if (job.bitPos[c][b] > before[c][b])
          return bad("upgrade raises a bit position");
        const uint32_t bits = uint32_t(before[c][b] - job.bitPos[c][b]);
        if (bits > kMaxUpgradeBits)
          return bad("upgrade of more than 15 bits");
        job.numBits[c][b] = uint8_t(bits);
        job.shift[c][b] = uint8_t(job.bitPos[c][b] - 1);
        const uint64_t all = uint64_t(Q::extrapolateCount(Q::Band(b))) * bits;
        maxBits += all;
        if (b == Q::LL3)
          minBits += all; // LL3 is all RAW
      }
      if (raw[c] < (minBits + 7) / 8 || raw[c] > (maxBits + 7) / 8)
        return bad("raw length outside what the upgrade's bit planes take");
    }
    job.extrapolate = m_extrapolate;
    for (size_t c = 0; c < 3; ++c) {
      r.take(srl[c], job.data[c]);
      r.take(raw[c], job.raw[c]);
    }
    record(std::move(job));
    return Ok{};
  }

  ProgressiveDecoder& m_d;
  Surface& m_s;
  Q::Values m_quant[kMaxQuantTables] = {};
  std::array<Q::Values, 3> m_progQuant[255] = {};
  uint32_t m_numQuant = 0;
  uint32_t m_numProgQuant = 0;
  bool m_extrapolate = false;
  size_t m_newTiles = 0;
};

ProgressiveDecoder::ProgressiveDecoder(const front::Limits& limits) : m_limits(limits) {}

ProgressiveDecoder::~ProgressiveDecoder() {
  reset();
  if (m_scratch)
    secureZero(m_scratch.get(), sizeof(int16_t) * kN * 4);
  if (m_signScratch)
    secureZero(m_signScratch.get(), kN * 3);
}

ProgressiveDecoder::Surface* ProgressiveDecoder::find(uint16_t surfaceId) {
  for (auto& s : m_surfaces)
    if (s->id == surfaceId)
      return s.get();
  return nullptr;
}

Checked<Ok> ProgressiveDecoder::createSurface(uint16_t surfaceId, uint32_t width, uint32_t height) {
  if (Surface* s = find(surfaceId)) {
    if (s->width == width && s->height == height)
      return Ok{};
    return bad("surface context of another size");
  }
  if (width < 1 || height < 1 || width > front::Limits::kMaxSide || height > front::Limits::kMaxSide)
    return Violation::resource(kPdu, "surface size out of range");
  if (m_surfaces.size() >= m_limits.maxSurfaces)
    return Violation::resource(kPdu, "more surface contexts than surfaces allowed");
  auto s = std::make_unique<Surface>();
  s->id = surfaceId;
  s->width = width;
  s->height = height;
  s->gridWidth = (width + kTileSide - 1) / kTileSide;
  s->gridHeight = (height + kTileSide - 1) / kTileSide;
  const size_t grid = size_t(s->gridWidth) * s->gridHeight;
  s->tiles.resize(grid);
  s->pending.assign(grid, {0, 0});
  m_surfaces.push_back(std::move(s));
  return Ok{};
}

void ProgressiveDecoder::deleteSurface(uint16_t surfaceId) {
  for (auto it = m_surfaces.begin(); it != m_surfaces.end(); ++it) {
    if ((*it)->id != surfaceId)
      continue;
    for (const auto& t : (*it)->tiles)
      m_tileCount -= t ? 1 : 0;
    m_surfaces.erase(it); // each Tile wipes itself
    return;
  }
}

size_t ProgressiveDecoder::bytesHeld() const {
  size_t bytes = 0;
  for (const auto& s : m_surfaces)
    for (const auto& t : s->tiles)
      if (t)
        bytes += sizeof(Tile) + t->sourceCapacity + (t->state ? sizeof(Tile::State) : 0);
  return bytes;
}

void ProgressiveDecoder::reset() {
  m_surfaces.clear();
  m_tileCount = 0;
  m_jobs.clear();
}

void ProgressiveDecoder::render(const Surface& s, size_t index, const Pixels& out, bool keepX,
                                std::vector<Rect>& touched) {
  const uint32_t tx = uint32_t(index % s.gridWidth) * kTileSide;
  const uint32_t ty = uint32_t(index / s.gridWidth) * kTileSide;
  bool any = false;
  for (const Rect& r : m_rects)
    any = any || (r.x < tx + kTileSide && tx < r.x + r.width && r.y < ty + kTileSide && ty < r.y + r.height);
  if (!any)
    return;
  const Tile& tile = *s.tiles[index];
  int16_t* temp = m_scratch.get() + 3 * kN;
  for (size_t c = 0; c < 3; ++c) {
    int16_t* buf = m_scratch.get() + c * kN;
    if (tile.fromSource)
      tile.decodeSource(c, buf, nullptr);
    else
      std::memcpy(buf, tile.state->current[c], sizeof(int16_t) * kN);
    if (tile.extrapolate)
      RfxDwt::inverseExtrapolate(buf, temp);
    else
      RfxDwt::inverseClassic(buf, temp);
  }
  // Each rectangle's part of the tile goes from the planes straight into the output (the planes
  // are 64 samples a row, so the part's top-left sample is its offset into them).
  const int16_t* planes = m_scratch.get();
  for (const Rect& r : m_rects) {
    const uint32_t left = std::max(r.x, tx), top = std::max(r.y, ty);
    const uint32_t right = std::min({r.x + r.width, tx + kTileSide, out.width});
    const uint32_t bottom = std::min({r.y + r.height, ty + kTileSide, out.height});
    if (left >= right || top >= bottom)
      continue;
    const size_t offset = size_t(top - ty) * kTileSide + (left - tx);
    RfxColor::toBgrx(planes + offset, planes + kN + offset, planes + 2 * kN + offset, out.at(left, top),
                     out.stride, right - left, bottom - top, keepX);
    touched.push_back({left, top, right - left, bottom - top});
  }
}

Checked<Ok> ProgressiveDecoder::decode(uint16_t surfaceId, std::span<const uint8_t> stream, const Pixels& out,
                                       bool keepX, std::vector<Rect>& touched) {
  touched.clear();
  Surface* s = find(surfaceId);
  if (!s)
    return bad("no surface context for the surface");
  if (!out.valid() || out.width != s->width || out.height != s->height)
    return Violation::resource(kPdu, "pixels are not the surface's");
  m_jobs.clear();
  m_rects.clear();
  if (++s->serial == 0) { // the stamps wrapped: forget them all
    std::fill(s->pending.begin(), s->pending.end(), std::pair<uint32_t, uint32_t>{0, 0});
    s->serial = 1;
  }
  bool haveRegion = false;
  Parser parser(*this, *s);
  if (auto res = parser.stream(stream, haveRegion); front::isViolation(res)) {
    m_jobs.clear();
    return res;
  }
  if (!haveRegion)
    m_rects.clear();
  if (parser.newTiles() > 0) {
    const uint64_t bytes = uint64_t(m_tileCount + parser.newTiles()) * kTileBytes;
    if (bytes > m_limits.pixelBudgetBytes())
      return Violation::resource(kPdu, "tile state beyond the pixel budget");
  }
  if (!m_scratch) {
    m_scratch.reset(new (std::nothrow) int16_t[kN * 4]);
    m_signScratch.reset(new (std::nothrow) int8_t[kN * 3]);
    if (!m_scratch || !m_signScratch)
      return Violation::resource(kPdu, "storage could not be allocated");
  }

  for (const Job& job : m_jobs) {
    std::unique_ptr<Tile>& slot = s->tiles[job.index];
    if (!slot) {
      slot.reset(new (std::nothrow) Tile);
      if (!slot)
        return Violation::resource(kPdu, "storage could not be allocated");
      ++m_tileCount;
    }
    Tile& tile = *slot;
    if (!job.upgrade && !job.difference) {
      // A pass that replaces the tile: nothing to build on, nothing decoded until it is drawn.
      if (!tile.keepSource(job.data))
        return Violation::resource(kPdu, "storage could not be allocated");
    } else if (!tile.materialise()) {
      return Violation::resource(kPdu, "storage could not be allocated");
    } else if (job.upgrade) {
      Tile::State& st = *tile.state;
      int16_t* current = m_scratch.get();
      int8_t* sign = m_signScratch.get();
      for (size_t c = 0; c < 3; ++c) {
        std::memcpy(current + c * kN, st.current[c], sizeof(int16_t) * kN);
        std::memcpy(sign + c * kN, st.sign[c], kN);
        if (!ProgressiveUpgrade::apply(job.data[c], job.raw[c], job.shift[c], job.numBits[c],
                                       current + c * kN, sign + c * kN))
          return bad("upgrade bit streams do not end with their bits");
      }
      for (size_t c = 0; c < 3; ++c) {
        std::memcpy(st.current[c], current + c * kN, sizeof(int16_t) * kN);
        std::memcpy(st.sign[c], sign + c * kN, kN);
      }
    } else {
      Tile::State& st = *tile.state;
      for (size_t c = 0; c < 3; ++c) {
        // A difference adds to the tile's coefficients.
        int16_t* buf = m_scratch.get();
        Rlgr::decode(Rlgr::Mode::Rlgr1, job.data[c], std::span<int16_t>(buf, kN));
        for (size_t i = 0; i < kN; ++i)
          st.sign[c][i] = int8_t(buf[i] > 0 ? 1 : buf[i] < 0 ? -1 : 0);
        Q::dequantize(buf, job.bitPos[c], job.extrapolate);
        for (size_t i = 0; i < kN; ++i)
          st.current[c][i] = saturatingAdd(buf[i], st.current[c][i]);
      }
    }
    std::copy(job.bitPos, job.bitPos + 3, tile.bitPos);
    tile.extrapolate = job.extrapolate;
  }

  for (size_t j = 0; j < m_jobs.size(); ++j)
    if (s->pending[m_jobs[j].index].second == j) // the tile's last pass in the stream
      render(*s, m_jobs[j].index, out, keepX, touched);
  m_jobs.clear();
  return Ok{};
}

} // namespace gc::codec
