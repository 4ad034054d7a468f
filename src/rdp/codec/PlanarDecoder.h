// PlanarDecoder: the RDP 6.0 planar codec (MS-RDPEGDI 2.2.2.5.1), as RDPGFX sends it (codec id
// 0x000B, rows top-down) and as legacy 32 bpp bitmaps carry it (rows bottom-up). Raw and RLE
// planes, RGB and YCoCg with colour loss and chroma subsampling, the alpha plane. The bitmap's
// size is the output's: every plane's length follows from it and is checked before its bytes
// are used; the output gets exactly width x height pixels or a Violation (then the caller
// discards it: planes already decoded may have been written into it, nothing outside it).
// No allocation: RLE planes are decoded into the output's own bytes and converted in place.
//
// Thread: stateless; any thread.
#pragma once

#include "rdp/codec/Pixels.h"
#include "rdp/front/Violation.h"

#include <cstdint>
#include <span>
#include <string_view>

namespace gc::codec {

class PlanarDecoder {
public:
  enum class Rows {
    TopDown,  // RDPGFX (MS-RDPEGFX 2.2.4.4)
    BottomUp, // legacy bitmap updates (MS-RDPBCGR 2.2.9.1.1.3.1.2.2)
  };
  enum class Alpha {
    Opaque,     // the X byte is 0xFF (the alpha plane is still validated)
    FromStream, // the X byte is the alpha plane's value (0xFF when the stream has none)
  };
  struct Options {
    Rows rows = Rows::TopDown;
    Alpha alpha = Alpha::Opaque;
  };

  static constexpr std::string_view kPdu = "codec.Planar";

  static front::Checked<front::Ok> decode(std::span<const uint8_t> stream, const Pixels& out,
                                          Options options);
  static front::Checked<front::Ok> decode(std::span<const uint8_t> stream, const Pixels& out) {
    return decode(stream, out, Options{});
  }
};

} // namespace gc::codec
