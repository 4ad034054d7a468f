#include "bridge/frames/RectMerger.h"

#include "bridge/frames/TileMap.h"

namespace gc {
namespace {

// The bounding box wins when it covers at most this much more tile area than the changed
// tiles themselves: one encoder call and one rect header instead of several.
constexpr double kBoundingBoxSlack = 1.25;

QRect tightPixels(const TileMap& tiles, const QRect& tileRange) {
  QRect box;
  for (int r = tileRange.top(); r <= tileRange.bottom(); ++r) {
    for (int c = tileRange.left(); c <= tileRange.right(); ++c) {
      if (tiles.isChanged(c, r)) {
        box = box.united(tiles.changedBox(c, r));
      }
    }
  }
  return box;
}

} // namespace

QList<MergedRect> RectMerger::merge(const TileMap& tiles) const {
  QList<QRect> closed; // tile coordinates
  QList<QRect> open;   // rects that reach the previous tile row
  int changedTiles = 0;
  QRect bounds;
  for (int r = 0; r < tiles.rows(); ++r) {
    QList<QRect> next;
    int c = 0;
    while (c < tiles.columns()) {
      if (!tiles.isChanged(c, r)) {
        ++c;
        continue;
      }
      const int start = c;
      while (c < tiles.columns() && tiles.isChanged(c, r)) {
        ++c;
      }
      changedTiles += c - start;
      QRect run(start, r, c - start, 1);
      bounds = bounds.united(run);
      for (qsizetype i = 0; i < open.size(); ++i) {
        if (open[i].left() == run.left() && open[i].right() == run.right()) {
          run = open[i].united(run);
          open.removeAt(i);
          break;
        }
      }
      next.append(run);
    }
    closed.append(open);
    open = next;
  }
  closed.append(open);

  if (closed.isEmpty()) {
    return {};
  }
  const qint64 boundsArea = qint64(bounds.width()) * bounds.height();
  if (closed.size() > m_maxRects || double(boundsArea) <= kBoundingBoxSlack * changedTiles) {
    closed = {bounds};
  }
  QList<MergedRect> merged;
  merged.reserve(closed.size());
  for (const QRect& range : closed) {
    merged.append({range, tightPixels(tiles, range)});
  }
  return merged;
}

} // namespace gc
