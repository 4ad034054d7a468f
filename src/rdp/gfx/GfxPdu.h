// GfxPdu: the RDPGFX PDUs the server sends (MS-RDPEGFX 2.2.2), as typed values, and the
// parser that cuts one decompressed message into them. The parser checks the structure only
// (RDPGFX_HEADER cmdId and pduLength within the message, every field and array inside its
// PDU, the exact length each PDU kind has); whether a PDU is allowed here (surfaces, caches,
// caps, frames, sizes) is GfxFront's. Payloads (bitmapData) are views into the message.
//
// Pure: no FreeRDP. Thread: value types and a function; any thread.
#pragma once

#include "rdp/front/Violation.h"

#include <cstdint>
#include <optional>
#include <span>
#include <variant>
#include <vector>

namespace gc::gfx {

// MS-RDPEGFX 2.2.1.5 RECT16: right and bottom exclusive.
struct Rect16 {
  uint16_t left = 0, top = 0, right = 0, bottom = 0;
  bool empty() const { return right <= left || bottom <= top; }
  uint32_t width() const { return right > left ? uint32_t(right - left) : 0; }
  uint32_t height() const { return bottom > top ? uint32_t(bottom - top) : 0; }
  friend bool operator==(const Rect16&, const Rect16&) = default;
};
struct Point16 {
  uint16_t x = 0, y = 0;
};

enum class Cmd : uint16_t {
  WireToSurface1 = 0x0001,
  WireToSurface2 = 0x0002,
  DeleteEncodingContext = 0x0003,
  SolidFill = 0x0004,
  SurfaceToSurface = 0x0005,
  SurfaceToCache = 0x0006,
  CacheToSurface = 0x0007,
  EvictCacheEntry = 0x0008,
  CreateSurface = 0x0009,
  DeleteSurface = 0x000A,
  StartFrame = 0x000B,
  EndFrame = 0x000C,
  FrameAcknowledge = 0x000D,
  ResetGraphics = 0x000E,
  MapSurfaceToOutput = 0x000F,
  CacheImportOffer = 0x0010,
  CacheImportReply = 0x0011,
  CapsAdvertise = 0x0012,
  CapsConfirm = 0x0013,
  MapSurfaceToWindow = 0x0015,
  QoeFrameAcknowledge = 0x0016,
  MapSurfaceToScaledOutput = 0x0017,
  MapSurfaceToScaledWindow = 0x0018,
};

constexpr uint8_t kPixelFormatXrgb = 0x20; // GFX_PIXEL_FORMAT_XRGB_8888
constexpr uint8_t kPixelFormatArgb = 0x21; // GFX_PIXEL_FORMAT_ARGB_8888

struct WireToSurface1 {
  uint16_t surfaceId;
  uint16_t codecId;
  uint8_t pixelFormat;
  Rect16 dest;
  std::span<const uint8_t> data;
};
struct WireToSurface2 {
  uint16_t surfaceId;
  uint16_t codecId;
  uint32_t codecContextId;
  uint8_t pixelFormat;
  std::span<const uint8_t> data;
};
struct DeleteEncodingContext {
  uint16_t surfaceId;
  uint32_t codecContextId;
};
struct SolidFill {
  uint16_t surfaceId;
  uint32_t bgrx; // B, G, R as BGRX32 (the XA byte dropped)
  std::vector<Rect16> rects;
};
struct SurfaceToSurface {
  uint16_t sourceId;
  uint16_t destId;
  Rect16 source;
  std::vector<Point16> targets;
};
struct SurfaceToCache {
  uint16_t surfaceId;
  uint64_t cacheKey;
  uint16_t cacheSlot;
  Rect16 source;
};
struct CacheToSurface {
  uint16_t cacheSlot;
  uint16_t surfaceId;
  std::vector<Point16> targets;
};
struct EvictCacheEntry {
  uint16_t cacheSlot;
};
struct CreateSurface {
  uint16_t surfaceId;
  uint16_t width;
  uint16_t height;
  uint8_t pixelFormat;
};
struct DeleteSurface {
  uint16_t surfaceId;
};
struct StartFrame {
  uint32_t timestamp;
  uint32_t frameId;
};
struct EndFrame {
  uint32_t frameId;
};
struct ResetGraphics {
  uint32_t width;
  uint32_t height;
  uint32_t monitorCount;
};
struct MapSurfaceToOutput {
  uint16_t surfaceId;
  uint32_t originX;
  uint32_t originY;
};
struct CapsConfirm {
  uint32_t version;
  uint32_t flags;
  uint32_t dataLength;
};
// PDUs the console refuses whatever they say (client-to-server kinds, the RAIL and scaled
// maps, CacheImportReply for an offer never made): the kind is enough.
struct Refused {
  Cmd cmd;
};

using Pdu = std::variant<WireToSurface1, WireToSurface2, DeleteEncodingContext, SolidFill, SurfaceToSurface,
                         SurfaceToCache, CacheToSurface, EvictCacheEntry, CreateSurface, DeleteSurface,
                         StartFrame, EndFrame, ResetGraphics, MapSurfaceToOutput, CapsConfirm, Refused>;

// The evidence name of a PDU kind ("rdpgfx.SolidFill"); static strings.
std::string_view pduName(Cmd cmd);
std::string_view pduName(const Pdu& pdu);

// Most rectangles or points one SolidFill / SurfaceToSurface / CacheToSurface may carry
// (a bound on the work one PDU can ask for, far above what servers send).
constexpr std::size_t kMaxRectsPerPdu = 1024;
constexpr uint32_t kMaxMonitors = 16; // MS-RDPEGFX 2.2.2.14
constexpr uint32_t kResetGraphicsLength = 340;

// The PDUs of one decompressed message, one at a time (so a message of many small PDUs
// never makes a list): each next() is the following PDU, nullopt after the last, or the
// first structural violation (then the cursor stays there).
class PduCursor {
public:
  explicit PduCursor(std::span<const uint8_t> message) : m_message(message) {}
  front::Checked<std::optional<Pdu>> next();

private:
  std::span<const uint8_t> m_message;
  std::size_t m_pos = 0;
  bool m_failed = false;
};

} // namespace gc::gfx
