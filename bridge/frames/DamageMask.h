// Where the desktop may have changed since the last encoded frame, kept at tile
// granularity (TileMap::kTileSize). A bitmap, not a QRegion: uniting 10,000 tiny RDP rects
// into a QRegion is quadratic, while marking tiles is linear and the mask's size is fixed
// by the desktop size, so coalescing damage while the panel stalls never grows memory.
// A value type; the pipeline fills it on the main thread and hands a copy to the worker.
#pragma once

#include <QRect>
#include <QSize>

#include <vector>

namespace gc {

class DamageMask {
public:
  DamageMask() = default;
  explicit DamageMask(QSize desktop);

  QSize desktop() const { return m_desktop; }
  int columns() const { return m_columns; }
  int rows() const { return m_rows; }

  // Marks the tiles `rect` touches; the part outside the desktop is ignored.
  void add(const QRect& rect);
  void addAll();
  void clear();
  bool isEmpty() const { return m_marked == 0; }
  bool contains(int column, int row) const { return m_bits[size_t(row * m_columns + column)] != 0; }
  // The tile-aligned area covered, for tests and diagnostics.
  int markedTiles() const { return m_marked; }
  qint64 bytesHeld() const { return qint64(m_bits.capacity()); }

private:
  QSize m_desktop;
  int m_columns = 0;
  int m_rows = 0;
  int m_marked = 0;
  std::vector<quint8> m_bits;
};

} // namespace gc
