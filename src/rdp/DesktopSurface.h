// DesktopSurface: the surface of record. The guest's desktop lives in exactly one buffer
// (BGRX32, rows top-down, stride = width * 4) that the console owns; in the RDP reader
// process that buffer is the shared-memory desktop the console reads under a lease. Every
// writer (the RDPGFX client's output surface, the legacy bitmap path) writes through here,
// compare-and-copy, so takeChanges() reports only pixels that really changed, plus the moves
// the guest made inside the desktop (RDPGFX SurfaceToSurface and CacheToSurface on the output,
// a scroll found in the damage), which the panel replays from the picture it already has.
//
// Changes are what a viewer that shows the previous state needs to show this one: first the
// resize (if any: the whole desktop is then damaged), then every move in order, applied to
// the previous picture, then the damage, painted from this surface's pixels. A move folds
// the damage inside its source into its target, so the order of writes and moves is kept.
//
// Bounds: the surface never allocates after construction; resize() refuses a size that does
// not fit the memory it was given. Writers validate their own rectangles first (a rectangle
// outside the desktop is the guest's protocol violation, not ours); every write here checks
// again and writes nothing when the rectangle does not lie inside.
//
// Thread: the RDP worker only. Whoever reads the pixels from another thread or process does
// so only while the worker is held off (the lease), never concurrently with a write.
#pragma once

#include "common/Region.h"

#include <QList>
#include <QPoint>
#include <QRect>
#include <QSize>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>

namespace gc {

class DesktopSurface {
public:
  struct Move {
    QRect source;  // inside the desktop
    QPoint target; // top-left of the destination; source.translated(target - topLeft) inside too
    friend bool operator==(const Move&, const Move&) = default;
  };
  struct Changes {
    std::optional<QSize> resized; // the desktop changed size before the rest (all of it is damaged)
    QList<Move> moves;            // replayed in order on the previous picture
    QList<QRect> damage;          // then painted from the surface, disjoint, inside the desktop
    bool empty() const { return !resized && moves.isEmpty() && damage.isEmpty(); }
  };

  // Moves recorded per change set; beyond it a move is still performed but reported as
  // damage of its target. Damage rectangles per change set; beyond it they are merged into
  // their bounding boxes, row band by row band.
  static constexpr int kMaxMoves = 64;
  static constexpr int kMaxDamageRects = 256;
  static constexpr int kBytesPerPixel = 4;

  // `memory`: the buffer the desktop lives in (the shared-memory desktop); its size is the
  // capacity. Without one the surface allocates `capacity` bytes itself, once, zeroed.
  explicit DesktopSurface(std::span<uchar> memory);
  explicit DesktopSurface(qsizetype capacity);
  ~DesktopSurface(); // zeroes what it owns
  DesktopSurface(const DesktopSurface&) = delete;
  DesktopSurface& operator=(const DesktopSurface&) = delete;

  qsizetype capacity() const { return qsizetype(m_memory.size()); }
  // Whether `size` fits the memory (both sides >= 1 and width * height * 4 <= capacity).
  bool fits(QSize size) const;
  // A new size: the pixels are zeroed, moves are dropped, the whole desktop is damaged.
  // False (and nothing changes) when the size does not fit.
  bool resize(QSize size);

  QSize size() const { return m_size; }
  QRect rect() const { return QRect(QPoint(0, 0), m_size); }
  qsizetype stride() const { return qsizetype(m_size.width()) * kBytesPerPixel; }
  const uchar* constBits() const { return m_memory.data(); }
  // For a writer that decodes in place (it must report what it wrote with noteWritten()).
  uchar* bits() { return m_memory.data(); }
  bool contains(const QRect& area) const { return !area.isEmpty() && rect().contains(area); }

  // Copies `dst.size()` pixels from `src` (BGRX32, rows `srcStride` bytes apart) to `dst`;
  // only pixels that differ are damage. False, nothing written: `dst` not inside, or a
  // stride shorter than a row.
  bool write(const QRect& dst, const uchar* src, qsizetype srcStride);
  // Fills `dst` with one BGRX32 value (alpha byte ignored: written as 0xFF); compare-and-fill.
  bool fill(const QRect& dst, quint32 bgrx);
  // Copies `source` to `target` within the surface (overlap-safe) and records the move.
  bool move(const QRect& source, QPoint target);
  // An in-place writer changed pixels in `area` (clipped to the desktop). Prefer write():
  // this damages the whole area whether or not a pixel changed.
  void noteWritten(const QRect& area);

  bool hasChanges() const { return m_resized.has_value() || !m_moves.isEmpty() || !m_damage.isEmpty(); }

  // What the writers touched since the last note, whether or not a pixel changed (an answer
  // to a Refresh Rect repaints pixels the desktop already shows), and whether any changed:
  // what the lock's guest sync watches (rdp/GuestSync.h), frame by frame.
  struct Note {
    QList<QRect> touched; // bounded like the damage
    bool changed = false;
  };
  Note takeNote();
  // What changed since the last take; the surface then starts a new change set.
  Changes takeChanges();

  // Zeroes the whole buffer and forgets the changes (privacy at close). The size is kept.
  void wipe();

private:
  void addDamage(const QRect& area);
  void touch(const QRect& area);
  // Rows [y0, y1) of `dst` that differ from `src`, as damage (leftmost/rightmost differing
  // columns of the band).
  void copyCompare(const QRect& dst, const uchar* src, qsizetype srcStride);
  // Calls changeRow(rowStart, row, first, last) for each row of dst (true: it changed between
  // columns first and last) and adds each band of changed rows, as wide as its widest change.
  template <typename ChangeRow> void damageChangedRows(const QRect& dst, ChangeRow changeRow);

  std::unique_ptr<uchar[]> m_owned;
  std::span<uchar> m_memory;
  QSize m_size;
  std::optional<QSize> m_resized;
  QList<Move> m_moves;
  Region m_damage;
  Region m_touched;
  bool m_changed = false;
};

} // namespace gc
