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
  explicit RfxBits(std::span<const uint8_t> bytes) : m_bytes(bytes), m_bits(uint64_t(bytes.size()) * 8) {
    refill();
  }

  // The 32 bits from the current position, MSB first; zeros past the end.
  uint32_t peek32() const { return uint32_t(m_cache >> 32); }
  // The next n bits (n <= 31) as an unsigned value, consumed.
  uint32_t take(unsigned n) {
    if (n == 0)
      return 0;
    const uint32_t v = peek32() >> (32 - n);
    consume(n);
    return v;
  }
  bool bit() { return take(1) != 0; }
  void skip(uint64_t n) {
    while (n > 32) {
      consume(32);
      n -= 32;
    }
    consume(unsigned(n));
  }

  uint64_t position() const { return m_pos; }
  uint64_t sizeBits() const { return m_bits; }
  // Bits left before the end (0 once the position reached or passed it).
  uint64_t remaining() const { return m_pos < m_bits ? m_bits - m_pos : 0; }

private:
  // The cache holds the bits from m_pos at its top, at least 32 of them valid (zeros past the
  // end count as valid).
  void consume(unsigned n) {
    if (n == 0)
      return;
    m_cache <<= n;
    m_valid -= n;
    m_pos += n;
    refill();
  }
  void refill() {
    while (m_valid <= 56) {
      const uint64_t byte = m_next < m_bytes.size() ? m_bytes[m_next] : 0u;
      ++m_next;
      m_cache |= byte << (56 - m_valid);
      m_valid += 8;
    }
  }

  std::span<const uint8_t> m_bytes;
  uint64_t m_bits = 0;
  uint64_t m_pos = 0;
  uint64_t m_cache = 0;
  size_t m_next = 0;    // the next byte to load into the cache
  unsigned m_valid = 0; // bits of the cache that hold stream bits (or the zeros after it)
};

} // namespace gc::codec
