#include "bridge/frames/EncoderChoice.h"

#include "bridge/frames/RectMerger.h"
#include "bridge/frames/TileMap.h"

namespace gc {

void EncoderChoice::beginFrame(bool panelLagging) {
  m_step = panelLagging ? qMin(m_step + 1, 2) : 0;
}

EncoderDecision EncoderChoice::choose(const MergedRect& rect, const TileMap& tiles) const {
  const qint64 area = qint64(rect.pixels.width()) * rect.pixels.height();
  if (area < m_policy.minLossyArea) {
    return {Encoding::Png, 0};
  }
  int changed = 0;
  int hot = 0;
  for (int r = rect.tiles.top(); r <= rect.tiles.bottom(); ++r) {
    for (int c = rect.tiles.left(); c <= rect.tiles.right(); ++c) {
      if (tiles.isChanged(c, r)) {
        ++changed;
        hot += tiles.recentChanges(c, r, m_policy.window) >= m_policy.hotChanges ? 1 : 0;
      }
    }
  }
  // Most of the changed area must be hot: one busy tile must not make a dialog lossy.
  if (changed > 0 && hot * 2 >= changed) {
    return {Encoding::Jpeg, quality()};
  }
  return {Encoding::Png, 0};
}

} // namespace gc
