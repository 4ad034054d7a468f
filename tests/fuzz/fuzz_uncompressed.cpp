// Uncompressed against FreeRDP 3.10.3's GDI (Differential.h): FreeRDP exports no decoder for
// plain pixels, so the oracles are its GDI's own paths: the RDPGFX handler for codec 0x0000
// (gdi/gfx.c, SurfaceCommand on a surface made by CreateSurface) and, for legacy raw bitmaps,
// rdpBitmap::Decompress (gdi/graphics.c) uncompressed. Input: kind (bit 0: legacy bitmap, else
// RDPGFX), width - 1, height - 1 (modulo 48), then
// - RDPGFX: x, y (modulo what is left of the 64 x 64 surface), formats (bit 0: the command is
//   ARGB_8888, bit 1: the surface is), the pixels;
// - legacy: depth (modulo 5: 15, 16, 24, 32, 8 bpp), the rows bottom-up.
#include "Differential.h"
#include "rdp/codec/Uncompressed.h"

#include <cstdint>

using gc::codec::Uncompressed;
using namespace gc::fuzz;

namespace {

constexpr uint32_t kSide = 64;
constexpr uint32_t kMaxRect = 48;

class UncompressedDifferential : public Differential {
public:
  UncompressedDifferential() : Differential("uncompressed", 4) {}
  bool legacy = false;
  bool argbSurface = false;

protected:
  const char* freerdpLenient(std::string_view, std::string_view rule, const Message& m) const override {
    if (legacy && rule == "colour depth not 15, 16, 24 or 32" && m.d.param == 8)
      return "outside the console's contract: 8 bpp (its session is 32 bpp and its front refuses "
             "bitsPerPixel 8 before any decoder, src/rdp/front/UpdateStream.cpp)";
    if (rule != "length does not match the bitmap")
      return nullptr;
    if (legacy && m.data.size() > Uncompressed::bitmapRowBytes(m.d.w, m.d.param, false) * m.d.h)
      return "FreeRDP too lenient: a raw bitmap longer than its rows, padded or not (MS-RDPBCGR "
             "2.2.9.1.1.3.1.2.2)";
    if (!legacy && m.data.size() > size_t(m.d.w) * m.d.h * 4)
      return "FreeRDP too lenient: bytes after the pixels (MS-RDPEGFX 2.2.2.1: the bitmap is width x height "
             "pixels of 4 bytes)";
    return nullptr;
  }
  const char* pixelsExplained(const Message& m, uint32_t, uint32_t, const uint8_t* ours,
                              const uint8_t* theirs) const override {
    const size_t tight = Uncompressed::bitmapRowBytes(m.d.w, m.d.param, false);
    const size_t padded = Uncompressed::bitmapRowBytes(m.d.w, m.d.param, true);
    if (legacy && padded != tight && m.data.size() == padded * m.d.h)
      return "pixels differ, explained: a raw bitmap with its rows padded to four bytes, which FreeRDP "
             "reads unpadded (gdi_Bitmap_Decompress copies with the tight stride; MS-RDPBCGR "
             "2.2.9.1.1.3.1.2.2 pads every row)";
    const bool sameColour = ours[0] == theirs[0] && ours[1] == theirs[1] && ours[2] == theirs[2];
    if (m.d.param == Uncompressed::kXrgb8888 && argbSurface && sameColour && ours[3] == 0xFF)
      return "pixels differ, explained: an XRGB_8888 command on an ARGB_8888 surface, whose X byte FreeRDP "
             "keeps as alpha; the format has no alpha (MS-RDPEGFX 2.2.1.4), Uncompressed makes it opaque";
    return nullptr;
  }
  // On an XRGB surface (and every legacy bitmap) the fourth byte is no alpha: nothing reads it.
  size_t compared(const Message&) const override { return argbSurface ? 4 : 3; }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4)
    return 0;
  static UncompressedDifferential diff;
  const bool legacy = (data[0] & 1) != 0;
  diff.legacy = legacy;
  Message m;
  m.d.w = uint16_t(1 + data[1] % kMaxRect);
  m.d.h = uint16_t(1 + data[2] % kMaxRect);
  oracle::Begin b;
  b.side = kSide;
  b.fillSeed = data[1] ^ (data[2] << 8);
  if (legacy) {
    static const uint32_t depths[5] = {15, 16, 24, 32, 8};
    m.d.param = depths[data[3] % 5];
    m.data = std::span<const uint8_t>(data + 4, size - 4);
    b.codec = oracle::Codec::RawBitmap;
    diff.argbSurface = false;
    diff.begin(b, {data, size});
    diff.step(m, Uncompressed::decodeBitmap(m.data, m.d.param, diff.oursAt(m.d)));
    return 0;
  }
  if (size < 6)
    return 0;
  m.d.x = uint16_t(data[3] % (kSide - m.d.w + 1));
  m.d.y = uint16_t(data[4] % (kSide - m.d.h + 1));
  m.d.param = (data[5] & 1) ? Uncompressed::kArgb8888 : Uncompressed::kXrgb8888;
  diff.argbSurface = (data[5] & 2) != 0;
  m.data = std::span<const uint8_t>(data + 6, size - 6);
  b.codec = oracle::Codec::UncompressedGfx;
  b.argb = diff.argbSurface ? 1 : 0;
  diff.begin(b, {data, size});
  diff.step(m, Uncompressed::decodeGfx(m.data, uint8_t(m.d.param), diff.oursAt(m.d)));
  return 0;
}
