#include "rdp/codec/Rlgr.h"

#include "rdp/codec/RfxBits.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace gc::codec {

namespace {

// The adaptation constants of MS-RDPRFX 3.1.8.1.7.1.
constexpr int kKpMax = 80;
constexpr int kLsgr = 3;
constexpr int kUpGr = 4;
constexpr int kDnGr = 6;
constexpr int kUqGr = 3;
constexpr int kDqGr = 3;

// A run of equal bits (zeros or ones) from the current position, consumed, and the bit that
// ends it. The run may not pass the stream's end; the caller sees that through remaining().
// Inlined: it runs once or twice per coefficient.
[[gnu::always_inline]] inline uint64_t countRun(RfxBits& bits, bool ones) {
  uint64_t run = 0;
  for (;;) {
    const uint32_t window = ones ? ~bits.peek32() : bits.peek32();
    uint64_t n = uint64_t(std::countl_zero(window));
    n = std::min(n, bits.remaining());
    run += n;
    bits.skip(n);
    if (n < 32 || bits.remaining() == 0)
      return run;
  }
}

int16_t magnitude(uint32_t code) {
  // code = 2 * |v| - (v < 0): odd codes are negative.
  return (code & 1) ? int16_t(-int32_t((code + 1) >> 1)) : int16_t(code >> 1);
}

} // namespace

bool Rlgr::decode(Mode mode, std::span<const uint8_t> in, std::span<int16_t> out) {
  if (in.empty())
    return false;
  RfxBits bits(in);
  int kp = 1 << kLsgr;
  int k = 1;
  int krp = 1 << kLsgr;
  int kr = 1;
  size_t pos = 0;
  const size_t size = out.size();
  auto put = [&](int16_t v) {
    if (pos < size)
      out[pos++] = v;
  };
  // The GR code's unary prefix and kr-bit remainder, with kr's adaptation; false when the
  // stream ends inside it.
  auto grCode = [&](uint32_t& code) {
    const uint64_t vk = countRun(bits, true);
    // The 0 that ends the prefix and the kr-bit remainder, in one read.
    if (bits.remaining() < uint64_t(kr) + 1)
      return false;
    code = bits.take(unsigned(kr) + 1);
    code = uint16_t(code | uint32_t(vk << kr)); // FreeRDP keeps the code in 16 bits
    if (vk == 0) {
      krp = std::max(krp - 2, 0);
      kr = krp >> kLsgr;
    } else if (vk != 1) {
      krp = int(std::min<uint64_t>(uint64_t(krp) + vk, kKpMax));
      kr = krp >> kLsgr;
    }
    return true;
  };

  while (bits.remaining() > 0 && pos < size) {
    if (k) {
      // Run-length mode: each leading 0 is a run of 1 << k zeros.
      uint64_t vk = countRun(bits, false);
      if (bits.remaining() < 1)
        break;
      bits.skip(1);
      uint64_t run = 0;
      while (vk--) {
        run += uint64_t(1) << k;
        kp = std::min(kp + kUpGr, kKpMax);
        k = kp >> kLsgr;
      }
      // The run's k-bit remainder and the sign bit after it, in one read.
      if (bits.remaining() < uint64_t(k) + 1)
        break;
      const uint32_t tail = bits.take(unsigned(k) + 1);
      run += tail >> 1;
      const bool negative = (tail & 1) != 0;
      uint32_t code = 0;
      if (!grCode(code))
        break;
      kp = std::max(kp - kDnGr, 0);
      k = kp >> kLsgr;
      const int16_t mag = negative ? int16_t(-int32_t(uint16_t(code + 1))) : int16_t(uint16_t(code + 1));
      const size_t zeros = std::min<uint64_t>(run, size - pos);
      std::fill_n(out.data() + pos, zeros, int16_t(0));
      pos += zeros;
      put(mag);
    } else {
      uint32_t code = 0;
      if (!grCode(code))
        break;
      if (mode == Mode::Rlgr1) {
        if (!code) {
          kp = std::min(kp + kUqGr, kKpMax);
          k = kp >> kLsgr;
          put(0);
        } else {
          kp = std::max(kp - kDqGr, 0);
          k = kp >> kLsgr;
          put(magnitude(code));
        }
      } else {
        // RLGR3: the code is the sum of two codes; the first is written in as many bits as
        // the sum needs.
        const unsigned nIdx = code ? unsigned(32 - std::countl_zero(code)) : 0;
        if (bits.remaining() < nIdx)
          break;
        const uint32_t val1 = bits.take(nIdx);
        const uint32_t val2 = code - val1;
        if (val1 && val2) {
          kp = std::max(kp - 2 * kDqGr, 0);
          k = kp >> kLsgr;
        } else if (!val1 && !val2) {
          kp = std::min(kp + 2 * kUqGr, kKpMax);
          k = kp >> kLsgr;
        }
        put(magnitude(val1));
        put(magnitude(val2));
      }
    }
  }
  std::fill(out.begin() + std::ptrdiff_t(pos), out.end(), int16_t(0));
  return true;
}

} // namespace gc::codec
