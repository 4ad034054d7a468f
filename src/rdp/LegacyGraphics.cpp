#include "rdp/LegacyGraphics.h"

#include "rdp/codec/PlanarDecoder.h"
#include "rdp/codec/Uncompressed.h"

namespace gc {

using front::Checked;
using front::Ok;
using front::Violation;

namespace {
constexpr uint32_t kCodecNone = 0; // RDP_CODEC_ID_NONE
} // namespace

void LegacyGraphics::reset() {
  m_scratch.release();
}

Checked<codec::Pixels> LegacyGraphics::scratch(uint32_t width, uint32_t height, std::string_view pdu) {
  const std::size_t stride = std::size_t(width) * codec::Pixels::kBytesPerPixel;
  uchar* bits = m_scratch.get(stride * height);
  if (!bits)
    return Violation::resource(pdu, "no scratch for the bitmap");
  return codec::Pixels{bits, stride, width, height};
}

Checked<Ok> LegacyGraphics::copy(const QRect& destination, const codec::Pixels& pixels,
                                 std::string_view pdu) {
  if (!m_desktop.write(destination, pixels.bits, qsizetype(pixels.stride)))
    return Violation::protocol(pdu, "destination rectangle outside the desktop");
  m_drawn = true;
  return Ok{};
}

Checked<Ok> LegacyGraphics::draw(const Bitmap& b) {
  // The rectangle first: inside the desktop, no larger than the bitmap it shows (FreeRDP's GDI
  // painted the bitmap's top-left corner there), the bitmap no larger than the desktop.
  if (b.width == 0 || b.height == 0 || b.width > codec::Pixels::kMaxSide ||
      b.height > codec::Pixels::kMaxSide)
    return Violation::protocol(kBitmapPdu, "bitmap size out of range");
  if (b.left > b.right || b.top > b.bottom)
    return Violation::protocol(kBitmapPdu, "destination rectangle inverted");
  const QRect destination(int(b.left), int(b.top), int(b.right - b.left + 1), int(b.bottom - b.top + 1));
  if (!m_desktop.contains(destination))
    return Violation::protocol(kBitmapPdu, "destination rectangle outside the desktop");
  if (uint32_t(destination.width()) > b.width || uint32_t(destination.height()) > b.height)
    return Violation::protocol(kBitmapPdu, "bitmap smaller than its destination rectangle");
  const QSize desktop = m_desktop.size();
  if (uint64_t(b.width) * b.height > uint64_t(desktop.width()) * uint64_t(desktop.height()))
    return Violation::resource(kBitmapPdu, "bitmap larger than the desktop");
  if (b.data.empty())
    return Violation::protocol(kBitmapPdu, "bitmap without data");

  const Checked<codec::Pixels> scratched = scratch(b.width, b.height, kBitmapPdu);
  if (front::isViolation(scratched))
    return std::get<Violation>(scratched);
  const codec::Pixels& pixels = std::get<codec::Pixels>(scratched);
  Checked<Ok> decoded = Ok{};
  if (!b.compressed) {
    decoded = codec::Uncompressed::decodeBitmap(b.data, b.bpp, pixels);
  } else if (b.bpp == 32) {
    codec::PlanarDecoder::Options options;
    options.rows = codec::PlanarDecoder::Rows::BottomUp;
    options.alpha = codec::PlanarDecoder::Alpha::Opaque;
    decoded = codec::PlanarDecoder::decode(b.data, pixels, options);
  } else if (b.bpp == 15 || b.bpp == 16 || b.bpp == 24) {
    decoded = m_interleaved.decode(b.data, b.bpp, pixels);
  } else {
    return Violation::protocol(kBitmapPdu, "bitsPerPixel the console does not decode");
  }
  if (front::isViolation(decoded))
    return decoded; // the scratch may hold part of it; the desktop nothing
  return copy(destination, pixels, kBitmapPdu);
}

Checked<Ok> LegacyGraphics::draw(const SurfaceBits& s) {
  if (s.left >= s.right || s.top >= s.bottom)
    return Violation::protocol(kSurfaceBitsPdu, "destination rectangle empty or inverted");
  const QRect destination(int(s.left), int(s.top), int(s.right - s.left), int(s.bottom - s.top));
  if (!m_desktop.contains(destination))
    return Violation::protocol(kSurfaceBitsPdu, "destination rectangle outside the desktop");
  // Only what the console advertised: no codec (its Surface Commands capability names none).
  if (s.codecId != kCodecNone)
    return Violation::protocol(kSurfaceBitsPdu, "a bitmap codec the console did not advertise");
  if (s.bpp != 32)
    return Violation::protocol(kSurfaceBitsPdu, "bpp other than 32");
  if (s.width != uint32_t(destination.width()) || s.height != uint32_t(destination.height()))
    return Violation::protocol(kSurfaceBitsPdu, "bitmap size differs from its destination rectangle");
  const Checked<codec::Pixels> scratched = scratch(s.width, s.height, kSurfaceBitsPdu);
  if (front::isViolation(scratched))
    return std::get<Violation>(scratched);
  // Rows bottom-up, as FreeRDP's GDI drew them (gdi_surface_bits: FREERDP_FLIP_VERTICAL).
  const codec::Pixels& pixels = std::get<codec::Pixels>(scratched);
  if (Checked<Ok> decoded = codec::Uncompressed::decodeBitmap(s.data, 32, pixels);
      front::isViolation(decoded))
    return Violation::protocol(kSurfaceBitsPdu, "bitmapDataLength inconsistent with width and height");
  return copy(destination, pixels, kSurfaceBitsPdu);
}

} // namespace gc
