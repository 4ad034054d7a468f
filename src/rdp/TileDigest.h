// TileDigest: which 64x64 tiles of the desktop changed since they were last looked at, for a
// writer that draws in place. FreeRDP's GDI draws the legacy bitmap path straight into the
// surface of record (SessionSetup gives it the shared desktop as its primary buffer, issue
// 27.1), so the surface cannot compare old pixels with new ones the way DesktopSurface::write
// does; instead it keeps one 64-bit digest per tile (a 1080p desktop: 510 tiles, 4 KiB) and
// rehashes the tiles an update touched. A tile whose digest is unchanged is treated as
// unchanged: a collision (a changed tile with the same digest, 2^-64 per changed tile) would
// leave that tile's damage unreported until it changes again.
//
// Frames: a legacy frame (between Surface Frame Markers) is many updates, and an update draws
// only part of a tile, so one tile is touched many times per frame (a 1080p motion frame from
// the test guest: every tile about a dozen times). Inside a frame, touch() hashes a tile only
// until it is found changed; after that the tile is reported changed at every touch (it is,
// for this frame) without a hash, and settle() at the frame's end rehashes it once. So a
// changed tile costs at most two hashes per frame, an unchanged one one per touch, and no
// change goes unreported: a tile found changed is damage for the rest of the frame.
//
// Thread: the RDP worker only (like the surface it reads).
#pragma once

#include <QList>
#include <QRect>
#include <QSize>

#include <cstdint>
#include <vector>

namespace gc {

class TileDigest {
public:
  static constexpr int kTile = 64;

  // A new desktop size: every tile is unknown (the first look reports it changed).
  void reset(QSize desktop);
  QSize size() const { return m_size; }
  // An update that is a frame of its own: the tiles touching any of `rects` whose pixels
  // differ from the last look, clipped to the desktop; each tile is hashed once, and its
  // digest updated (touch() then settle()). `bits`: BGRX32 rows `stride` bytes apart,
  // `size()` of them.
  QList<QRect> changed(const uchar* bits, qsizetype stride, const QList<QRect>& rects);
  // An update inside an open frame: the same tiles, but a tile already found changed in this
  // frame is reported again without a hash (and rehashed by settle()).
  QList<QRect> touch(const uchar* bits, qsizetype stride, const QList<QRect>& rects);
  // The frame's end: the tiles touched after they were found changed get their final digest.
  void settle(const uchar* bits, qsizetype stride);

private:
  QRect tileRect(int column, int row) const;
  static uint64_t hash(const uchar* bits, qsizetype stride, const QRect& area);

  QSize m_size;
  int m_columns = 0;
  int m_rows = 0;
  enum class Seen : uint8_t { NotChanged, Changed, ChangedAndDrawnAgain }; // in this frame

  std::vector<uint64_t> m_digests;
  std::vector<bool> m_known;
  std::vector<Seen> m_seen;
};

} // namespace gc
