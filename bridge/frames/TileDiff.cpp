#include "bridge/frames/TileDiff.h"

#include "bridge/frames/DamageMask.h"
#include "bridge/frames/FrameReader.h"
#include "bridge/frames/TileMap.h"
#include "privacy/SecureImage.h"

#include <QRegion>

#include <cstring>
#include <utility>

namespace gc {
namespace {

// Tight box of the pixels that differ inside `tile`, or an empty rect: `frame` at (x, y)
// against `reference` at (x, y) - `offset` (a moved area reads its source; `tile` - `offset`
// lies inside the reference). Rows are compared with memcmp (vectorised by libc); columns only
// inside the differing row span, scanning inwards from both edges, so a fully changed tile
// costs one row compare from each end.
QRect changedBox(const QImage& frame, const QImage& reference, const QRect& tile, QPoint offset = {}) {
  const int x = tile.x();
  const int w = tile.width();
  const size_t rowBytes = size_t(w) * 4;
  const int rx = x - offset.x();
  const int dy = offset.y();
  auto differs = [&](int y) {
    return std::memcmp(frame.constScanLine(y) + size_t(x) * 4,
                       reference.constScanLine(y - dy) + size_t(rx) * 4, rowBytes) != 0;
  };
  int top = tile.top();
  while (top <= tile.bottom() && !differs(top)) {
    ++top;
  }
  if (top > tile.bottom()) {
    return {};
  }
  int bottom = tile.bottom();
  while (bottom > top && !differs(bottom)) {
    --bottom;
  }
  int left = w;
  int right = -1;
  for (int y = top; y <= bottom; ++y) {
    // QImage scanlines are 32-bit aligned, and RGB32 pixels are 32-bit words.
    const auto* a = reinterpret_cast<const quint32*>(frame.constScanLine(y)) + x;
    const auto* b = reinterpret_cast<const quint32*>(reference.constScanLine(y - dy)) + rx;
    for (int i = 0; i < left; ++i) {
      if (a[i] != b[i]) {
        left = i;
        break;
      }
    }
    for (int i = w - 1; i > right; --i) {
      if (a[i] != b[i]) {
        right = i;
        break;
      }
    }
  }
  if (right < left) {
    return {};
  }
  return QRect(x + left, top, right - left + 1, bottom - top + 1);
}

// The panel's own rule for a copy record (FrameReader::applyCopy, which detaches a shared
// image), applied to our picture of the panel's canvas.
void moveInPlace(QImage& image, const QRect& destination, QPoint source) {
  FrameRecord copy;
  copy.encoding = Encoding::Copy;
  copy.area = destination;
  copy.source = source;
  FrameReader::applyCopy(image, copy);
}

} // namespace

int TileDiff::detect(const QImage& frame, const DamageMask& damage, TileMap& tiles) const {
  if (!matches(frame) || damage.desktop() != frame.size() || tiles.desktop() != frame.size()) {
    return 0;
  }
  for (int r = 0; r < tiles.rows(); ++r) {
    for (int c = 0; c < tiles.columns(); ++c) {
      if (!damage.contains(c, r)) {
        continue;
      }
      const QRect box = m_pending.isEmpty() ? changedBox(frame, m_reference, tiles.tileRect(c, r))
                                            : changedBoxThroughMoves(frame, tiles.tileRect(c, r));
      if (!box.isEmpty()) {
        tiles.markChanged(c, r, box);
      }
    }
  }
  return tiles.changedCount();
}

// The tile's parts inside pending destinations read their sources; the rest reads in place.
QRect TileDiff::changedBoxThroughMoves(const QImage& frame, const QRect& tile) const {
  QRect box;
  QRegion rest(tile);
  for (const Pending& p : m_pending) {
    const QRect part = tile.intersected(p.destination);
    if (part.isEmpty()) {
      continue;
    }
    box = box.united(changedBox(frame, m_reference, part, p.offset));
    rest -= p.destination;
  }
  for (const QRect& part : rest) {
    box = box.united(changedBox(frame, m_reference, part));
  }
  return box;
}

void TileDiff::detectAll(const QImage& frame, TileMap& tiles) {
  if (!matches(frame)) {
    release(); // commit() takes or allocates the new reference
  }
  for (int r = 0; r < tiles.rows(); ++r) {
    for (int c = 0; c < tiles.columns(); ++c) {
      tiles.markChanged(c, r, tiles.tileRect(c, r), false);
    }
  }
}

void TileDiff::commit(const QImage& frame, const QList<QRect>& sent, bool everyChangeSent) {
  if (everyChangeSent) {
    // The panel now shows `frame` everywhere (outside the sent rects it already did): share
    // it. No copy; the frame's owner never writes a frame anyone still holds. Pending moves
    // are in `frame` too (the panel applied them, then drew what they left wrong).
    m_pending.clear();
    secureDrop(m_reference); // our own copy (or a frame nobody else holds): zeroed
    m_reference = frame;
    return;
  }
  settle();
  if (!matches(frame)) {
    secureDrop(m_reference);
    m_reference = QImage(frame.size(), QImage::Format_RGB32);
  }
  const QRect bounds(QPoint(0, 0), frame.size());
  for (const QRect& rect : sent) {
    const QRect r = rect.intersected(bounds);
    const size_t bytes = size_t(r.width()) * 4;
    for (int y = r.top(); y <= r.bottom(); ++y) {
      // scanLine() detaches a shared reference first: the frame it came from stays intact.
      std::memcpy(m_reference.scanLine(y) + size_t(r.x()) * 4, frame.constScanLine(y) + size_t(r.x()) * 4,
                  bytes);
    }
  }
}

void TileDiff::applyMove(const QRect& from, const QPoint& to) {
  const QRect destination(to, from.size());
  const QRect bounds = m_reference.rect();
  if (!bounds.contains(from) || !bounds.contains(destination)) {
    return; // FrameReader::applyCopy ignores it too: the panel's canvas is this size
  }
  // Lazy while the reference is a shared frame and the move reads and writes nothing an
  // earlier pending move wrote: then every pending destination reads the unmoved reference.
  if (!m_reference.isDetached() && unmovedAt(from) && unmovedAt(destination)) {
    m_pending.append(Pending{destination, to - from.topLeft()});
    return;
  }
  settle();
  moveInPlace(m_reference, destination, from.topLeft());
}

bool TileDiff::unmovedAt(const QRect& area) const {
  for (const Pending& p : m_pending) {
    if (p.destination.intersects(area)) {
      return false;
    }
  }
  return true;
}

void TileDiff::settle() {
  // Disjoint destinations, none read by a later move: applying them in order reads only
  // unmoved pixels, as detect() did.
  const QList<Pending> pending = std::exchange(m_pending, {});
  for (const Pending& p : pending) {
    moveInPlace(m_reference, p.destination, p.destination.topLeft() - p.offset);
  }
}

void TileDiff::wipe() {
  m_pending.clear();
  if (m_reference.isNull()) {
    return;
  }
  if (!m_reference.isDetached()) {
    m_reference = QImage(); // a shared frame: its owner zeroes it when nobody holds it
    return;
  }
  secureZero(m_reference.bits(), size_t(m_reference.sizeInBytes()));
}

void TileDiff::release() {
  wipe();
  m_reference = QImage();
}

} // namespace gc
