// AlphaDecoder against FreeRDP 3.10.3's GDI (Differential.h): FreeRDP exports no alpha decoder,
// so the oracle is its RDPGFX handler for codec 0x000C (gdi/gfx.c, through
// gdi_graphics_pipeline_init's SurfaceCommand) on a surface made by its CreateSurface. Input:
// width - 1, height - 1 (modulo 48), x, y (the rectangle's place, modulo what is left of the
// 64 x 64 surface), surface format (bit 0: ARGB_8888, else XRGB_8888), then the alpha stream.
// The console decodes alpha over what the surface shows, as here.
#include "Differential.h"
#include "rdp/codec/AlphaDecoder.h"

#include <cstdint>

using gc::codec::AlphaDecoder;
using namespace gc::fuzz;

namespace {

constexpr uint32_t kSide = 64;
constexpr uint32_t kMaxRect = 48;

class AlphaDifferential : public Differential {
public:
  AlphaDifferential() : Differential("alpha", 4) {}
  bool argb = false;

protected:
  const char* freerdpLenient(std::string_view, std::string_view rule, const Message& m) const override {
    if (rule == "segment runs past the bitmap")
      return "FreeRDP too lenient: a run past the bitmap's last pixel, which FreeRDP cuts (MS-RDPEGFX "
             "2.2.4.3: "
             "the runs cover the bitmap)";
    if (rule == "uncompressed alpha does not match the bitmap" && m.data.size() > 4 + size_t(m.d.w) * m.d.h)
      return "FreeRDP too lenient: bytes after an uncompressed alpha plane (MS-RDPEGFX 2.2.4.3: one byte "
             "per pixel)";
    // gdi_SurfaceCommand_Alpha stops reading once the rectangle is covered, so FreeRDP accepting a
    // stream whose last segment is cut means the runs before it covered the bitmap.
    if (rule == "segment cut short")
      return "FreeRDP too lenient: bytes after the runs that cover the bitmap (a cut segment), which FreeRDP "
             "never reads (MS-RDPEGFX 2.2.4.3: the segments are the stream)";
    if (rule == "unknown compression")
      return "FreeRDP too lenient: a compressed field other than 0 or 1, which FreeRDP reads as 1 "
             "(MS-RDPEGFX 2.2.4.3)";
    return nullptr;
  }
  // On an XRGB surface the fourth byte is no alpha: nothing reads it.
  size_t compared(const Message&) const override { return argb ? 4 : 3; }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5)
    return 0;
  static AlphaDifferential diff;
  Message m;
  m.d.w = uint16_t(1 + data[0] % kMaxRect);
  m.d.h = uint16_t(1 + data[1] % kMaxRect);
  m.d.x = uint16_t(data[2] % (kSide - m.d.w + 1));
  m.d.y = uint16_t(data[3] % (kSide - m.d.h + 1));
  diff.argb = (data[4] & 1) != 0;
  m.data = std::span<const uint8_t>(data + 5, size - 5);
  oracle::Begin b;
  b.codec = oracle::Codec::Alpha;
  b.side = kSide;
  b.argb = diff.argb ? 1 : 0;
  b.fillSeed = data[0] ^ (data[1] << 8) ^ (data[2] << 3);
  diff.begin(b, {data, size});
  diff.step(m, AlphaDecoder::decode(m.data, diff.oursAt(m.d)));
  return 0;
}
