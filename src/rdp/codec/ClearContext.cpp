#include "rdp/codec/ClearContext.h"

#include "privacy/SecureZero.h"
#include "rdp/codec/NscDecoder.h"
#include "rdp/front/Wire.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace gc::codec {

namespace {

constexpr uint8_t kGlyphIndex = 0x01; // glyphIndex follows
constexpr uint8_t kGlyphHit = 0x02;   // the bitmap is the stored glyph; no composite payload
constexpr uint8_t kCacheReset = 0x04; // the V-bar cursors restart at 0

constexpr front::ProtocolRules bad{ClearContext::kPdu};

constexpr size_t kVBarBytes = ClearContext::kMaxVBarHeight * ClearContext::kStoredBytesPerPixel;
constexpr size_t kGlyphBytes = ClearContext::kMaxGlyphPixels * ClearContext::kStoredBytesPerPixel;

inline void putPixel(uint8_t* d, uint8_t b, uint8_t g, uint8_t r) {
  d[0] = b;
  d[1] = g;
  d[2] = r;
  d[3] = 0xFF;
}

// Writes pixels in row-major order over the whole of `out`; callers check counts first.
class PixelCursor {
public:
  explicit PixelCursor(const Pixels& out) : m_out(out) {}
  void put(uint8_t b, uint8_t g, uint8_t r, uint64_t count) {
    while (count > 0) {
      const uint64_t n = count < uint64_t(m_out.width - m_x) ? count : uint64_t(m_out.width - m_x);
      uint8_t* d = m_out.at(m_x, m_y);
      for (uint64_t i = 0; i < n; ++i, d += 4)
        putPixel(d, b, g, r);
      m_x += uint32_t(n);
      count -= n;
      if (m_x == m_out.width) {
        m_x = 0;
        ++m_y;
      }
    }
  }

private:
  const Pixels& m_out;
  uint32_t m_x = 0;
  uint32_t m_y = 0;
};

// A run length as ClearCodec writes it (residual, RLEX): one byte, or 0xFF and 16 bits, or
// 0xFF, 0xFFFF and 32 bits.
bool runLength(front::Wire& r, uint32_t& run) {
  uint8_t b = 0;
  if (!r.u8(b))
    return false;
  run = b;
  if (b < 0xFF)
    return true;
  uint16_t w = 0;
  if (!r.u16le(w))
    return false;
  run = w;
  if (w < 0xFFFF)
    return true;
  return r.u32le(run);
}

// CLEARCODEC_SUBCODEC_RLEX (MS-RDPEGFX 2.2.4.1.1.3.1.1): a palette of up to 127 colours, then
// segments of a run of one palette entry followed by a suite of consecutive entries.
Checked<Ok> rlex(std::span<const uint8_t> bytes, const Pixels& out) {
  front::Wire r(bytes);
  uint8_t paletteCount = 0;
  if (!r.u8(paletteCount) || paletteCount < 1 || paletteCount > 127)
    return bad("RLEX palette size out of range");
  uint8_t palette[127][3] = {};
  for (unsigned i = 0; i < paletteCount; ++i)
    if (!r.u8(palette[i][0]) || !r.u8(palette[i][1]) || !r.u8(palette[i][2]))
      return bad("RLEX palette cut short");
  // Bits of the stop index: floor(log2(paletteCount - 1)) + 1 (one bit for one entry).
  unsigned stopBits = 1;
  while (stopBits < 7 && (1u << stopBits) < paletteCount)
    ++stopBits;
  const uint64_t total = uint64_t(out.width) * out.height;
  uint64_t done = 0;
  PixelCursor cursor(out);
  while (!r.atEnd()) {
    uint8_t packed = 0;
    uint32_t run = 0;
    if (!r.u8(packed) || !runLength(r, run))
      return bad("RLEX segment cut short");
    const unsigned stopIndex = packed & ((1u << stopBits) - 1);
    const unsigned suiteDepth = packed >> stopBits;
    if (stopIndex >= paletteCount)
      return bad("RLEX palette index out of range");
    if (suiteDepth > stopIndex)
      return bad("RLEX suite starts before the palette");
    const unsigned startIndex = stopIndex - suiteDepth;
    if (run > total - done || suiteDepth + 1 > total - done - run)
      return bad("RLEX runs past its rectangle");
    const uint8_t* c = palette[startIndex];
    cursor.put(c[0], c[1], c[2], run);
    for (unsigned i = startIndex; i <= stopIndex; ++i)
      cursor.put(palette[i][0], palette[i][1], palette[i][2], 1);
    done += run + suiteDepth + 1;
  }
  if (done != total)
    return bad("RLEX does not cover its rectangle");
  return Ok{};
}

} // namespace

// Every slot is fixed-size and lives in a block of slots allocated when one of them is first
// written (so what is resident follows what the guest stored, whatever the allocator does
// with one large request); a slot of a block never allocated reads as zeros. The per-slot
// sizes say what a slot holds, the high-water marks what has ever been written into it.
struct ClearContext::Storage {
  static constexpr uint32_t kVBarsPerBlock = 256; // 39 KiB blocks
  static constexpr uint32_t kGlyphsPerBlock = 16; // 48 KiB blocks
  static constexpr uint32_t kVBarBlocks = kVBarEntries / kVBarsPerBlock;
  static constexpr uint32_t kShortVBarBlocks = kShortVBarEntries / kVBarsPerBlock;
  static constexpr uint32_t kGlyphBlocks = kGlyphEntries / kGlyphsPerBlock;
  static_assert(kVBarEntries % kVBarsPerBlock == 0 && kShortVBarEntries % kVBarsPerBlock == 0 &&
                kGlyphEntries % kGlyphsPerBlock == 0);
  static constexpr size_t kVBarBlockBytes = size_t(kVBarsPerBlock) * kVBarBytes;
  static constexpr size_t kGlyphBlockBytes = size_t(kGlyphsPerBlock) * kGlyphBytes;

  uint8_t* vbarBlocks[kVBarBlocks];
  uint8_t* shortVBarBlocks[kShortVBarBlocks];
  uint8_t* glyphBlocks[kGlyphBlocks];
  uint32_t blocks; // allocated, all kinds
  uint8_t vbarHeight[kVBarEntries];
  uint8_t vbarWritten[kVBarEntries];
  uint8_t shortVBarCount[kShortVBarEntries];
  uint8_t shortVBarWritten[kShortVBarEntries];
  uint16_t glyphWidth[kGlyphEntries]; // 0: no glyph stored
  uint16_t glyphHeight[kGlyphEntries];
  // Every slot written since the last wipe, once each (V-bars, then short V-bars, then glyphs):
  // wipe() zeroes those and nothing else.
  uint32_t dirty[kVBarEntries + kShortVBarEntries + kGlyphEntries];
  uint32_t dirtyCount;

  static uint8_t* slot(uint8_t** blocks, uint32_t i, uint32_t perBlock, size_t slotBytes, size_t blockBytes,
                       uint32_t& allocated) {
    uint8_t*& block = blocks[i / perBlock];
    if (!block) {
      block = static_cast<uint8_t*>(std::calloc(1, blockBytes));
      if (!block)
        return nullptr;
      ++allocated;
    }
    return block + size_t(i % perBlock) * slotBytes;
  }
  // A slot to write (nullptr: out of memory).
  uint8_t* vbarForWrite(uint32_t i) {
    return slot(vbarBlocks, i, kVBarsPerBlock, kVBarBytes, kVBarBlockBytes, blocks);
  }
  uint8_t* shortVBarForWrite(uint32_t i) {
    return slot(shortVBarBlocks, i, kVBarsPerBlock, kVBarBytes, kVBarBlockBytes, blocks);
  }
  uint8_t* glyphForWrite(uint32_t i) {
    return slot(glyphBlocks, i, kGlyphsPerBlock, kGlyphBytes, kGlyphBlockBytes, blocks);
  }
  // A slot to read: zeros when its block was never allocated.
  const uint8_t* vbar(uint32_t i) const {
    const uint8_t* b = vbarBlocks[i / kVBarsPerBlock];
    return b ? b + size_t(i % kVBarsPerBlock) * kVBarBytes : kZeros;
  }
  const uint8_t* shortVBar(uint32_t i) const {
    const uint8_t* b = shortVBarBlocks[i / kVBarsPerBlock];
    return b ? b + size_t(i % kVBarsPerBlock) * kVBarBytes : kZeros;
  }
  const uint8_t* glyph(uint32_t i) const {
    const uint8_t* b = glyphBlocks[i / kGlyphsPerBlock];
    return b ? b + size_t(i % kGlyphsPerBlock) * kGlyphBytes : kZeros;
  }
  static const uint8_t kZeros[kGlyphBytes];

  void noteVBar(uint32_t i, uint32_t height) {
    if (vbarWritten[i] == 0)
      dirty[dirtyCount++] = i;
    if (vbarWritten[i] < height)
      vbarWritten[i] = uint8_t(height);
  }
  void noteShortVBar(uint32_t i, uint32_t count) {
    if (count == 0)
      return;
    if (shortVBarWritten[i] == 0)
      dirty[dirtyCount++] = kVBarEntries + i;
    if (shortVBarWritten[i] < count)
      shortVBarWritten[i] = uint8_t(count);
  }
  void noteGlyph(uint32_t i) {
    if (glyphWidth[i] == 0)
      dirty[dirtyCount++] = kVBarEntries + kShortVBarEntries + i;
  }
  // Zeroes what was written and frees every block.
  void wipe() {
    for (uint32_t k = 0; k < dirtyCount; ++k) {
      uint32_t i = dirty[k];
      if (i < kVBarEntries) {
        if (uint8_t* v = vbarBlocks[i / kVBarsPerBlock])
          secureZero(v + size_t(i % kVBarsPerBlock) * kVBarBytes,
                     size_t(vbarWritten[i]) * kStoredBytesPerPixel);
        vbarWritten[i] = 0;
        vbarHeight[i] = 0;
      } else if ((i -= kVBarEntries) < kShortVBarEntries) {
        if (uint8_t* v = shortVBarBlocks[i / kVBarsPerBlock])
          secureZero(v + size_t(i % kVBarsPerBlock) * kVBarBytes,
                     size_t(shortVBarWritten[i]) * kStoredBytesPerPixel);
        shortVBarWritten[i] = 0;
        shortVBarCount[i] = 0;
      } else {
        i -= kShortVBarEntries;
        if (uint8_t* g = glyphBlocks[i / kGlyphsPerBlock])
          secureZero(g + size_t(i % kGlyphsPerBlock) * kGlyphBytes,
                     size_t(glyphWidth[i]) * glyphHeight[i] * kStoredBytesPerPixel);
        glyphWidth[i] = 0;
        glyphHeight[i] = 0;
      }
    }
    dirtyCount = 0;
    for (uint8_t*& b : vbarBlocks) {
      std::free(b);
      b = nullptr;
    }
    for (uint8_t*& b : shortVBarBlocks) {
      std::free(b);
      b = nullptr;
    }
    for (uint8_t*& b : glyphBlocks) {
      std::free(b);
      b = nullptr;
    }
    blocks = 0;
  }
};

const uint8_t ClearContext::Storage::kZeros[kGlyphBytes] = {};

void ClearContext::FreeStorage::operator()(Storage* s) const {
  std::free(s);
}

size_t ClearContext::storageBytes() {
  return sizeof(Storage) +
         size_t(Storage::kVBarBlocks + Storage::kShortVBarBlocks) * Storage::kVBarBlockBytes +
         size_t(Storage::kGlyphBlocks) * Storage::kGlyphBlockBytes;
}

size_t ClearContext::allocatedBytes() const {
  if (!m_storage)
    return 0;
  size_t bytes = sizeof(Storage);
  for (const uint8_t* b : m_storage->vbarBlocks)
    bytes += b ? Storage::kVBarBlockBytes : 0;
  for (const uint8_t* b : m_storage->shortVBarBlocks)
    bytes += b ? Storage::kVBarBlockBytes : 0;
  for (const uint8_t* b : m_storage->glyphBlocks)
    bytes += b ? Storage::kGlyphBlockBytes : 0;
  return bytes;
}

ClearContext::ClearContext() = default;

ClearContext::~ClearContext() {
  wipe();
}

void ClearContext::resetSequence() {
  m_sequenceKnown = false;
}

void ClearContext::reset() {
  wipe();
  m_sequenceKnown = false;
  m_nextSequence = 0;
  m_vbarCursor = 0;
  m_shortVBarCursor = 0;
}

void ClearContext::wipe() {
  if (m_storage)
    m_storage->wipe();
}

Checked<Ok> ClearContext::decode(std::span<const uint8_t> stream, const Pixels& out) {
  if (!out.valid())
    return bad("bitmap size out of range");
  front::Wire r(stream);
  uint8_t flags = 0;
  uint8_t sequence = 0;
  if (!r.u8(flags) || !r.u8(sequence))
    return bad("stream shorter than its header");
  if (m_sequenceKnown && sequence != m_nextSequence)
    return bad("sequence number out of order");
  m_sequenceKnown = true;
  m_nextSequence = uint8_t(sequence + 1);
  if ((flags & kGlyphHit) && !(flags & kGlyphIndex))
    return bad("glyph hit without a glyph index");

  if (!m_storage) {
    // The sizes and the written-slot list (342 KiB); the pixel blocks come as slots are written.
    m_storage.reset(static_cast<Storage*>(std::calloc(1, sizeof(Storage))));
    if (!m_storage)
      return Violation::resource(kPdu, "storage could not be allocated");
  }
  Storage& s = *m_storage;
  if (flags & kCacheReset) {
    m_vbarCursor = 0;
    m_shortVBarCursor = 0;
  }

  const uint64_t area = uint64_t(out.width) * out.height;
  bool storeGlyph = false;
  uint16_t glyphIndex = 0;
  if (flags & kGlyphIndex) {
    if (area > kMaxGlyphPixels)
      return bad("glyph larger than 1024 pixels");
    if (!r.u16le(glyphIndex))
      return bad("stream shorter than its header");
    if (glyphIndex >= kGlyphEntries)
      return bad("glyph index out of range");
    if (flags & kGlyphHit) {
      if (s.glyphWidth[glyphIndex] == 0)
        return bad("glyph hit on an empty glyph entry");
      // The storage holds the glyph's pixels with no implied dimensions (MS-RDPEGFX 4.1.1.5): a
      // hit lays them out in its own rectangle, which must hold exactly that many.
      if (uint64_t(s.glyphWidth[glyphIndex]) * s.glyphHeight[glyphIndex] != area)
        return bad("glyph hit of another pixel count than the glyph stored");
      if (!r.atEnd())
        return bad("bytes after a glyph hit");
      const uint8_t* g = s.glyph(glyphIndex); // row-major as stored, read in the hit's rows
      for (uint32_t y = 0; y < out.height; ++y)
        for (uint32_t x = 0; x < out.width; ++x, g += 3)
          putPixel(out.at(x, y), g[0], g[1], g[2]);
      return Ok{};
    }
    storeGlyph = true;
  }

  uint32_t residualBytes = 0;
  uint32_t bandsBytes = 0;
  uint32_t subcodecBytes = 0;
  if (!r.u32le(residualBytes) || !r.u32le(bandsBytes) || !r.u32le(subcodecBytes))
    return bad("composite payload header missing");
  if (uint64_t(residualBytes) + bandsBytes + subcodecBytes != r.remaining())
    return bad("layer sizes do not match the stream");
  std::span<const uint8_t> layer;
  r.take(residualBytes, layer);
  if (!layer.empty())
    if (auto res = residual(layer, out); front::isViolation(res))
      return res;
  r.take(bandsBytes, layer);
  if (!layer.empty())
    if (auto res = bands(layer, out); front::isViolation(res))
      return res;
  r.take(subcodecBytes, layer);
  if (!layer.empty())
    if (auto res = subcodecs(layer, out); front::isViolation(res))
      return res;

  if (storeGlyph) {
    uint8_t* const slot = s.glyphForWrite(glyphIndex);
    if (!slot)
      return Violation::resource(kPdu, "storage could not be allocated");
    uint8_t* g = slot;
    for (uint32_t y = 0; y < out.height; ++y)
      for (uint32_t x = 0; x < out.width; ++x, g += 3)
        std::memcpy(g, out.at(x, y), 3);
    // A smaller glyph over a larger one: the rest of the old one goes (wipe() zeroes w x h).
    if (uint64_t(s.glyphWidth[glyphIndex]) * s.glyphHeight[glyphIndex] > area)
      secureZero(slot + area * 3, (size_t(s.glyphWidth[glyphIndex]) * s.glyphHeight[glyphIndex] - area) * 3);
    s.noteGlyph(glyphIndex);
    s.glyphWidth[glyphIndex] = uint16_t(out.width);
    s.glyphHeight[glyphIndex] = uint16_t(out.height);
  }
  return Ok{};
}

// CLEARCODEC_RESIDUAL_DATA: BGR runs covering the whole bitmap, row after row.
Checked<Ok> ClearContext::residual(std::span<const uint8_t> bytes, const Pixels& out) {
  front::Wire r(bytes);
  const uint64_t total = uint64_t(out.width) * out.height;
  uint64_t done = 0;
  PixelCursor cursor(out);
  while (!r.atEnd()) {
    uint8_t b = 0, g = 0, red = 0;
    uint32_t run = 0;
    if (!r.u8(b) || !r.u8(g) || !r.u8(red) || !runLength(r, run))
      return bad("residual segment cut short");
    if (run > total - done)
      return bad("residual runs past the bitmap");
    cursor.put(b, g, red, run);
    done += run;
  }
  if (done != total)
    return bad("residual does not cover the bitmap");
  return Ok{};
}

// CLEARCODEC_BANDS_DATA: bands of vertical bars (at most 52 pixels tall), each bar a V-bar
// cache hit or a short V-bar (a run of pixels between background) that becomes a new V-bar.
Checked<Ok> ClearContext::bands(std::span<const uint8_t> bytes, const Pixels& out) {
  Storage& s = *m_storage;
  front::Wire r(bytes);
  while (!r.atEnd()) {
    uint16_t xStart = 0, xEnd = 0, yStart = 0, yEnd = 0;
    uint8_t bkB = 0, bkG = 0, bkR = 0;
    if (!r.u16le(xStart) || !r.u16le(xEnd) || !r.u16le(yStart) || !r.u16le(yEnd) || !r.u8(bkB) ||
        !r.u8(bkG) || !r.u8(bkR))
      return bad("band header cut short");
    if (xEnd < xStart || yEnd < yStart)
      return bad("band ends before it starts");
    const uint32_t height = uint32_t(yEnd) - yStart + 1;
    if (height > kMaxVBarHeight)
      return bad("band taller than 52 pixels");
    if (xEnd >= out.width || yEnd >= out.height)
      return bad("band outside the bitmap");
    for (uint32_t x = xStart; x <= xEnd; ++x) {
      uint16_t header = 0;
      if (!r.u16le(header))
        return bad("band ends before its last V-bar");
      uint32_t vbar = 0;
      if ((header & 0x8000) != 0) { // VBAR_CACHE_HIT
        vbar = header & 0x7FFF;
        if (s.vbarHeight[vbar] != height) {
          // As FreeRDP: the slot is used at this height (zeros where it never held pixels).
          s.vbarHeight[vbar] = uint8_t(height);
          s.noteVBar(vbar, height);
        }
      } else {
        uint32_t shortIndex = 0;
        uint32_t yOn = 0;
        if ((header & 0xC000) == 0x4000) { // SHORT_VBAR_CACHE_HIT
          shortIndex = header & 0x3FFF;
          uint8_t on = 0;
          if (!r.u8(on))
            return bad("band ends before its last V-bar");
          yOn = on;
        } else { // SHORT_VBAR_CACHE_MISS: the short bar's pixels follow
          yOn = header & 0xFF;
          const uint32_t yOff = (header >> 8) & 0x3F;
          if (yOff < yOn)
            return bad("short V-bar ends before it starts");
          const uint32_t count = yOff - yOn;
          if (count > kMaxVBarHeight)
            return bad("short V-bar longer than 52 pixels");
          std::span<const uint8_t> px;
          if (!r.take(uint64_t(count) * 3, px))
            return bad("band ends before its last V-bar");
          shortIndex = m_shortVBarCursor;
          m_shortVBarCursor = (m_shortVBarCursor + 1) % kShortVBarEntries;
          uint8_t* const shortSlot = s.shortVBarForWrite(shortIndex);
          if (!shortSlot)
            return Violation::resource(kPdu, "storage could not be allocated");
          std::memcpy(shortSlot, px.data(), px.size());
          s.shortVBarCount[shortIndex] = uint8_t(count);
          s.noteShortVBar(shortIndex, count);
        }
        // A new V-bar: background, the short bar from yOn (cut at the band's height), background.
        vbar = m_vbarCursor;
        m_vbarCursor = (m_vbarCursor + 1) % kVBarEntries;
        uint8_t* v = s.vbarForWrite(vbar);
        if (!v)
          return Violation::resource(kPdu, "storage could not be allocated");
        const uint8_t* sv = s.shortVBar(shortIndex);
        const uint32_t shortCount = s.shortVBarCount[shortIndex];
        for (uint32_t y = 0; y < height; ++y, v += 3) {
          if (y >= yOn && y - yOn < shortCount) {
            std::memcpy(v, sv + size_t(y - yOn) * 3, 3);
          } else {
            v[0] = bkB;
            v[1] = bkG;
            v[2] = bkR;
          }
        }
        s.vbarHeight[vbar] = uint8_t(height);
        s.noteVBar(vbar, height);
      }
      const uint8_t* v = s.vbar(vbar);
      for (uint32_t y = 0; y < height; ++y, v += 3)
        putPixel(out.at(x, yStart + y), v[0], v[1], v[2]);
    }
  }
  return Ok{};
}

// CLEARCODEC_SUBCODEC: rectangles inside the bitmap, each uncompressed BGR, NSCodec or RLEX.
Checked<Ok> ClearContext::subcodecs(std::span<const uint8_t> bytes, const Pixels& out) {
  front::Wire r(bytes);
  while (!r.atEnd()) {
    uint16_t x = 0, y = 0, w = 0, h = 0;
    uint32_t count = 0;
    uint8_t id = 0;
    if (!r.u16le(x) || !r.u16le(y) || !r.u16le(w) || !r.u16le(h) || !r.u32le(count) || !r.u8(id))
      return bad("subcodec header cut short");
    if (w == 0 || h == 0) {
      // An empty rectangle holds no bytes (bitmapDataByteCount MUST NOT exceed 3 x width x height,
      // MS-RDPEGFX 2.2.4.1.1.3.1): only uncompressed data is that empty, and it draws nothing. It
      // still lies inside the bitmap.
      if (id != 0 || count != 0 || uint64_t(x) + w > out.width || uint64_t(y) + h > out.height)
        return bad("empty subcodec rectangle");
      continue;
    }
    if (!out.contains(x, y, w, h))
      return bad("subcodec rectangle outside the bitmap");
    std::span<const uint8_t> data;
    if (!r.take(count, data))
      return bad("subcodec data past its layer");
    const Pixels area = out.sub(x, y, w, h);
    switch (id) {
    case 0: { // uncompressed BGR, rows top-down
      if (data.size() != size_t(w) * h * 3)
        return bad("uncompressed subcodec size mismatch");
      const uint8_t* p = data.data();
      for (uint32_t row = 0; row < h; ++row)
        for (uint32_t col = 0; col < w; ++col, p += 3)
          putPixel(area.at(col, row), p[0], p[1], p[2]);
      break;
    }
    case 1:
      if (auto res = NscDecoder::decode(data, area); front::isViolation(res))
        return res;
      break;
    case 2:
      if (auto res = rlex(data, area); front::isViolation(res))
        return res;
      break;
    default:
      return bad("unknown subcodec");
    }
  }
  return Ok{};
}

} // namespace gc::codec
