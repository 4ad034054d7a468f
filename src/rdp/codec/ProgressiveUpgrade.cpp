#include "rdp/codec/ProgressiveUpgrade.h"

#include "rdp/codec/RfxBits.h"

#include <algorithm>
#include <bit>

namespace gc::codec {

namespace {

using Q = ProgressiveQuant;

// The SRL decoder's state (MS-RDPEGFX 3.2.8.1.3.2): a pending run of zeros, the adaptive
// parameter kp (k = kp / 8), and whether the next code is a zero run or a magnitude.
struct Srl {
  explicit Srl(std::span<const uint8_t> bytes) : bits(bytes) {}
  RfxBits bits;
  uint32_t nz = 0;
  uint32_t kp = 8;
  bool magnitudeNext = false;

  int16_t read(unsigned numBits) {
    if (nz) {
      --nz;
      return 0;
    }
    const uint32_t k = kp / 8;
    if (!magnitudeNext) {
      if (!bits.bit()) {
        // A full run of 1 << k zeros.
        nz = (1u << k) - 1;
        kp = std::min<uint32_t>(kp + 4, 80);
        return 0;
      }
      // A shorter run of the next k bits' zeros, then a nonzero value.
      magnitudeNext = true;
      nz = bits.take(k);
      if (nz) {
        --nz;
        return 0;
      }
    }
    magnitudeNext = false;
    const bool negative = bits.bit();
    kp = kp < 6 ? 0 : kp - 6;
    if (numBits == 1)
      return negative ? -1 : 1;
    // Unary: each 0 adds one, a 1 ends it, and it stops unread at max. Up to 32 bits a read.
    uint32_t mag = 1;
    const uint32_t max = (1u << numBits) - 1;
    while (mag < max) {
      const uint32_t limit = std::min<uint32_t>(max - mag, 32);
      const uint32_t zeros = uint32_t(std::countl_zero(bits.peek32()));
      if (zeros < limit) {
        bits.skip(zeros + 1);
        mag += zeros;
        break;
      }
      bits.skip(limit);
      mag += limit;
    }
    return negative ? int16_t(-int32_t(mag)) : int16_t(mag);
  }
};

struct Band {
  Q::Band band;
  uint16_t offset;
};
// The order the passes are coded in: high bands first, LL3 last.
constexpr Band kOrder[Q::kBands] = {
    {Q::HL1, 0},    {Q::LH1, 1023}, {Q::HH1, 2046}, {Q::HL2, 3007}, {Q::LH2, 3279},
    {Q::HH2, 3551}, {Q::HL3, 3807}, {Q::LH3, 3879}, {Q::HH3, 3951}, {Q::LL3, 4015},
};

} // namespace

bool ProgressiveUpgrade::apply(std::span<const uint8_t> srlBytes, std::span<const uint8_t> rawBytes,
                               const ProgressiveQuant::Values& shift, const ProgressiveQuant::Values& numBits,
                               int16_t* current, int8_t* sign) {
  Srl srl(srlBytes);
  RfxBits raw(rawBytes);
  for (const Band& b : kOrder) {
    const unsigned n = numBits[b.band];
    if (n == 0)
      continue;
    const unsigned sh = shift[b.band];
    const uint32_t count = Q::extrapolateCount(b.band);
    int16_t* c = current + b.offset;
    int8_t* s = sign + b.offset;
    if (b.band == Q::LL3) {
      for (uint32_t i = 0; i < count; ++i) {
        const uint32_t input = raw.take(n);
        c[i] = int16_t(uint16_t(uint32_t(uint16_t(c[i])) + (input << sh)));
      }
      continue;
    }
    for (uint32_t i = 0; i < count; ++i) {
      if (s[i] == 0 && srl.nz) { // a zero of the pending run: the coefficient stays as it is
        --srl.nz;
        continue;
      }
      int32_t input = 0;
      if (s[i] > 0) {
        input = int32_t(raw.take(n));
      } else if (s[i] < 0) {
        input = -int32_t(raw.take(n));
      } else {
        input = srl.read(n);
        s[i] = int8_t(input > 0 ? 1 : input < 0 ? -1 : 0);
      }
      c[i] = int16_t(uint16_t(uint32_t(uint16_t(c[i])) + (uint32_t(input) << sh)));
    }
  }
  // Both streams end on a byte; SRL may carry one byte more.
  const uint64_t rawUsed = (raw.position() + 7) / 8;
  uint64_t srlPos = (srl.bits.position() + 7) / 8 * 8;
  if (srl.bits.sizeBits() >= srlPos && srl.bits.sizeBits() - srlPos == 8)
    srlPos += 8;
  return rawUsed == rawBytes.size() && srlPos / 8 == srlBytes.size();
}

} // namespace gc::codec
