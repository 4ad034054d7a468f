// ClearContext (ClearCodec with NSCodec and RLEX) on guest bytes. Input: width byte, height
// byte, then messages (16-bit little-endian length + bytes) decoded in turn on one context,
// so the storages carry from message to message. Besides sanitizer findings: nothing is
// written outside the Pixels (a guard band), and every message accepted is decoded by
// FreeRDP 3.10.3's clear_decompress to the same pixels (B, G, R).
#include "GuardedPixels.h"
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
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2)
    return 0;
  const uint32_t w = 1 + data[0] % kMaxSide;
  const uint32_t h = 1 + data[1] % kMaxSide;
  gc::fuzz::GuardedPixels out(w, h, 0x5A);
  std::vector<uint8_t> theirs(size_t(w) * h * 4, 0x5A);

  static ClearContext ours; // reset() per input: the storages' zeroing is exercised too
  ours.reset();
  CLEAR_CONTEXT* clear = nullptr; // made at the first accepted message (most inputs have none)
  gc::fuzz::forEachMessage(data, size, 2, [&](std::span<const uint8_t> message) {
    const auto r = ours.decode(message, out.pixels());
    out.requireGuardsIntact();
    if (gc::front::isViolation(r))
      return false; // the session would close here
    if (!clear)
      clear = clear_context_new(FALSE);
    if (clear_decompress(clear, message.data(), uint32_t(message.size()), w, h, theirs.data(),
                         PIXEL_FORMAT_BGRX32, w * 4, 0, 0, w, h, nullptr) < 0)
      std::abort(); // accepted here, refused by FreeRDP
    out.requireEqualsPacked(theirs, 3);
    return true;
  });
  if (clear)
    clear_context_free(clear);
  return 0;
}
