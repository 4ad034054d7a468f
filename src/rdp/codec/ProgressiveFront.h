// ProgressiveFront: validates a RemoteFX Progressive bitstream (MS-RDPEGFX 2.2.4.2, RDPGFX codec
// id 0x0009, WireToSurface2) completely before the decoder (ProgressiveDecoder, which checks
// again what it needs) sees it. Its rules were written against FreeRDP 3.10.3's decoder, the
// oracle the project's decoder equals, and stay as they are. It mirrors the state
// FreeRDP keeps per surface context (which tiles were decoded, at what bit position) so that a
// stream it accepts cannot make FreeRDP read coefficients it never wrote (an upgrade or a tile
// difference on a tile never decoded works on uninitialised heap in 3.10.3), shift by an
// underflowed count, index outside its tables or grid, or spin in the SRL decoder.
//
// Rules, in the order a stream meets them:
// - blocks: a 6-byte header; the length covers the header and lies inside the stream; known
//   types only; SYNC (magic, version) and CONTEXT (tile size 64) at most once each, before the
//   frame; one FRAME_BEGIN, REGIONs only inside it, the FRAME_END last; at most kMaxRegions
//   regions; the stream is not empty;
// - REGION: tile size 64, at least one rectangle, at most 7 quantization tables (FreeRDP's
//   table), rectangles inside the surface, quantization values in 6..15 (MS-RDPRFX
//   2.2.2.1.5), the four parts' sizes exactly the block's, numTiles at most the surface's grid
//   and equal to the tile blocks, which fill tileDataSize exactly;
// - tiles (SIMPLE, FIRST, UPGRADE): component lengths exactly the block's; the RLGR
//   components of SIMPLE/FIRST not empty; quantization indices < numQuant, quality 0xFF or
//   < numProgQuant; xIdx, yIdx inside the surface's 64x64 grid; no tile twice in one region;
//   only the RFX_TILE_DIFFERENCE flag; a tile difference or an UPGRADE only on a tile decoded
//   since the surface context was created; an UPGRADE never raises a band's bit position and
//   adds at most kMaxUpgradeBits bits to it, and its RAW length is what those bits can take.
//
// It reports what FreeRDP will touch: the tiles of the stream and the rectangles FreeRDP copies
// tiles through (the last REGION's, or, in a stream without one, those FreeRDP remembers from
// the last region it parsed), clipped to the surface: every pixel progressive_decompress writes
// lies inside them.
//
// Bounds: surfaces as front::Limits allows (count, side, pixels within the pixel budget), 36
// bytes of state per 64x64 tile; the rectangle and tile lists are bounded by the stream's bytes
// and reused from call to call.
//
// Thread: the RDP worker (one front per RDPGFX channel, like FreeRDP's progressive context).
#pragma once

#include "rdp/front/Limits.h"
#include "rdp/front/Violation.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace gc::codec {

class ProgressiveFront {
public:
  static constexpr std::string_view kPdu = "codec.Progressive";
  static constexpr uint32_t kTileSide = 64;
  static constexpr uint32_t kMaxRegions = 16;     // per stream (FreeRDP's encoder and Windows send one)
  static constexpr uint32_t kMaxUpgradeBits = 15; // a coefficient is 16 bits: one pass adds at most 15

  struct Rect {
    uint16_t x = 0;
    uint16_t y = 0;
    uint16_t width = 0;
    uint16_t height = 0;
  };
  enum class TileKind : uint8_t { Simple, First, Upgrade };
  struct Tile {
    uint16_t xIdx = 0;
    uint16_t yIdx = 0;
    TileKind kind = TileKind::Simple;
    uint8_t quality = 0xFF;
  };
  // Valid until the next call on this front.
  struct Update {
    std::span<const Rect> clip;  // inside the surface; FreeRDP writes nowhere else
    std::span<const Tile> tiles; // in stream order
    uint32_t regions = 0;
  };

  explicit ProgressiveFront(const front::Limits& limits);
  ~ProgressiveFront();
  ProgressiveFront(const ProgressiveFront&) = delete;
  ProgressiveFront& operator=(const ProgressiveFront&) = delete;

  // Mirrors progressive_create_surface_context (call both together, before the first stream
  // for the surface): idempotent for the same size.
  front::Checked<front::Ok> createSurface(uint16_t surfaceId, uint32_t width, uint32_t height);
  // Mirrors progressive_delete_surface_context.
  void deleteSurface(uint16_t surfaceId);
  // Every surface context gone (a new channel, the end of one).
  void reset();
  size_t surfaces() const { return m_surfaces.size(); }

  // On success FreeRDP may decode the stream for that surface; the front's mirror of the tile
  // state has advanced with it. On a Violation nothing changed.
  front::Checked<Update> check(uint16_t surfaceId, std::span<const uint8_t> stream);

private:
  struct TileState {
    uint8_t decoded = 0;        // a SIMPLE/FIRST tile was decoded here
    uint8_t bitPos[3][10] = {}; // per component and band: quantization + progressive shift
    uint32_t region = 0;        // the last region that named it (duplicates)
  };
  struct Surface {
    uint16_t id = 0;
    uint32_t width = 0;
    uint32_t height = 0;
    uint32_t gridWidth = 0;
    uint32_t gridHeight = 0;
    std::vector<TileState> tiles;
  };
  class Parser;

  Surface* find(uint16_t surfaceId);

  front::Limits m_limits;
  std::vector<Surface> m_surfaces;
  uint32_t m_regionSerial = 0;
  std::vector<Rect> m_lastRects;    // FreeRDP's remembered region (shared by all surfaces)
  std::vector<Rect> m_regionRects;  // the region being parsed
  std::vector<Rect> m_pendingRects; // the stream's last region, until the stream is accepted
  bool m_havePending = false;
  std::vector<Rect> m_clip;
  std::vector<Tile> m_tiles;
  std::vector<std::pair<size_t, TileState>> m_undo;
};

} // namespace gc::codec
