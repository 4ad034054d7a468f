// ByteReader: bounded little-endian reads over bytes the guest sent. Every read says whether
// the bytes were there; nothing is read past the end, whatever the caller asks.
//
// Thread: a value type over borrowed bytes; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace gc::codec {

class ByteReader {
public:
  explicit ByteReader(std::span<const uint8_t> bytes) : m_bytes(bytes) {}

  size_t size() const { return m_bytes.size(); }
  size_t position() const { return m_pos; }
  size_t remaining() const { return m_bytes.size() - m_pos; }
  bool atEnd() const { return m_pos == m_bytes.size(); }
  bool has(uint64_t n) const { return n <= remaining(); }

  bool u8(uint8_t& v) {
    if (!has(1))
      return false;
    v = m_bytes[m_pos++];
    return true;
  }
  bool peek(uint8_t& v) const {
    if (!has(1))
      return false;
    v = m_bytes[m_pos];
    return true;
  }
  bool u16(uint16_t& v) {
    if (!has(2))
      return false;
    v = uint16_t(m_bytes[m_pos] | (m_bytes[m_pos + 1] << 8));
    m_pos += 2;
    return true;
  }
  bool u32(uint32_t& v) {
    if (!has(4))
      return false;
    v = uint32_t(m_bytes[m_pos]) | (uint32_t(m_bytes[m_pos + 1]) << 8) |
        (uint32_t(m_bytes[m_pos + 2]) << 16) | (uint32_t(m_bytes[m_pos + 3]) << 24);
    m_pos += 4;
    return true;
  }
  // The next n bytes, consumed; false (nothing consumed) when fewer remain.
  bool take(uint64_t n, std::span<const uint8_t>& out) {
    if (!has(n))
      return false;
    out = m_bytes.subspan(m_pos, size_t(n));
    m_pos += size_t(n);
    return true;
  }
  bool skip(uint64_t n) {
    if (!has(n))
      return false;
    m_pos += size_t(n);
    return true;
  }
  // The unread bytes, without consuming them.
  std::span<const uint8_t> rest() const { return m_bytes.subspan(m_pos); }

private:
  std::span<const uint8_t> m_bytes;
  size_t m_pos = 0;
};

} // namespace gc::codec
