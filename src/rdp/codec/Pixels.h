// Pixels: the one output every decoder under src/rdp/codec/ writes into. BGRX32 (bytes B, G, R,
// X), rows top-down, `stride` bytes apart; the caller allocated exactly width x height pixels
// (a view into a surface or a scratch buffer of its own). A decoder writes nothing outside it.
//
// Thread: a value type; any thread (the buffer belongs to the caller).
#pragma once

#include "rdp/front/Violation.h"

#include <cstddef>
#include <cstdint>

namespace gc::codec {

// What every decoder here returns: Ok, or the Violation that names the rule the stream broke.
using front::Checked;
using front::Ok;
using front::Violation;

struct Pixels {
  uint8_t* bits = nullptr;
  size_t stride = 0; // bytes from one row to the next, >= width * 4
  uint32_t width = 0;
  uint32_t height = 0;

  static constexpr size_t kBytesPerPixel = 4;
  // The largest side a decoder accepts (front::Limits::kMaxSide): keeps every offset it computes
  // far from overflow whatever the caller passes.
  static constexpr uint32_t kMaxSide = 8192;

  bool valid() const {
    return bits != nullptr && width >= 1 && height >= 1 && width <= kMaxSide && height <= kMaxSide &&
           stride / kBytesPerPixel >= width;
  }
  uint8_t* row(uint32_t y) const { return bits + size_t(y) * stride; }
  uint8_t* at(uint32_t x, uint32_t y) const { return row(y) + size_t(x) * kBytesPerPixel; }
  // The part of this view at (x, y) of size w x h; the caller checked that it lies inside.
  Pixels sub(uint32_t x, uint32_t y, uint32_t w, uint32_t h) const { return {at(x, y), stride, w, h}; }
  bool contains(uint64_t x, uint64_t y, uint64_t w, uint64_t h) const {
    return w >= 1 && h >= 1 && x + w <= width && y + h <= height;
  }
};

} // namespace gc::codec
