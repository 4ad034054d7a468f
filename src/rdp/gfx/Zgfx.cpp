#include "rdp/gfx/Zgfx.h"

#include "privacy/SecureZero.h"

#include <cstdlib>
#include <cstring>
#include <string.h>

namespace gc::gfx {

namespace {

using front::Checked;
using front::Ok;
using front::Violation;

constexpr std::string_view kPdu = "rdpgfx.Zgfx";

// MS-RDPEGFX 3.1.9.1.3 (RDP 8.0 token table): a prefix of `length` bits `code`, then
// `valueBits` bits added to `base`: a literal byte (match false) or a match distance.
struct Token {
  uint8_t length;
  uint16_t code;
  uint8_t valueBits;
  bool match;
  uint32_t base;
};
constexpr Token kTokens[] = {
    {1, 0b0, 8, false, 0},
    {5, 0b10001, 5, true, 0},
    {5, 0b10010, 7, true, 32},
    {5, 0b10011, 9, true, 160},
    {5, 0b10100, 10, true, 672},
    {5, 0b10101, 12, true, 1696},
    {5, 0b11000, 0, false, 0x00},
    {5, 0b11001, 0, false, 0x01},
    {6, 0b101100, 14, true, 5792},
    {6, 0b101101, 15, true, 22176},
    {6, 0b110100, 0, false, 0x02},
    {6, 0b110101, 0, false, 0x03},
    {6, 0b110110, 0, false, 0xFF},
    {7, 0b1011100, 18, true, 54944},
    {7, 0b1011101, 20, true, 317088},
    {7, 0b1101110, 0, false, 0x04},
    {7, 0b1101111, 0, false, 0x05},
    {7, 0b1110000, 0, false, 0x06},
    {7, 0b1110001, 0, false, 0x07},
    {7, 0b1110010, 0, false, 0x08},
    {7, 0b1110011, 0, false, 0x09},
    {7, 0b1110100, 0, false, 0x0A},
    {7, 0b1110101, 0, false, 0x0B},
    {7, 0b1110110, 0, false, 0x3A},
    {7, 0b1110111, 0, false, 0x3B},
    {7, 0b1111000, 0, false, 0x3C},
    {7, 0b1111001, 0, false, 0x3D},
    {7, 0b1111010, 0, false, 0x3E},
    {7, 0b1111011, 0, false, 0x3F},
    {7, 0b1111100, 0, false, 0x40},
    {7, 0b1111101, 0, false, 0x80},
    {8, 0b10111100, 20, true, 1365664},
    {8, 0b10111101, 21, true, 2414240},
    {8, 0b11111100, 0, false, 0x0C},
    {8, 0b11111101, 0, false, 0x38},
    {8, 0b11111110, 0, false, 0x39},
    {8, 0b11111111, 0, false, 0x66},
    {9, 0b101111100, 22, true, 4511392},
    {9, 0b101111101, 23, true, 8705696},
    {9, 0b101111110, 24, true, 17094304},
};
constexpr uint8_t kLongestPrefix = 9;

// MSB-first bits of `bytes`, exactly `bits` of them.
class BitReader {
public:
  BitReader(const uint8_t* bytes, std::size_t bits) : m_bytes(bytes), m_bits(bits) {}
  std::size_t left() const { return m_bits - m_pos; }
  // False when fewer than n bits are left.
  bool read(unsigned n, uint32_t& value) {
    if (n > left())
      return false;
    uint32_t v = 0;
    for (unsigned i = 0; i < n; ++i, ++m_pos)
      v = (v << 1) | ((m_bytes[m_pos >> 3] >> (7 - (m_pos & 7))) & 1u);
    value = v;
    return true;
  }
  // To the next byte boundary; the byte offset reached.
  std::size_t align() {
    m_pos = (m_pos + 7) & ~std::size_t(7);
    if (m_pos > m_bits)
      m_pos = m_bits;
    return m_pos >> 3;
  }
  void skipBytes(std::size_t n) { m_pos += 8 * n; }

private:
  const uint8_t* m_bytes;
  std::size_t m_bits;
  std::size_t m_pos = 0;
};

uint32_t readLe32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

} // namespace

void Zgfx::Free::operator()(uint8_t* p) const {
  std::free(p);
}

Zgfx::Zgfx(uint32_t maxMessageBytes) : m_maxMessage(maxMessageBytes) {}

Zgfx::~Zgfx() {
  reset();
}

void Zgfx::reset() {
  // Written from index 0 onwards: the first m_historyFill bytes are all the guest wrote.
  if (m_history)
    secureZero(m_history.get(), m_historyFill);
  m_history.reset();
  m_historyIndex = 0;
  m_historyFill = 0;
  zeroOutput();
  std::vector<uint8_t>().swap(m_out);
}

void Zgfx::zeroOutput() {
  if (!m_out.empty())
    secureZero(m_out.data(), m_out.size());
  m_out.clear();
}

void Zgfx::remember(const uint8_t* bytes, std::size_t count) {
  if (count >= kHistorySize) {
    bytes += count - kHistorySize;
    count = kHistorySize;
  }
  const std::size_t first = std::min(count, kHistorySize - m_historyIndex);
  std::memcpy(m_history.get() + m_historyIndex, bytes, first);
  std::memcpy(m_history.get(), bytes + first, count - first);
  m_historyIndex = (m_historyIndex + count) % kHistorySize;
  m_historyFill = std::min(kHistorySize, m_historyFill + count);
}

Checked<std::span<const uint8_t>> Zgfx::decompress(std::span<const uint8_t> in) {
  // The previous message held guest pixels: zeroed before the buffer is reused or let go;
  // a large one is not kept between messages.
  zeroOutput();
  if (m_out.capacity() > (1u << 20))
    std::vector<uint8_t>().swap(m_out);
  if (!m_history) {
    m_history.reset(static_cast<uint8_t*>(std::calloc(kHistorySize, 1)));
    if (!m_history)
      return Violation::resource(kPdu, "no memory for the history");
  }
  if (in.empty())
    return Violation::protocol(kPdu, "empty message");
  const uint8_t descriptor = in[0];
  if (descriptor == kSingle) {
    m_outLimit = std::min<std::size_t>(kMaxSegmentOutput, m_maxMessage);
    m_out.reserve(m_outLimit); // never grows past it: no unzeroed reallocation
    if (auto r = segment(in.subspan(1)); front::isViolation(r))
      return std::get<Violation>(r);
    return std::span<const uint8_t>(m_out.data(), m_out.size());
  }
  if (descriptor != kMultipart)
    return Violation::protocol(kPdu, "descriptor is neither single nor multipart");
  if (in.size() < 7)
    return Violation::protocol(kPdu, "multipart header truncated");
  const uint16_t segmentCount = uint16_t(in[1] | in[2] << 8);
  const uint32_t uncompressedSize = readLe32(&in[3]);
  // Every declared size is checked before anything is reserved: the message within the
  // bound, within what its segments can produce, and each segment's header present.
  if (segmentCount == 0)
    return Violation::protocol(kPdu, "multipart without segments");
  if (uncompressedSize > m_maxMessage)
    return Violation::resource(kPdu, "uncompressedSize beyond the message bound");
  if (uint64_t(uncompressedSize) > uint64_t(segmentCount) * kMaxSegmentOutput)
    return Violation::protocol(kPdu, "uncompressedSize beyond what the segments can hold");
  if (in.size() - 7 < std::size_t(segmentCount) * 5)
    return Violation::protocol(kPdu, "fewer bytes than the segments declared");
  m_out.reserve(uncompressedSize);
  m_outLimit = uncompressedSize;
  std::size_t pos = 7;
  for (uint16_t i = 0; i < segmentCount; ++i) {
    if (in.size() - pos < 4)
      return Violation::protocol(kPdu, "segment size truncated");
    const uint32_t size = readLe32(&in[pos]);
    pos += 4;
    if (size > in.size() - pos)
      return Violation::protocol(kPdu, "segment size beyond the message");
    if (auto r = segment(in.subspan(pos, size)); front::isViolation(r))
      return std::get<Violation>(r);
    pos += size;
  }
  if (pos != in.size())
    return Violation::protocol(kPdu, "bytes after the last segment");
  if (m_out.size() != uncompressedSize)
    return Violation::protocol(kPdu, "segments differ from uncompressedSize");
  return std::span<const uint8_t>(m_out.data(), m_out.size());
}

Checked<Ok> Zgfx::segment(std::span<const uint8_t> bulk) {
  if (bulk.empty())
    return Violation::protocol(kPdu, "segment without header");
  const uint8_t header = bulk[0];
  if ((header & kTypeMask) != kTypeRdp8)
    return Violation::protocol(kPdu, "compression type is not RDP 8.0");
  const std::span<const uint8_t> data = bulk.subspan(1);
  // This segment's output may not exceed a segment's, nor what the message has left.
  const std::size_t limit = std::min(m_out.size() + kMaxSegmentOutput, m_outLimit);
  if (!(header & kCompressed)) {
    if (data.size() > limit - m_out.size())
      return Violation::resource(kPdu, "raw segment beyond its bound");
    m_out.insert(m_out.end(), data.begin(), data.end());
    remember(data.data(), data.size());
    return Ok{};
  }
  if (data.empty())
    return Violation::protocol(kPdu, "compressed segment without padding byte");
  const uint8_t padding = data.back();
  const std::size_t payload = data.size() - 1;
  if (padding > 7 || (payload == 0 && padding != 0))
    return Violation::protocol(kPdu, "padding bits out of range");
  BitReader bits(data.data(), payload * 8 - padding);
  const auto put = [&](uint8_t byte) {
    m_out.push_back(byte);
    m_history.get()[m_historyIndex] = byte;
    m_historyIndex = (m_historyIndex + 1) % kHistorySize;
    m_historyFill = std::min(kHistorySize, m_historyFill + 1);
  };
  while (bits.left() > 0) {
    uint32_t prefix = 0;
    const Token* token = nullptr;
    for (uint8_t have = 0; !token && have < kLongestPrefix;) {
      uint32_t bit = 0;
      if (!bits.read(1, bit))
        return Violation::protocol(kPdu, "token prefix truncated");
      prefix = (prefix << 1) | bit;
      ++have;
      for (const Token& t : kTokens) {
        if (t.length == have && t.code == prefix) {
          token = &t;
          break;
        }
      }
    }
    if (!token)
      return Violation::protocol(kPdu, "unknown token prefix");
    uint32_t value = 0;
    if (!bits.read(token->valueBits, value))
      return Violation::protocol(kPdu, "token value truncated");
    if (!token->match) {
      if (m_out.size() >= limit)
        return Violation::resource(kPdu, "segment output beyond its bound");
      put(uint8_t(token->base + value));
      continue;
    }
    const uint32_t distance = token->base + value;
    if (distance == 0) {
      // Unencoded bytes: a 15-bit count, then that many bytes from the next byte boundary.
      uint32_t count = 0;
      if (!bits.read(15, count))
        return Violation::protocol(kPdu, "unencoded count truncated");
      const std::size_t at = bits.align();
      if (count > bits.left() / 8)
        return Violation::protocol(kPdu, "unencoded bytes beyond the segment");
      if (count > limit - m_out.size())
        return Violation::resource(kPdu, "segment output beyond its bound");
      m_out.insert(m_out.end(), data.begin() + std::ptrdiff_t(at), data.begin() + std::ptrdiff_t(at + count));
      remember(data.data() + at, count);
      bits.skipBytes(count);
      continue;
    }
    uint32_t count = 3;
    uint32_t bit = 0;
    if (!bits.read(1, bit))
      return Violation::protocol(kPdu, "match length truncated");
    if (bit) {
      count = 4;
      unsigned extra = 2;
      for (;;) {
        if (!bits.read(1, bit))
          return Violation::protocol(kPdu, "match length truncated");
        if (!bit)
          break;
        count *= 2;
        ++extra;
        if (count > kMaxSegmentOutput)
          return Violation::resource(kPdu, "match longer than a segment");
      }
      uint32_t more = 0;
      if (!bits.read(extra, more))
        return Violation::protocol(kPdu, "match length truncated");
      count += more;
    }
    if (distance > m_historyFill)
      return Violation::protocol(kPdu, "match distance beyond the history");
    if (count > limit - m_out.size())
      return Violation::resource(kPdu, "segment output beyond its bound");
    // LZ77: a match longer than its distance repeats what it has just produced.
    std::size_t from = (m_historyIndex + kHistorySize - distance) % kHistorySize;
    for (uint32_t i = 0; i < count; ++i) {
      put(m_history.get()[from]);
      from = (from + 1) % kHistorySize;
    }
  }
  return Ok{};
}

} // namespace gc::gfx
