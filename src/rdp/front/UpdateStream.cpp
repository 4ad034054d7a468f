#include "rdp/front/UpdateStream.h"

#include "rdp/front/Wire.h"

#include <algorithm>

namespace gc::front {

namespace {

// Gather stages (what the scratch buffer holds when it is full).
enum Stage : uint8_t {
  kBitmapHead,     // updateType, numberRectangles
  kBitmapRect,     // TS_BITMAP_DATA up to bitmapLength
  kBitmapCompHdr,  // TS_CD_HEADER
  kPaletteHead,    // updateType, pad2, numberColors
  kSyncHead,       // updateType, pad2
  kSurfCmd,        // cmdType
  kSurfBits,       // destination rectangle + TS_BITMAP_DATA_EX up to bitmapDataLength
  kSurfExHdr,      // TS_COMPRESSED_BITMAP_HEADER_EX
  kFrameMarker,    // frameAction, frameId
  kPtrPosition,    // xPos, yPos
  kPtrSystem,      // systemPointerType
  kPtrCached,      // cacheIndex
  kPtrXorBpp,      // a new pointer's xorBpp
  kPtrColorAttr,   // TS_COLORPOINTERATTRIBUTE up to lengthXorMask
  kPtrLargeAttr,   // TS_LARGEPOINTERATTRIBUTE up to lengthXorMask
  kSlowPtrMessage, // messageType, pad2
};

constexpr uint16_t kUpdateTypeBitmap = 1;
constexpr uint16_t kUpdateTypePalette = 2;
constexpr uint16_t kUpdateTypeSynchronize = 3;
constexpr uint16_t kBitmapCompression = 0x0001;
constexpr uint16_t kNoBitmapCompressionHdr = 0x0400;
constexpr uint8_t kExCompressedBitmapHeaderPresent = 0x01;
constexpr uint32_t kMaxPaletteColors = 256;
// A Bitmap Update's rectangles: at least 18 bytes each in a PDU of at most 64 KiB (slow path)
// or the reassembly bound (fast path); this keeps FreeRDP's up-front array small as well.
constexpr uint32_t kMaxBitmapRectangles = 4096;

// Scanline of a pointer mask: `bits` per pixel, padded to a 2-byte boundary (MS-RDPBCGR
// 2.2.9.1.1.4.4).
constexpr uint64_t maskScanline(uint64_t width, uint64_t bits) {
  return ((width * bits + 15) / 16) * 2;
}

} // namespace

void UpdateStream::begin(Kind kind, std::string_view pdu, UpdateContext* context) {
  m_ctx = context;
  m_pdu = pdu;
  m_kind = kind;
  m_active = true;
  m_seen = 0;
  m_items = 0;
  m_xorBpp = 0;
  m_trailing = 0;
  m_afterDone = 0;
  m_skip = 0;
  switch (kind) {
  case Kind::Bitmap:
    gather(4, kBitmapHead);
    break;
  case Kind::Palette:
    gather(8, kPaletteHead);
    break;
  case Kind::SlowSynchronize:
    gather(4, kSyncHead);
    break;
  case Kind::Empty:
    m_step = Step::Done;
    break;
  case Kind::SurfaceCommands:
    gather(2, kSurfCmd);
    break;
  case Kind::PointerPosition:
    gather(4, kPtrPosition);
    break;
  case Kind::PointerSystem:
    gather(4, kPtrSystem);
    break;
  case Kind::PointerColor:
    m_xorBpp = 24;
    gather(14, kPtrColorAttr);
    break;
  case Kind::PointerNew:
    gather(2, kPtrXorBpp);
    break;
  case Kind::PointerLarge:
    gather(20, kPtrLargeAttr);
    break;
  case Kind::PointerCached:
    gather(2, kPtrCached);
    break;
  case Kind::SlowPointer:
    gather(4, kSlowPtrMessage);
    break;
  }
}

std::optional<Violation> UpdateStream::feed(std::span<const uint8_t> bytes) {
  m_seen += bytes.size();
  while (!bytes.empty()) {
    switch (m_step) {
    case Step::Gather: {
      const std::size_t n = std::min<std::size_t>(m_need - m_have, bytes.size());
      std::copy_n(bytes.data(), n, m_scratch.data() + m_have);
      m_have += uint32_t(n);
      bytes = bytes.subspan(n);
      if (m_have == m_need) {
        if (auto v = onHeader()) {
          m_active = false;
          return v;
        }
      }
      break;
    }
    case Step::Skip: {
      const std::size_t n = std::size_t(std::min<uint64_t>(m_skip, bytes.size()));
      m_skip -= n;
      bytes = bytes.subspan(n);
      if (m_skip == 0) {
        m_stage = m_afterSkip;
        if (auto v = onHeader()) { // the stage after a payload decides what follows it
          m_active = false;
          return v;
        }
      }
      break;
    }
    case Step::Done:
      m_afterDone += uint32_t(std::min<std::size_t>(bytes.size(), 0xFFFF));
      if (m_afterDone > m_trailing) {
        m_active = false;
        return protocol("data after the end of the update");
      }
      bytes = {};
      break;
    }
  }
  return std::nullopt;
}

std::optional<Violation> UpdateStream::finish() {
  const bool complete = m_step == Step::Done || (m_kind == Kind::SurfaceCommands && m_step == Step::Gather &&
                                                 m_stage == kSurfCmd && m_have == 0);
  m_active = false;
  if (!complete)
    return protocol("the update ends before what it declared");
  return std::nullopt;
}

// Called when the scratch buffer holds m_need bytes of stage m_stage, or (m_have == 0) when
// a skipped payload has ended and m_stage is the stage to resume.
std::optional<Violation> UpdateStream::onHeader() {
  const uint8_t* p = m_scratch.data();
  const Limits& limits = *m_ctx->limits;
  const uint64_t desktopPixels = uint64_t(m_ctx->desktopWidth) * m_ctx->desktopHeight;
  const bool afterPayload = m_step == Step::Skip;
  if (afterPayload) {
    // A payload has ended: what comes next.
    switch (m_kind) {
    case Kind::Bitmap:
      if (m_items == 0)
        m_step = Step::Done;
      else
        gather(18, kBitmapRect);
      return std::nullopt;
    case Kind::SurfaceCommands:
      gather(2, kSurfCmd);
      return std::nullopt;
    case Kind::PointerColor:
    case Kind::PointerNew:
    case Kind::SlowPointer:
      m_trailing = m_stage == kPtrColorAttr ? 1 : 0; // TS_COLORPOINTERATTRIBUTE's pad
      m_step = Step::Done;
      return std::nullopt;
    default:
      m_step = Step::Done;
      return std::nullopt;
    }
  }

  switch (m_stage) {
  case kBitmapHead: {
    if (le16(p) != kUpdateTypeBitmap)
      return protocol("updateType is not BITMAP");
    m_items = le16(p + 2);
    if (m_items > kMaxBitmapRectangles)
      return resource("numberRectangles beyond the bound");
    if (m_items == 0)
      m_step = Step::Done;
    else
      gather(18, kBitmapRect);
    return std::nullopt;
  }
  case kBitmapRect: {
    const uint32_t left = le16(p), top = le16(p + 2), right = le16(p + 4), bottom = le16(p + 6);
    const uint32_t width = le16(p + 8), height = le16(p + 10), bpp = le16(p + 12);
    const uint32_t flags = le16(p + 14), length = le16(p + 16);
    if (width == 0 || height == 0)
      return protocol("empty bitmap");
    if (left > right || top > bottom)
      return protocol("destination rectangle inverted");
    if (right >= m_ctx->desktopWidth || bottom >= m_ctx->desktopHeight)
      return protocol("destination rectangle outside the desktop");
    if (right - left + 1 > width || bottom - top + 1 > height)
      return protocol("bitmap smaller than its destination rectangle");
    if (uint64_t(width) * height > desktopPixels)
      return resource("bitmap larger than the desktop");
    if (bpp != 15 && bpp != 16 && bpp != 24 && bpp != 32)
      return protocol("bitsPerPixel the console does not decode");
    if (flags & ~uint32_t(kBitmapCompression | kNoBitmapCompressionHdr))
      return protocol("unknown bitmap flags");
    --m_items;
    if (flags & kBitmapCompression) {
      if (!(flags & kNoBitmapCompressionHdr)) {
        if (length < 8)
          return protocol("bitmapLength shorter than the compression header");
        m_bitmapLength = length;
        gather(8, kBitmapCompHdr);
        return std::nullopt;
      }
      if (length == 0)
        return protocol("compressed bitmap without data");
      skipThen(length, kBitmapRect);
      return std::nullopt;
    }
    const uint64_t row = uint64_t(width) * ((bpp + 7) / 8);
    if (length != row * height && length != ((row + 3) & ~uint64_t(3)) * height)
      return protocol("uncompressed bitmapLength inconsistent with width, height and bpp");
    skipThen(length, kBitmapRect);
    return std::nullopt;
  }
  case kBitmapCompHdr: {
    const uint32_t firstRow = le16(p), mainBody = le16(p + 2);
    if (firstRow != 0)
      return protocol("cbCompFirstRowSize is not zero");
    if (mainBody + 8u != m_bitmapLength)
      return protocol("cbCompMainBodySize inconsistent with bitmapLength");
    if (mainBody == 0)
      return protocol("compressed bitmap without data");
    skipThen(mainBody, kBitmapRect);
    return std::nullopt;
  }
  case kPaletteHead: {
    if (le16(p) != kUpdateTypePalette)
      return protocol("updateType is not PALETTE");
    const uint32_t colors = le32(p + 4);
    if (colors > kMaxPaletteColors)
      return protocol("numberColors beyond 256");
    if (colors == 0)
      m_step = Step::Done;
    else
      skipThen(uint64_t(colors) * 3, kPaletteHead);
    return std::nullopt;
  }
  case kSyncHead:
    if (le16(p) != kUpdateTypeSynchronize)
      return protocol("updateType is not SYNCHRONIZE");
    m_step = Step::Done;
    return std::nullopt;
  case kSurfCmd: {
    const uint16_t cmdType = le16(p);
    if (cmdType == 0x0001 || cmdType == 0x0006) // CMDTYPE_SET_SURFACE_BITS, CMDTYPE_STREAM_SURFACE_BITS
      gather(20, kSurfBits);
    else if (cmdType == 0x0004) // CMDTYPE_FRAME_MARKER
      gather(6, kFrameMarker);
    else
      return protocol("unknown surface command");
    return std::nullopt;
  }
  case kSurfBits: {
    const uint32_t left = le16(p), top = le16(p + 2), right = le16(p + 4), bottom = le16(p + 6);
    const uint32_t bpp = p[8], flags = p[9], codec = p[11];
    const uint32_t width = le16(p + 12), height = le16(p + 14), length = le32(p + 16);
    if (left >= right || top >= bottom)
      return protocol("destination rectangle empty or inverted");
    if (right > m_ctx->desktopWidth || bottom > m_ctx->desktopHeight)
      return protocol("destination rectangle outside the desktop");
    if (codec != 0)
      return protocol("a bitmap codec the console did not advertise");
    if (bpp != 32)
      return protocol("bpp other than 32");
    if (width != right - left || height != bottom - top)
      return protocol("bitmap size differs from its destination rectangle");
    if (flags & ~uint32_t(kExCompressedBitmapHeaderPresent))
      return protocol("unknown bitmap flags");
    if (uint64_t(length) != uint64_t(width) * height * 4)
      return protocol("bitmapDataLength inconsistent with width and height");
    if (flags & kExCompressedBitmapHeaderPresent) {
      m_bitmapLength = length;
      gather(24, kSurfExHdr);
    } else {
      skipThen(length, kSurfCmd);
    }
    return std::nullopt;
  }
  case kSurfExHdr:
    skipThen(m_bitmapLength, kSurfCmd);
    return std::nullopt;
  case kFrameMarker: {
    const uint16_t action = le16(p);
    if (action == 0x0000) { // SURFACECMD_FRAMEACTION_BEGIN
      if (m_ctx->framesOpen >= limits.maxFramesInFlight)
        return resource("frames begun beyond the bound");
      ++m_ctx->framesOpen;
    } else if (action == 0x0001) { // SURFACECMD_FRAMEACTION_END
      if (m_ctx->framesOpen == 0)
        return protocol("frame end without a begin");
      --m_ctx->framesOpen;
      ++m_ctx->framesEnded;
    } else {
      return protocol("unknown frameAction");
    }
    gather(2, kSurfCmd);
    return std::nullopt;
  }
  case kPtrPosition:
    m_step = Step::Done;
    return std::nullopt;
  case kPtrSystem: {
    const uint32_t type = le32(p);
    if (type != 0x00000000 && type != 0x00007F00) // SYSPTR_NULL, SYSPTR_DEFAULT
      return protocol("unknown systemPointerType");
    m_step = Step::Done;
    return std::nullopt;
  }
  case kPtrCached:
    if (le16(p) >= limits.maxPointerCacheEntries)
      return resource("pointer cache index beyond the cache");
    m_step = Step::Done;
    return std::nullopt;
  case kPtrXorBpp:
    m_xorBpp = le16(p);
    gather(14, kPtrColorAttr);
    return std::nullopt;
  case kPtrColorAttr:
    return pointerAttributes(false, m_xorBpp);
  case kPtrLargeAttr:
    return pointerAttributes(true, le16(p));
  case kSlowPtrMessage:
    switch (le16(p)) {
    case 0x0001: // TS_PTRMSGTYPE_SYSTEM
      gather(4, kPtrSystem);
      return std::nullopt;
    case 0x0003: // TS_PTRMSGTYPE_POSITION
      gather(4, kPtrPosition);
      return std::nullopt;
    case 0x0006: // TS_PTRMSGTYPE_COLOR
      m_xorBpp = 24;
      gather(14, kPtrColorAttr);
      return std::nullopt;
    case 0x0007: // TS_PTRMSGTYPE_CACHED
      gather(2, kPtrCached);
      return std::nullopt;
    case 0x0008: // TS_PTRMSGTYPE_POINTER
      gather(2, kPtrXorBpp);
      return std::nullopt;
    case 0x0009: // TS_PTRMSGTYPE_LARGE
      gather(20, kPtrLargeAttr);
      return std::nullopt;
    default:
      return protocol("unknown pointer messageType");
    }
  default:
    return protocol("internal: unknown stage");
  }
}

// TS_COLORPOINTERATTRIBUTE (after the xorBpp of a new pointer) or TS_LARGEPOINTERATTRIBUTE in
// the scratch buffer: cache index, size and both mask lengths, then the masks are skipped.
std::optional<Violation> UpdateStream::pointerAttributes(bool large, uint32_t xorBpp) {
  const uint8_t* p = m_scratch.data() + (large ? 2 : 0);
  const Limits& limits = *m_ctx->limits;
  const uint32_t cacheIndex = le16(p), width = le16(p + 6), height = le16(p + 8);
  const uint64_t andLength = large ? le32(p + 10) : le16(p + 10);
  const uint64_t xorLength = large ? le32(p + 14) : le16(p + 12);
  if (cacheIndex >= limits.maxPointerCacheEntries)
    return resource("pointer cache index beyond the cache");
  if (width > limits.maxPointerSide || height > limits.maxPointerSide)
    return resource("pointer larger than the bound");
  if (xorBpp != 1 && xorBpp != 4 && xorBpp != 8 && xorBpp != 16 && xorBpp != 24 && xorBpp != 32)
    return protocol("unknown xorBpp");
  if (xorLength != maskScanline(width, xorBpp) * height)
    return protocol("lengthXorMask differs from what width, height and xorBpp imply");
  if (andLength != 0 && andLength != maskScanline(width, 1) * height)
    return protocol("lengthAndMask differs from what width and height imply");
  const uint8_t stage = large ? kPtrLargeAttr : kPtrColorAttr;
  if (xorLength + andLength == 0) {
    m_trailing = large ? 0 : 1;
    m_step = Step::Done;
  } else {
    skipThen(xorLength + andLength, stage);
  }
  return std::nullopt;
}

} // namespace gc::front
