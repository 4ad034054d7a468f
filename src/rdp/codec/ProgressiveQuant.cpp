#include "rdp/codec/ProgressiveQuant.h"

#include <cstddef>

namespace gc::codec {

namespace {

struct Span {
  uint16_t offset;
  uint16_t count;
};

// Per band (wire order) where it lies in each layout.
constexpr Span kClassic[ProgressiveQuant::kBands] = {
    {4032, 64},  {3840, 64},  {3904, 64}, {3968, 64},   {3072, 256},
    {3328, 256}, {3584, 256}, {0, 1024},  {1024, 1024}, {2048, 1024},
};
constexpr Span kExtrapolate[ProgressiveQuant::kBands] = {
    {4015, 81},  {3807, 72},  {3879, 72}, {3951, 64},   {3007, 272},
    {3279, 272}, {3551, 256}, {0, 1023},  {1023, 1023}, {2046, 961},
};

void shiftBand(int16_t* c, Span s, unsigned shift) {
  if (shift == 0 || shift >= 16)
    return;
  for (size_t i = 0; i < s.count; ++i)
    c[s.offset + i] = int16_t(uint16_t(uint32_t(uint16_t(c[s.offset + i])) << shift));
}

void undoDifferential(int16_t* c, Span s) {
  for (size_t i = 1; i < s.count; ++i)
    c[s.offset + i] = int16_t(c[s.offset + i] + c[s.offset + i - 1]);
}

} // namespace

bool ProgressiveQuant::read(front::Wire& r, Values& out) {
  for (int i = 0; i < 5; ++i) {
    uint8_t b = 0;
    if (!r.u8(b))
      return false;
    out[size_t(2 * i)] = b & 0x0F;
    out[size_t(2 * i + 1)] = b >> 4;
  }
  return true;
}

bool ProgressiveQuant::inRange(const Values& q) {
  for (uint8_t v : q)
    if (v < kMinQuant || v > kMaxQuant)
      return false;
  return true;
}

ProgressiveQuant::Values ProgressiveQuant::bitPositions(const Values& quant, const Values& progressive) {
  Values out{};
  for (size_t b = 0; b < kBands; ++b)
    out[b] = uint8_t(quant[b] + progressive[b]);
  return out;
}

uint32_t ProgressiveQuant::extrapolateCount(Band b) {
  return kExtrapolate[b].count;
}

void ProgressiveQuant::dequantize(int16_t* coefficients, const Values& bitPos, bool extrapolate) {
  const Span* layout = extrapolate ? kExtrapolate : kClassic;
  undoDifferential(coefficients, layout[LL3]);
  for (size_t b = 0; b < kBands; ++b)
    shiftBand(coefficients, layout[b], bitPos[b] == 0 ? 0u : unsigned(bitPos[b] - 1));
}

} // namespace gc::codec
