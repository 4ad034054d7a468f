// RfxBits: the MSB-first bit reader RemoteFX's entropy coders (RLGR, SRL, RAW) read with. It
// always exposes the 32 bits at the current position, as if the stream were followed by zero
// bytes: the coders peek before they know how many bits a code takes, and FreeRDP's reader
// (whose output ours must equal) reads zeros there too. The position may pass the end only by
// such zero bits; callers that must consume their input exactly compare position() with size.
//
// Thread: a value type; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace gc::codec {

class RfxBits {
public:
  explicit RfxBits(std::span<const uint8_t> bytes) : m_bytes(bytes), m_bits(uint64_t(bytes.size()) * 8) {}

  // The 32 bits from the current position, MSB first; zeros past the end.
  uint32_t peek32() const {
    const size_t byte = size_t(m_pos >> 3);
    const unsigned bit = unsigned(m_pos & 7);
    uint64_t window = 0;
    if (byte + 8 <= m_bytes.size()) {
      const uint8_t* p = m_bytes.data() + byte;
      window = uint64_t(p[0]) << 56 | uint64_t(p[1]) << 48 | uint64_t(p[2]) << 40 | uint64_t(p[3]) << 32 |
               uint64_t(p[4]) << 24 | uint64_t(p[5]) << 16 | uint64_t(p[6]) << 8 | uint64_t(p[7]);
    } else {
      for (size_t i = 0; i < 8; ++i)
        window = window << 8 | (byte + i < m_bytes.size() ? m_bytes[byte + i] : 0u);
    }
    return uint32_t(window << bit >> 32);
  }
  // The next n bits (n <= 31) as an unsigned value, consumed.
  uint32_t take(unsigned n) {
    if (n == 0)
      return 0;
    const uint32_t v = peek32() >> (32 - n);
    m_pos += n;
    return v;
  }
  bool bit() { return take(1) != 0; }
  void skip(uint64_t n) { m_pos += n; }

  uint64_t position() const { return m_pos; }
  uint64_t sizeBits() const { return m_bits; }
  // Bits left before the end (0 once the position reached or passed it).
  uint64_t remaining() const { return m_pos < m_bits ? m_bits - m_pos : 0; }

private:
  std::span<const uint8_t> m_bytes;
  uint64_t m_bits = 0;
  uint64_t m_pos = 0;
};

} // namespace gc::codec
