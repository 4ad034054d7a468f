// TileDigest: which 64x64 tiles of the desktop changed since they were last looked at, for a
// writer that draws in place. FreeRDP's GDI draws the legacy bitmap path straight into the
// surface of record (SessionSetup gives it the shared desktop as its primary buffer, issue
// 27.1), so the surface cannot compare old pixels with new ones the way DesktopSurface::write
// does; instead it keeps one 64-bit digest per tile (a 1080p desktop: 510 tiles, 4 KiB) and
// rehashes the tiles an update touched. A tile whose digest is unchanged is treated as
// unchanged: a collision (a changed tile with the same digest, 2^-64 per changed tile) would
// leave that tile's damage unreported until it changes again.
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
  // The tiles touching any of `rects` whose pixels differ from the last look, clipped to the
  // desktop; each tile is hashed once, and its digest updated. `bits`: BGRX32 rows `stride`
  // bytes apart, `size()` of them.
  QList<QRect> changed(const uchar* bits, qsizetype stride, const QList<QRect>& rects);

private:
  QRect tileRect(int column, int row) const;
  static uint64_t hash(const uchar* bits, qsizetype stride, const QRect& area);

  QSize m_size;
  int m_columns = 0;
  int m_rows = 0;
  std::vector<uint64_t> m_digests;
  std::vector<bool> m_known;
};

} // namespace gc
