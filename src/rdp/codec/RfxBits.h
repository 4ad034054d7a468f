// RfxBits: the MSB-first bit reader RemoteFX's entropy coders (RLGR, SRL, RAW) read with. It
// always exposes the 32 bits at the current position, as if the stream were followed by zero
// bytes: the coders peek before they know how many bits a code takes, and FreeRDP's reader
// (whose output ours must equal) reads zeros there too. The position may pass the end only by
// such zero bits; callers that must consume their input exactly compare position() with size.
//
// Thread: a value type; any thread.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace gc::codec {

class RfxBits {
public:
  explicit RfxBits(std::span<const uint8_t> bytes) : m_bytes(bytes), m_bits(uint64_t(bytes.size()) * 8) {}

  // The 32 bits from the current position, MSB first; zeros past the end. Read straight from
  // the bytes (eight at a time away from the end) so that consuming is only an addition.
  uint32_t peek32() const {
    const uint64_t at = m_pos >> 3;
    uint64_t word = 0;
    if (at + 8 <= m_bytes.size()) {
      std::memcpy(&word, m_bytes.data() + at, 8);
      if constexpr (std::endian::native == std::endian::little)
        word = __builtin_bswap64(word);
    } else {
      for (uint64_t i = 0; i < 8; ++i)
        word = (word << 8) | (at + i < m_bytes.size() ? m_bytes[size_t(at + i)] : 0u);
    }
    return uint32_t((word << (m_pos & 7)) >> 32);
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
