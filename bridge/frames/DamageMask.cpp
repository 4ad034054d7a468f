#include "bridge/frames/DamageMask.h"

#include "bridge/frames/TileMap.h"

namespace gc {

DamageMask::DamageMask(QSize desktop)
    : m_desktop(desktop.isValid() ? desktop : QSize()),
      m_columns((m_desktop.width() + TileMap::kTileSize - 1) / TileMap::kTileSize),
      m_rows((m_desktop.height() + TileMap::kTileSize - 1) / TileMap::kTileSize),
      m_bits(size_t(m_columns) * size_t(m_rows), 0) {}

void DamageMask::add(const QRect& rect) {
  const QRect clipped = rect.intersected(QRect(QPoint(0, 0), m_desktop));
  if (clipped.isEmpty()) {
    return;
  }
  const int c0 = clipped.left() / TileMap::kTileSize;
  const int c1 = clipped.right() / TileMap::kTileSize;
  const int r0 = clipped.top() / TileMap::kTileSize;
  const int r1 = clipped.bottom() / TileMap::kTileSize;
  for (int r = r0; r <= r1; ++r) {
    quint8* row = m_bits.data() + size_t(r) * size_t(m_columns);
    for (int c = c0; c <= c1; ++c) {
      m_marked += row[c] == 0 ? 1 : 0;
      row[c] = 1;
    }
  }
}

void DamageMask::addAll() {
  std::fill(m_bits.begin(), m_bits.end(), quint8(1));
  m_marked = int(m_bits.size());
}

void DamageMask::clear() {
  std::fill(m_bits.begin(), m_bits.end(), quint8(0));
  m_marked = 0;
}

} // namespace gc
