// ClearContext (ClearCodec with NSCodec and RLEX) on guest bytes. Input: width byte, height
// byte, then messages (16-bit little-endian length + bytes) decoded in turn on one context,
// so the storages carry from message to message. Besides sanitizer findings: nothing is
// written outside the Pixels (a guard band), and every message accepted is decoded by
// FreeRDP 3.10.3's clear_decompress to the same pixels (B, G, R).
#include "rdp/codec/ClearContext.h"

#include <freerdp/codec/clear.h>
#include <freerdp/codec/color.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

using gc::codec::ClearContext;

namespace {
constexpr uint32_t kMaxSide = 64;
constexpr size_t kGuard = 64;
constexpr uint8_t kGuardByte = 0xA5;
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2)
    return 0;
  const uint32_t w = 1 + data[0] % kMaxSide;
  const uint32_t h = 1 + data[1] % kMaxSide;
  const size_t stride = size_t(w) * 4 + kGuard;
  std::vector<uint8_t> buffer(2 * kGuard + stride * h, kGuardByte);
  uint8_t* bits = buffer.data() + kGuard;
  for (uint32_t y = 0; y < h; ++y)
    std::memset(bits + y * stride, 0x5A, size_t(w) * 4);
  std::vector<uint8_t> theirs(size_t(w) * h * 4, 0x5A);

  static ClearContext ours; // reset() per input: the storages' zeroing is exercised too
  ours.reset();
  CLEAR_CONTEXT* clear = nullptr; // made at the first accepted message (most inputs have none)
  size_t pos = 2;
  while (pos + 2 <= size) {
    const size_t len = size_t(data[pos]) | (size_t(data[pos + 1]) << 8);
    pos += 2;
    if (len > size - pos)
      break;
    const std::span<const uint8_t> message(data + pos, len);
    pos += len;
    const auto r = ours.decode(message, {bits, stride, w, h});
    for (size_t i = 0; i < kGuard; ++i)
      if (buffer[i] != kGuardByte || buffer[buffer.size() - 1 - i] != kGuardByte)
        std::abort();
    for (uint32_t y = 0; y < h; ++y)
      for (size_t i = size_t(w) * 4; i < stride; ++i)
        if (bits[y * stride + i] != kGuardByte)
          std::abort();
    if (gc::front::isViolation(r))
      break; // the session would close here
    if (!clear)
      clear = clear_context_new(FALSE);
    if (clear_decompress(clear, message.data(), uint32_t(message.size()), w, h, theirs.data(),
                         PIXEL_FORMAT_BGRX32, w * 4, 0, 0, w, h, nullptr) < 0)
      std::abort(); // accepted here, refused by FreeRDP
    for (uint32_t y = 0; y < h; ++y)
      for (uint32_t x = 0; x < w; ++x)
        if (std::memcmp(bits + y * stride + x * 4, theirs.data() + (size_t(y) * w + x) * 4, 3) != 0)
          std::abort();
  }
  if (clear)
    clear_context_free(clear);
  return 0;
}
