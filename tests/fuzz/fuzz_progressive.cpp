// ProgressiveFront on guest bytes, with FreeRDP 3.10.3's progressive_decompress behind it as
// in the console. Input: surface width and height (16 bits each, little-endian, reduced to at
// most 320 x 200), then messages (16-bit length + bytes) checked and decoded in turn on one
// surface context. For every message the front accepts: FreeRDP must not refuse it (the
// front is stricter than FreeRDP's parser), must not write outside the surface (a guard band)
// nor outside the rectangles the front reported, and must finish (libFuzzer's -timeout).
#include "GuardedPixels.h"
#include "rdp/codec/ProgressiveFront.h"

#include <freerdp/codec/color.h>
#include <freerdp/codec/progressive.h>
#include <freerdp/codec/region.h>
#include <freerdp/settings_types.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

using gc::codec::ProgressiveFront;

namespace {
constexpr size_t kGuard = 256;
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4)
    return 0;
  const uint32_t w = 1 + (uint32_t(data[0]) | (uint32_t(data[1]) << 8)) % 320;
  const uint32_t h = 1 + (uint32_t(data[2]) | (uint32_t(data[3]) << 8)) % 200;
  gc::fuzz::GuardedPixels out(w, h, 0x3C, kGuard);
  std::vector<uint8_t> before(out.buffer());

  gc::front::Limits limits;
  ProgressiveFront front(limits);
  if (gc::front::isViolation(front.createSurface(1, w, h)))
    std::abort();
  // One FreeRDP context for the run (it is large); the surface context is per input, made at
  // the first message the front accepts, as the console makes it at the first command.
  static PROGRESSIVE_CONTEXT* progressive =
      progressive_context_new_ex(FALSE, THREADING_FLAGS_DISABLE_THREADS);
  bool surface = false;
  uint32_t frame = 0;
  gc::fuzz::forEachMessage(data, size, 4, [&](std::span<const uint8_t> message) {
    const auto checked = front.check(1, message);
    if (gc::front::isViolation(checked))
      return false; // the session would close here: FreeRDP never sees it
    const auto& update = std::get<ProgressiveFront::Update>(checked);
    if (!surface)
      surface = progressive_create_surface_context(progressive, 1, w, h) >= 0;
    REGION16 invalid;
    region16_init(&invalid);
    const INT32 rc =
        progressive_decompress(progressive, message.data(), uint32_t(message.size()), out.bits(),
                               PIXEL_FORMAT_BGRX32, uint32_t(out.stride()), 0, 0, &invalid, 1, ++frame);
    region16_uninit(&invalid);
    if (rc < 0)
      std::abort(); // accepted by the front, refused by FreeRDP's own checks
    out.requireGuardsIntact();
    const auto& buffer = out.buffer();
    for (uint32_t y = 0; y < h; ++y)
      for (uint32_t x = 0; x < w; ++x) {
        const size_t at = out.offset(x, y);
        if (std::memcmp(&buffer[at], &before[at], 4) == 0)
          continue;
        bool inside = false;
        for (const auto& r : update.clip)
          inside =
              inside || (x >= r.x && x < uint32_t(r.x) + r.width && y >= r.y && y < uint32_t(r.y) + r.height);
        if (!inside)
          std::abort(); // FreeRDP wrote where the front did not say it would
      }
    before = buffer;
    return true;
  });
  progressive_delete_surface_context(progressive, 1);
  return 0;
}
