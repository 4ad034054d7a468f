#include "bridge/frames/TileMap.h"

#include "privacy/SecureZero.h"

#include <algorithm>
#include <bit>

namespace gc {

void TileMap::resize(QSize desktop) {
  m_desktop = desktop.isValid() ? desktop : QSize();
  m_columns = (m_desktop.width() + kTileSize - 1) / kTileSize;
  m_rows = (m_desktop.height() + kTileSize - 1) / kTileSize;
  const size_t count = size_t(m_columns) * size_t(m_rows);
  m_history.assign(count, 0);
  m_changedFlags.assign(count, 0);
  m_boxes.assign(count, QRect());
  m_lossy.assign(count, 0);
  m_changed = 0;
}

QRect TileMap::tileRect(int column, int row) const {
  return QRect(column * kTileSize, row * kTileSize, kTileSize, kTileSize)
      .intersected(QRect(QPoint(0, 0), m_desktop));
}

void TileMap::beginFrame() {
  for (quint32& h : m_history) {
    h <<= 1;
  }
  std::fill(m_changedFlags.begin(), m_changedFlags.end(), quint8(0));
  m_changed = 0;
}

void TileMap::restartFrame() {
  for (quint32& h : m_history) {
    h &= ~1u;
  }
  std::fill(m_changedFlags.begin(), m_changedFlags.end(), quint8(0));
  m_changed = 0;
}

void TileMap::moveLossy(const QRect& from, const QPoint& to) {
  const QRect desktop(QPoint(0, 0), m_desktop);
  const QRect dest = QRect(to, from.size()).intersected(desktop);
  if (dest.isEmpty() || !desktop.contains(from)) {
    return;
  }
  const QPoint delta = from.topLeft() - to;
  const std::vector<quint8> before = m_lossy;
  for (int r = dest.top() / kTileSize; r <= dest.bottom() / kTileSize; ++r) {
    for (int c = dest.left() / kTileSize; c <= dest.right() / kTileSize; ++c) {
      const QRect tile = tileRect(c, r);
      const QRect source = tile.intersected(dest).translated(delta);
      bool lossy = !dest.contains(tile) && before[index(c, r)] != 0;
      for (int sr = source.top() / kTileSize; !lossy && sr <= source.bottom() / kTileSize; ++sr) {
        for (int sc = source.left() / kTileSize; sc <= source.right() / kTileSize; ++sc) {
          if (before[index(sc, sr)] != 0) {
            lossy = true;
            break;
          }
        }
      }
      m_lossy[index(c, r)] = lossy ? 1 : 0;
    }
  }
}

void TileMap::markChanged(int column, int row, const QRect& box, bool motion) {
  const size_t i = index(column, row);
  if (motion) {
    m_history[i] |= 1u;
  }
  if (m_changedFlags[i] == 0) {
    ++m_changed;
    m_changedFlags[i] = 1;
    m_boxes[i] = box;
  } else {
    m_boxes[i] = m_boxes[i].united(box);
  }
}

int TileMap::recentChanges(int column, int row, int window) const {
  const quint32 mask = window >= 32 ? ~0u : ((1u << window) - 1u);
  return std::popcount(m_history[index(column, row)] & mask);
}

bool TileMap::hasLossy() const {
  return std::any_of(m_lossy.begin(), m_lossy.end(), [](quint8 l) { return l != 0; });
}

void TileMap::wipe() {
  secureZero(m_history.data(), m_history.size() * sizeof(quint32));
  secureZero(m_changedFlags.data(), m_changedFlags.size());
  std::fill(m_boxes.begin(), m_boxes.end(), QRect());
  secureZero(m_lossy.data(), m_lossy.size());
  m_changed = 0;
}

void TileMap::release() {
  wipe();
  // Swap with empties: `v = {}` would keep the capacity.
  std::vector<quint32>().swap(m_history);
  std::vector<quint8>().swap(m_changedFlags);
  std::vector<QRect>().swap(m_boxes);
  std::vector<quint8>().swap(m_lossy);
  m_desktop = QSize();
  m_columns = 0;
  m_rows = 0;
}

qint64 TileMap::bytesHeld() const {
  return qint64(m_history.capacity() * sizeof(quint32) + m_changedFlags.capacity() +
                m_boxes.capacity() * sizeof(QRect) + m_lossy.capacity());
}

} // namespace gc
