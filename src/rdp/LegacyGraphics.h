// LegacyGraphics: the legacy graphics path drawn by the project's own decoders (src/rdp/codec)
// into the surface of record. Bitmap Updates (MS-RDPBCGR 2.2.9.1.1.3.1.2: interleaved at 15,
// 16 and 24 bpp, RDP 6.0 planar at 32 bpp, uncompressed at 15 to 32 bpp) and Set/Stream Surface
// Bits with codec 0 (2.2.9.2.1: 32 bpp, uncompressed). Each bitmap is checked against the
// desktop (destination inside, no larger than the bitmap, the bitmap no larger than the
// desktop) before a byte is decoded, decoded into a scratch of exactly its size, then copied
// compare-and-copy (DesktopSurface::write), so the damage is the pixels that really changed
// whoever wrote them before (the RDPGFX client writes the same surface). A bitmap that breaks a
// rule is a Violation and the desktop is left as it was.
//
// Std and Qt only (LegacyUpdates hands FreeRDP's parsed updates over), so tests drive it with
// a DesktopSurface alone.
//
// Thread: the RDP worker (like the surface it writes).
#pragma once

#include "rdp/DesktopSurface.h"
#include "rdp/codec/InterleavedDecoder.h"
#include "rdp/front/Violation.h"
#include "rdp/gfx/SurfaceTable.h"

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

namespace gc {

class LegacyGraphics {
public:
  static constexpr std::string_view kBitmapPdu = "legacy.Bitmap";
  static constexpr std::string_view kSurfaceBitsPdu = "legacy.SurfaceBits";

  // One TS_BITMAP_DATA as FreeRDP parsed it: the destination's right and bottom inclusive,
  // `data` the bitmap stream after any compression header.
  struct Bitmap {
    uint32_t left = 0, top = 0, right = 0, bottom = 0;
    uint32_t width = 0, height = 0, bpp = 0;
    bool compressed = false;
    std::span<const uint8_t> data;
  };
  // One TS_SURFCMD_*_SURF_BITS: the destination's right and bottom exclusive.
  struct SurfaceBits {
    uint32_t left = 0, top = 0, right = 0, bottom = 0;
    uint32_t width = 0, height = 0, bpp = 0, codecId = 0;
    std::span<const uint8_t> data;
  };

  explicit LegacyGraphics(DesktopSurface& desktop) : m_desktop(desktop) {}
  LegacyGraphics(const LegacyGraphics&) = delete;
  LegacyGraphics& operator=(const LegacyGraphics&) = delete;

  front::Checked<front::Ok> draw(const Bitmap& bitmap);
  front::Checked<front::Ok> draw(const SurfaceBits& bits);
  // Whether anything was drawn since the last call (an update that drew is a frame of its own
  // outside a marked frame).
  bool takeDrawn() { return std::exchange(m_drawn, false); }
  // A new desktop: the scratch goes (zeroed), the next bitmap allocates its own.
  void reset();

private:
  // The scratch for one bitmap of `width` x `height` (both checked against the desktop before).
  front::Checked<codec::Pixels> scratch(uint32_t width, uint32_t height, std::string_view pdu);
  front::Checked<front::Ok> copy(const QRect& destination, const codec::Pixels& pixels, std::string_view pdu);

  DesktopSurface& m_desktop;
  codec::InterleavedDecoder m_interleaved;
  gfx::ScratchPixels m_scratch; // a bitmap's pixels: at most the desktop's (checked before)
  bool m_drawn = false;
};

} // namespace gc
