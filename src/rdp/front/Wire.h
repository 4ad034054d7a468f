// Wire: the one bounds-checked cursor over guest bytes (little- and big-endian fields, PER and
// BER lengths), used by the fronts, the RDPGFX parser and the codecs alike. Every read says
// whether the bytes were there and consumes nothing when they were not; nothing is copied or
// allocated. Sizes are taken as 64-bit so a count read from the guest cannot wrap on its way in.
//
// Thread: a value type; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace gc::front {

class Wire {
public:
  explicit constexpr Wire(std::span<const uint8_t> bytes) : m_bytes(bytes) {}

  constexpr std::size_t size() const { return m_bytes.size(); }
  constexpr std::size_t remaining() const { return m_bytes.size() - m_pos; }
  constexpr std::size_t position() const { return m_pos; }
  constexpr bool atEnd() const { return m_pos == m_bytes.size(); }
  constexpr bool has(uint64_t n) const { return n <= remaining(); }
  // The unread bytes, without consuming them.
  constexpr std::span<const uint8_t> rest() const { return m_bytes.subspan(m_pos); }

  constexpr bool skip(uint64_t n) {
    if (!has(n))
      return false;
    m_pos += std::size_t(n);
    return true;
  }
  // The next n bytes, consumed.
  constexpr bool take(uint64_t n, std::span<const uint8_t>& out) {
    if (!has(n))
      return false;
    out = m_bytes.subspan(m_pos, std::size_t(n));
    m_pos += std::size_t(n);
    return true;
  }
  constexpr bool peek(uint8_t& v) const {
    if (!has(1))
      return false;
    v = m_bytes[m_pos];
    return true;
  }
  constexpr bool u8(uint8_t& v) {
    if (!has(1))
      return false;
    v = m_bytes[m_pos++];
    return true;
  }
  constexpr bool u16le(uint16_t& v) {
    if (!has(2))
      return false;
    v = uint16_t(m_bytes[m_pos] | (m_bytes[m_pos + 1] << 8));
    m_pos += 2;
    return true;
  }
  constexpr bool u16be(uint16_t& v) {
    if (!has(2))
      return false;
    v = uint16_t((m_bytes[m_pos] << 8) | m_bytes[m_pos + 1]);
    m_pos += 2;
    return true;
  }
  constexpr bool u32le(uint32_t& v) {
    if (!has(4))
      return false;
    v = uint32_t(m_bytes[m_pos]) | uint32_t(m_bytes[m_pos + 1]) << 8 | uint32_t(m_bytes[m_pos + 2]) << 16 |
        uint32_t(m_bytes[m_pos + 3]) << 24;
    m_pos += 4;
    return true;
  }
  constexpr bool u64le(uint64_t& v) {
    uint32_t lo = 0;
    uint32_t hi = 0;
    if (!has(8) || !u32le(lo) || !u32le(hi))
      return false;
    v = uint64_t(hi) << 32 | lo;
    return true;
  }
  // ITU-T X.691 aligned PER length as T.125 uses it: one byte, or two with the top bit set.
  constexpr bool perLength(uint16_t& v) {
    std::size_t n = 0;
    if (!length(Length::Per, n))
      return false;
    v = uint16_t(n);
    return true;
  }
  // BER definite length (X.690 8.1.3): short form, or 0x81/0x82 long forms.
  constexpr bool berLength(std::size_t& v) { return length(Length::Ber, v); }

private:
  enum class Length { Per, Ber };
  // A length whose first byte's top bit says more bytes follow: PER's first byte keeps 7 high
  // bits of a 15-bit value and one byte follows; BER's counts the 1 or 2 bytes that follow.
  constexpr bool length(Length form, std::size_t& v) {
    if (!has(1))
      return false;
    const uint8_t first = m_bytes[m_pos];
    const bool shortForm = !(first & 0x80);
    const std::size_t more = shortForm ? 0 : form == Length::Per ? 1 : first & 0x7F;
    if ((!shortForm && more == 0) || more > 2 || !has(1 + more))
      return false;
    std::size_t value = shortForm ? first : form == Length::Per ? first & 0x7F : 0;
    for (std::size_t i = 1; i <= more; ++i)
      value = value << 8 | m_bytes[m_pos + i];
    v = value;
    m_pos += 1 + more;
    return true;
  }

  std::span<const uint8_t> m_bytes;
  std::size_t m_pos = 0;
};

// Little-endian fields of a small header already gathered into memory.
constexpr uint16_t le16(const uint8_t* p) {
  return uint16_t(p[0] | (p[1] << 8));
}
constexpr uint32_t le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

} // namespace gc::front
