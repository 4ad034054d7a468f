// ProgressiveDecoder: RemoteFX Progressive (MS-RDPEGFX 2.2.4.2, 3.2.8; RDPGFX codec 0x0009,
// WireToSurface2), decoded by the console itself: SIMPLE and FIRST tiles (RLGR1, dequantisation,
// the tile difference, the classic or reduce-extrapolate inverse DWT), UPGRADE tiles (SRL and
// RAW bit planes), YCbCr -> BGRX. The output equals FreeRDP 3.10's C decoder on every stream
// both accept.
//
// State per surface exists only for the tiles that were decoded, bounded by the surface's 64x64
// grid and, for all surfaces together, by front::Limits' pixel budget (counted at kTileBytes a
// tile), and wiped (secureZero) when a tile, a surface or the decoder goes. A tile that only
// ever had passes replacing it keeps the RLGR1 bytes of the last one (a few KiB); one that an
// upgrade or a tile difference built on has its coefficients and signs (36 KiB) from then on,
// a block reused by its later passes. The pixels of a tile are not kept: they follow from its coefficients
// and are drawn into the caller's surface.
//
// A stream is checked before a coefficient is touched — its blocks, every tile header, and the
// bookkeeping across the stream: an UPGRADE or a tile difference on a tile with no first pass, a
// quantization or quality index out of range, an upgrade whose bit-plane counts do not add up
// (a band's bit position rising, more than 15 bits in a pass, a RAW length the counts cannot
// take) are RDP_PROTOCOL_VIOLATION and change nothing. Only an upgrade's SRL/RAW streams not
// ending where their bits do is found while decoding: the tiles before it in the stream keep
// their new state, nothing is drawn.
//
// Drawing: the tiles of the stream, through the rectangles of its last REGION (as FreeRDP
// clips), clipped to the surface. A stream without a REGION draws nothing.
//
// Thread: the RDP worker (one decoder per RDPGFX channel).
#pragma once

#include "rdp/codec/Pixels.h"
#include "rdp/codec/ProgressiveQuant.h"
#include "rdp/front/Limits.h"
#include "rdp/front/Violation.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace gc::codec {

class ProgressiveDecoder {
public:
  static constexpr std::string_view kPdu = "codec.Progressive";
  static constexpr uint32_t kTileSide = 64;
  static constexpr uint32_t kMaxRegions = 16;
  static constexpr uint32_t kMaxUpgradeBits = 15;

  struct Rect {
    uint32_t x = 0;
    uint32_t y = 0;
    uint32_t width = 0;
    uint32_t height = 0;
  };

  explicit ProgressiveDecoder(const front::Limits& limits);
  ~ProgressiveDecoder();
  ProgressiveDecoder(const ProgressiveDecoder&) = delete;
  ProgressiveDecoder& operator=(const ProgressiveDecoder&) = delete;

  // Idempotent for the same size; another size for a known surface is a violation.
  front::Checked<front::Ok> createSurface(uint16_t surfaceId, uint32_t width, uint32_t height);
  void deleteSurface(uint16_t surfaceId);
  void reset();
  size_t surfaces() const { return m_surfaces.size(); }
  // Tiles holding state, over all surfaces.
  size_t tiles() const { return m_tileCount; }
  // What the tiles' state holds now, over all surfaces (their bytes or coefficients).
  size_t bytesHeld() const;
  // The most one tile's state takes: three components' coefficients (16-bit) and signs (8-bit).
  static constexpr size_t kTileBytes = 3 * 4096 * (sizeof(int16_t) + sizeof(int8_t));

  // Decodes `stream` for the surface into `surface` (its pixels, exactly its size). keepX
  // leaves the fourth byte of every pixel as it was (an alpha surface); otherwise it is 0xFF.
  // `touched` receives the rectangles written.
  front::Checked<front::Ok> decode(uint16_t surfaceId, std::span<const uint8_t> stream, const Pixels& surface,
                                   bool keepX, std::vector<Rect>& touched);

private:
  struct Tile;
  struct Surface;
  struct Job;
  class Parser;

  Surface* find(uint16_t surfaceId);
  void render(const Surface& s, size_t index, const Pixels& surface, bool keepX, std::vector<Rect>& touched);

  front::Limits m_limits;
  std::vector<std::unique_ptr<Surface>> m_surfaces;
  size_t m_tileCount = 0;
  std::vector<Job> m_jobs;
  std::vector<Rect> m_rects;
  std::vector<uint32_t> m_drawn;
  std::unique_ptr<int16_t[]> m_scratch; // 3 components x 4096, plus 4096 of DWT temp
  std::unique_ptr<int8_t[]> m_signScratch;
};

} // namespace gc::codec
