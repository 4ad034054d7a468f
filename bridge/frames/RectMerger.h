// Turns the changed tiles into a few rectangles: horizontal runs of changed tiles per tile
// row, then runs with the same column span on consecutive rows merge vertically. Each
// rectangle is then shrunk to the union of its tiles' tight boxes. When the result is
// fragmented (more than maxRects, or the bounding box wastes little area) it becomes one
// bounding box: fewer, larger rects encode faster and compress better than many small ones.
// Stateless apart from its limits; used on the encoder thread.
#pragma once

#include <QList>
#include <QRect>

namespace gc {

class TileMap;

struct MergedRect {
  QRect tiles;  // in tile coordinates (columns x rows)
  QRect pixels; // in desktop pixels, tight around the changed pixels
};

class RectMerger {
public:
  // maxRects bounds the per-packet rect count (u16 on the wire; far smaller in practice).
  explicit RectMerger(int maxRects = 32) : m_maxRects(maxRects) {}

  QList<MergedRect> merge(const TileMap& tiles) const;

private:
  int m_maxRects;
};

} // namespace gc
