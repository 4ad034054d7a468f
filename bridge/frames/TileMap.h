// Per-tile state of the desktop on a fixed 64x64 grid: which tiles changed in the frame
// being encoded (with the tight box of the changed pixels, so a typed glyph costs a glyph,
// not a tile), a 32-frame change history (animation vs. UI, for EncoderChoice), and which
// tiles the panel currently holds only as lossy JPEG (to be refined losslessly when quiet).
// Owned by FrameEncoder; lives on the encoder thread.
#pragma once

#include <QRect>
#include <QSize>

#include <vector>

namespace gc {

class TileMap {
public:
  static constexpr int kTileSize = 64;

  // Clears everything; the grid covers `desktop`.
  void resize(QSize desktop);
  QSize desktop() const { return m_desktop; }
  int columns() const { return m_columns; }
  int rows() const { return m_rows; }
  // The tile's pixels, clipped to the desktop (edge tiles are smaller).
  QRect tileRect(int column, int row) const;

  // Starts a new frame: every tile's history moves one frame back, nothing is changed yet.
  void beginFrame();
  // Forgets what this frame marked (changed flags and this frame's history bit), keeping the
  // history: the encoder diffs again after moving its reference (MoveSearch).
  void restartFrame();
  // `box` (desktop pixels, inside the tile) holds every changed pixel of the tile. A change
  // that is not motion (full frame for a new panel, lossless refinement) stays out of the
  // history, so it cannot make an area look animated.
  void markChanged(int column, int row, const QRect& box, bool motion = true);
  bool isChanged(int column, int row) const { return m_changedFlags[index(column, row)] != 0; }
  QRect changedBox(int column, int row) const { return m_boxes[index(column, row)]; }
  int changedCount() const { return m_changed; }
  // In how many of the last `window` frames (this one included) the tile changed.
  int recentChanges(int column, int row, int window) const;

  void setLossy(int column, int row, bool lossy) { m_lossy[index(column, row)] = lossy ? 1 : 0; }
  bool isLossy(int column, int row) const { return m_lossy[index(column, row)] != 0; }
  bool hasLossy() const;
  // The panel moved `from`'s pixels to `to` (a copy record): the tiles under the destination
  // hold what the source tiles held, so any lossy source makes them lossy (conservative: a
  // refinement sends exact pixels again); a tile the destination covers wholly loses its own
  // state.
  void moveLossy(const QRect& from, const QPoint& to);

  // Zeroes all state in place (privacy), keeping the grid; release() also frees it.
  void wipe();
  void release();
  qint64 bytesHeld() const;

private:
  size_t index(int column, int row) const { return size_t(row) * size_t(m_columns) + size_t(column); }

  QSize m_desktop;
  int m_columns = 0;
  int m_rows = 0;
  int m_changed = 0;
  std::vector<quint32> m_history; // bit 0 = this frame, bit n = n frames ago
  std::vector<quint8> m_changedFlags;
  std::vector<QRect> m_boxes; // valid where m_changedFlags is set
  std::vector<quint8> m_lossy;
};

} // namespace gc
