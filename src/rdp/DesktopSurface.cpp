#include "rdp/DesktopSurface.h"

#include "privacy/SecureZero.h"

#include <cstring>
#include <string.h>

namespace gc {

namespace {

quint32 loadPixel(const uchar* p) {
  quint32 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// First and last differing pixel of two rows of `width` pixels; false when equal.
bool differingSpan(const uchar* a, const uchar* b, int width, int& first, int& last) {
  const std::size_t bytes = std::size_t(width) * DesktopSurface::kBytesPerPixel;
  if (std::memcmp(a, b, bytes) == 0)
    return false;
  first = 0;
  while (first < width && loadPixel(a + first * 4) == loadPixel(b + first * 4))
    ++first;
  last = width - 1;
  while (last > first && loadPixel(a + last * 4) == loadPixel(b + last * 4))
    --last;
  return true;
}

// Many small rectangles in one band become their bounding box, band by band; still too many,
// one box for all.
QList<QRect> boundedRects(const Region& region, int max) {
  const std::vector<QRect> all = region.rects();
  QList<QRect> rects(all.begin(), all.end());
  if (rects.size() <= max)
    return rects;
  QList<QRect> bands;
  for (const QRect& r : rects) {
    if (!bands.isEmpty() && bands.last().top() == r.top() && bands.last().bottom() == r.bottom())
      bands.last() = bands.last().united(r);
    else
      bands.append(r);
  }
  if (bands.size() <= max)
    return bands;
  return {region.boundingRect()};
}

} // namespace

DesktopSurface::DesktopSurface(std::span<uchar> memory) : m_memory(memory) {}

DesktopSurface::DesktopSurface(qsizetype capacity)
    : m_owned(capacity > 0 ? std::make_unique<uchar[]>(std::size_t(capacity)) : nullptr),
      m_memory(m_owned.get(), m_owned ? std::size_t(capacity) : 0) {}

DesktopSurface::~DesktopSurface() {
  if (m_owned)
    secureZero(m_owned.get(), m_memory.size());
}

bool DesktopSurface::fits(QSize size) const {
  if (size.width() < 1 || size.height() < 1)
    return false;
  const quint64 bytes = quint64(size.width()) * quint64(size.height()) * kBytesPerPixel;
  return bytes <= quint64(m_memory.size());
}

bool DesktopSurface::resize(QSize size) {
  if (!fits(size))
    return false;
  const std::size_t old = std::size_t(m_size.width()) * std::size_t(m_size.height()) * kBytesPerPixel;
  const std::size_t now = std::size_t(size.width()) * std::size_t(size.height()) * kBytesPerPixel;
  secureZero(m_memory.data(), std::max(old, now));
  m_size = size;
  m_resized = size;
  m_moves.clear();
  m_damage = Region(rect());
  m_changed = true;
  return true;
}

void DesktopSurface::addDamage(const QRect& area) {
  const QRect clipped = area.intersected(rect());
  if (!clipped.isEmpty()) {
    m_damage += clipped;
    m_changed = true;
  }
}

void DesktopSurface::touch(const QRect& area) {
  m_touched += area.intersected(rect());
}

DesktopSurface::Note DesktopSurface::takeNote() {
  Note note{boundedRects(m_touched, kMaxDamageRects), m_changed};
  m_touched = Region();
  m_changed = false;
  return note;
}

template <typename ChangeRow> void DesktopSurface::damageChangedRows(const QRect& dst, ChangeRow changeRow) {
  int bandTop = -1, bandLeft = 0, bandRight = 0;
  const auto closeBand = [&](int endRow) {
    if (bandTop >= 0)
      addDamage(QRect(QPoint(dst.left() + bandLeft, bandTop), QPoint(dst.left() + bandRight, endRow - 1)));
    bandTop = -1;
  };
  for (int row = 0; row < dst.height(); ++row) {
    uchar* to =
        m_memory.data() + qsizetype(dst.top() + row) * stride() + qsizetype(dst.left()) * kBytesPerPixel;
    int first = 0, last = 0;
    if (!changeRow(to, row, first, last)) {
      closeBand(dst.top() + row);
      continue;
    }
    if (bandTop < 0) {
      bandTop = dst.top() + row;
      bandLeft = first;
      bandRight = last;
    } else {
      bandLeft = std::min(bandLeft, first);
      bandRight = std::max(bandRight, last);
    }
  }
  closeBand(dst.top() + dst.height());
}

void DesktopSurface::copyCompare(const QRect& dst, const uchar* src, qsizetype srcStride) {
  const qsizetype rowBytes = qsizetype(dst.width()) * kBytesPerPixel;
  damageChangedRows(dst, [&](uchar* to, int row, int& first, int& last) {
    const uchar* from = src + qsizetype(row) * srcStride;
    if (!differingSpan(to, from, dst.width(), first, last))
      return false;
    std::memcpy(to, from, std::size_t(rowBytes));
    return true;
  });
}

bool DesktopSurface::write(const QRect& dst, const uchar* src, qsizetype srcStride) {
  if (!contains(dst) || !src || srcStride < qsizetype(dst.width()) * kBytesPerPixel)
    return false;
  touch(dst);
  copyCompare(dst, src, srcStride);
  return true;
}

bool DesktopSurface::fill(const QRect& dst, quint32 bgrx) {
  if (!contains(dst))
    return false;
  touch(dst);
  const quint32 value = bgrx | 0xFF000000u;
  damageChangedRows(dst, [&](uchar* to, int, int& first, int& last) {
    first = -1;
    for (int x = 0; x < dst.width(); ++x) {
      if (loadPixel(to + x * 4) != value) {
        if (first < 0)
          first = x;
        last = x;
        std::memcpy(to + x * 4, &value, sizeof value);
      }
    }
    return first >= 0;
  });
  return true;
}

bool DesktopSurface::move(const QRect& source, QPoint target) {
  const QPoint delta = target - source.topLeft();
  const QRect destination = source.translated(delta);
  if (!contains(source) || !contains(destination))
    return false;
  touch(destination);
  if (delta.isNull())
    return true;
  const qsizetype rowBytes = qsizetype(source.width()) * kBytesPerPixel;
  const auto rowAt = [this](int x, int y) {
    return m_memory.data() + qsizetype(y) * stride() + qsizetype(x) * 4;
  };
  // Overlap-safe: rows in the direction that never reads a row already overwritten.
  if (delta.y() > 0) {
    for (int row = source.height() - 1; row >= 0; --row)
      std::memmove(rowAt(destination.left(), destination.top() + row),
                   rowAt(source.left(), source.top() + row), std::size_t(rowBytes));
  } else {
    for (int row = 0; row < source.height(); ++row)
      std::memmove(rowAt(destination.left(), destination.top() + row),
                   rowAt(source.left(), source.top() + row), std::size_t(rowBytes));
  }
  m_changed = true;
  // The viewer applies the move to its previous picture before painting the damage: what
  // was damaged inside the source is damaged where it lands; what was damaged under the
  // target was overwritten by pixels the viewer already has (unless they were damaged too).
  const Region carried = m_damage.intersected(source).translated(delta).intersected(destination);
  m_damage = m_damage.subtracted(Region(destination)).united(carried);
  if (m_resized) {
    m_damage = Region(rect()); // a new desktop: everything is painted anyway
  } else if (m_moves.size() < kMaxMoves) {
    m_moves.append(Move{source, target});
  } else {
    m_damage += destination; // not replayed: the viewer paints the target instead
  }
  return true;
}

void DesktopSurface::noteWritten(const QRect& area) {
  touch(area);
  addDamage(area);
}

DesktopSurface::Changes DesktopSurface::takeChanges() {
  Changes changes;
  changes.resized = m_resized;
  changes.moves = std::move(m_moves);
  changes.damage = boundedRects(m_damage, kMaxDamageRects);
  m_resized.reset();
  m_moves.clear();
  m_damage = Region();
  return changes;
}

void DesktopSurface::wipe() {
  secureZero(m_memory.data(), m_memory.size());
  m_resized.reset();
  m_moves.clear();
  m_damage = Region();
  m_touched = Region();
  m_changed = false;
}

} // namespace gc
