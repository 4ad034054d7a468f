// Uncompressed: the size rules and copies for bitmaps sent as plain pixels. RDPGFX codec 0x0000
// (MS-RDPEGFX 2.2.2.1: XRGB_8888 or ARGB_8888, rows top-down, no padding) and legacy raw
// bitmaps (MS-RDPBCGR 2.2.9.1.1.3.1.2.2: rows bottom-up at 15, 16, 24 or 32 bpp; rows may be
// padded to four bytes). The length must be exactly what the size implies.
//
// Thread: stateless; any thread.
#pragma once

#include "rdp/codec/Pixels.h"
#include "rdp/front/Violation.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace gc::codec {

class Uncompressed {
public:
  static constexpr std::string_view kGfxPdu = "codec.Uncompressed";
  static constexpr std::string_view kBitmapPdu = "codec.RawBitmap";
  // RDPGFX pixel formats (MS-RDPEGFX 2.2.1.4).
  static constexpr uint8_t kXrgb8888 = 0x20;
  static constexpr uint8_t kArgb8888 = 0x21;

  // Whether `length` bytes are exactly a width x height RDPGFX bitmap in `pixelFormat`.
  static front::Checked<front::Ok> checkGfx(size_t length, uint8_t pixelFormat, uint32_t width,
                                            uint32_t height);
  // Copies it; the X byte is 0xFF for XRGB, the alpha for ARGB.
  static front::Checked<front::Ok> decodeGfx(std::span<const uint8_t> data, uint8_t pixelFormat,
                                             const Pixels& out);

  // The row length of a legacy raw bitmap, unpadded or padded to four bytes; 0 for an
  // unsupported depth.
  static size_t bitmapRowBytes(uint32_t width, uint32_t bpp, bool padded);
  static front::Checked<front::Ok> decodeBitmap(std::span<const uint8_t> data, uint32_t bpp,
                                                const Pixels& out);
};

} // namespace gc::codec
