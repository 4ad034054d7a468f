// What the codec fuzz targets share: a Pixels view with a guard band around it (before the
// first row, after the last, and past the end of every row), the check that a decoder wrote
// nothing outside its Pixels, the comparison with a reference decoder's packed output, and the
// input framing of the targets that decode a sequence of messages on one context.
#pragma once

#include "rdp/codec/Pixels.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

namespace gc::fuzz {

class GuardedPixels {
public:
  static constexpr uint8_t kGuardByte = 0xA5;

  // w x h pixels, every byte `fill`; `guard` bytes of kGuardByte on each side and per row.
  GuardedPixels(uint32_t w, uint32_t h, uint8_t fill, size_t guard = 64)
      : m_w(w), m_h(h), m_guard(guard), m_stride(size_t(w) * 4 + guard),
        m_buffer(2 * guard + m_stride * h, kGuardByte) {
    for (uint32_t y = 0; y < h; ++y)
      std::memset(bits() + y * m_stride, fill, size_t(w) * 4);
  }

  uint8_t* bits() { return m_buffer.data() + m_guard; }
  size_t stride() const { return m_stride; }
  codec::Pixels pixels() { return {bits(), m_stride, m_w, m_h}; }
  const std::vector<uint8_t>& buffer() const { return m_buffer; }
  // The byte offset of pixel (x, y) in buffer().
  size_t offset(uint32_t x, uint32_t y) const { return m_guard + y * m_stride + size_t(x) * 4; }

  // Aborts (a finding) if any guard byte changed.
  void requireGuardsIntact() const {
    for (size_t i = 0; i < m_guard; ++i)
      if (m_buffer[i] != kGuardByte || m_buffer[m_buffer.size() - 1 - i] != kGuardByte)
        std::abort();
    for (uint32_t y = 0; y < m_h; ++y)
      for (size_t i = size_t(m_w) * 4; i < m_stride; ++i)
        if (m_buffer[m_guard + y * m_stride + i] != kGuardByte)
          std::abort();
  }

  // Aborts unless every pixel's first `bytes` bytes equal `packed` (w x h pixels, no padding):
  // 3 compares B, G, R; 4 the whole pixel.
  void requireEqualsPacked(const std::vector<uint8_t>& packed, size_t bytes) const {
    for (uint32_t y = 0; y < m_h; ++y)
      for (uint32_t x = 0; x < m_w; ++x)
        if (std::memcmp(&m_buffer[offset(x, y)], packed.data() + (size_t(y) * m_w + x) * 4, bytes) != 0)
          std::abort();
  }

private:
  uint32_t m_w, m_h;
  size_t m_guard, m_stride;
  std::vector<uint8_t> m_buffer;
};

// The framing of a multi-message input after its `header` bytes: 16-bit little-endian length,
// then that many bytes, repeated; a length past the end ends the input. `fn` returns false to
// stop (the session would close there).
template <typename Fn> void forEachMessage(const uint8_t* data, size_t size, size_t header, Fn&& fn) {
  size_t pos = header;
  while (pos + 2 <= size) {
    const size_t len = size_t(data[pos]) | (size_t(data[pos + 1]) << 8);
    pos += 2;
    if (len > size - pos)
      return;
    const std::span<const uint8_t> message(data + pos, len);
    pos += len;
    if (!fn(message))
      return;
  }
}

} // namespace gc::fuzz
