#include "readerhost/DesktopFrames.h"

#include "privacy/SecureZero.h"

#include <atomic>
#include <cstring>
#include <strings.h>

namespace gc {

namespace {

// Damage and stale lists stay short: beyond this they collapse into their bounding box
// (more pixels compared downstream, never fewer).
constexpr qsizetype kMaxRects = 32;
// Free frames kept for the next update (typing alternates between two frames).
constexpr int kSpareFrames = 1;
// The longest a marked frame holds its updates back (a 1080p frame of uncompressed bands
// takes a few ms on loopback; a slow link or a server that never ends its frame is bounded).
constexpr std::chrono::milliseconds kFrameHold{100};
// A desktop without updates for this long gives its spare frame back.
constexpr std::chrono::seconds kIdleTrim{2};

void copyRect(QImage& to, const uchar* from, qsizetype stride, const QRect& rect) {
  const std::size_t rowBytes = std::size_t(rect.width()) * 4;
  for (int row = rect.top(); row <= rect.bottom(); ++row)
    std::memcpy(to.scanLine(row) + qsizetype(rect.left()) * 4,
                from + qsizetype(row) * stride + qsizetype(rect.left()) * 4, rowBytes);
}

void zeroPixels(QImage& image) {
  secureZero(image.bits(), std::size_t(image.sizeInBytes())); // guest pixels
}

// Only the pool holds it: nobody can read it while it is written. The acquire fence pairs
// with the release of the last other holder's reference (QImage's atomic deref).
bool onlyPoolHolds(const QImage& image) {
  if (!image.isDetached())
    return false;
  std::atomic_thread_fence(std::memory_order_acquire);
  return true;
}

} // namespace

void DesktopFrames::addRect(QList<QRect>& list, const QRect& rect) {
  if (list.size() < kMaxRects) {
    list.append(rect);
    return;
  }
  QRect bounds = rect;
  for (const QRect& r : list)
    bounds |= r;
  list = {bounds};
}

int DesktopFrames::pickBuilding(const uchar* gdi, qsizetype stride, QSize desktop, bool& wholeCopied) {
  wholeCopied = false;
  if (m_current >= 0 && m_slots[m_current].image.size() != desktop)
    dropFrames(); // a resize FreeRDP did not report through DesktopResize
  if (m_current < 0) {
    // Nothing handed out yet: the first frame is the whole desktop.
    Slot slot{QImage(desktop, QImage::Format_RGB32), {}};
    if (slot.image.isNull())
      return -1;
    copyRect(slot.image, gdi, stride, QRect(QPoint(0, 0), desktop));
    m_damage = {QRect(QPoint(0, 0), desktop)};
    wholeCopied = true;
    m_slots.append(std::move(slot));
    return int(m_slots.size()) - 1;
  }
  Slot& current = m_slots[m_current];
  if (!m_published && onlyPoolHolds(current.image))
    return m_current; // taken and dropped again: it is what the desktop shows, nothing to catch up
  const QImage& newest = current.image; // immutable while others hold it
  for (int i = 0; i < m_slots.size(); ++i) {
    Slot& slot = m_slots[i];
    if (i == m_current || !onlyPoolHolds(slot.image))
      continue;
    for (const QRect& rect : std::as_const(slot.stale))
      copyRect(slot.image, newest.constBits(), newest.bytesPerLine(), rect);
    slot.stale.clear();
    return i;
  }
  // Every frame is held (the console's, the pipeline's newest, the one being encoded): one
  // more. Holders are bounded, so the pool stays small.
  Slot slot{newest.copy(), {}};
  if (slot.image.isNull())
    return -1;
  m_slots.append(std::move(slot));
  return int(m_slots.size()) - 1;
}

DesktopFrames::Absorbed DesktopFrames::absorb(const uchar* gdi, qsizetype stride, QSize desktop,
                                              std::span<const QRect> rects) {
  Absorbed result;
  if (!gdi || desktop.isEmpty())
    return result;
  std::lock_guard lock(m_mutex);
  m_lastAbsorb = std::chrono::steady_clock::now();
  m_trimmed = false;
  bool wholeCopied = false;
  if (m_building < 0)
    m_building = pickBuilding(gdi, stride, desktop, wholeCopied);
  if (m_building < 0)
    return result;
  result.changed = wholeCopied;
  QImage& frame = m_slots[m_building].image;
  const QRect bounds(QPoint(0, 0), desktop);
  for (const QRect& reported : wholeCopied ? std::span<const QRect>() : rects) {
    const QRect rect = reported.intersected(bounds);
    if (rect.isEmpty())
      continue;
    const std::size_t rowBytes = std::size_t(rect.width()) * 4;
    const qsizetype left = qsizetype(rect.left()) * 4;
    int top = -1, bottom = -1;
    for (int row = rect.top(); row <= rect.bottom(); ++row) {
      const uchar* src = gdi + qsizetype(row) * stride + left;
      uchar* dst = frame.scanLine(row) + left; // detached: no copy
      if (std::memcmp(dst, src, rowBytes) == 0)
        continue;
      std::memcpy(dst, src, rowBytes);
      if (top < 0)
        top = row;
      bottom = row;
    }
    if (top >= 0) {
      addRect(m_damage, QRect(rect.left(), top, rect.width(), bottom - top + 1));
      result.changed = true;
    }
  }
  if (!holding())
    result.firstPending = publish();
  return result;
}

bool DesktopFrames::holding() const {
  return m_inFrame && std::chrono::steady_clock::now() - m_frameBegan < kFrameHold;
}

bool DesktopFrames::publish() {
  if (m_building < 0 || m_damage.isEmpty())
    return false;
  for (int i = 0; i < m_slots.size(); ++i) {
    if (i == m_building)
      continue;
    for (const QRect& rect : std::as_const(m_damage))
      addRect(m_slots[i].stale, rect);
  }
  // A published frame nobody took yet is superseded: it becomes a free frame like any other.
  m_current = std::exchange(m_building, -1);
  m_published = true;
  for (const QRect& rect : std::as_const(m_damage))
    addRect(m_handout, rect);
  m_damage.clear();
  if (m_pending)
    return false;
  m_pending = true;
  return true;
}

void DesktopFrames::beginFrame() {
  std::lock_guard lock(m_mutex);
  m_inFrame = true;
  m_frameBegan = std::chrono::steady_clock::now();
}

bool DesktopFrames::endFrame() {
  std::lock_guard lock(m_mutex);
  m_inFrame = false;
  return publish();
}

bool DesktopFrames::releaseOverdue() {
  std::lock_guard lock(m_mutex);
  return m_inFrame && !holding() && publish();
}

void DesktopFrames::dropFrames() {
  for (Slot& slot : m_slots) {
    if (onlyPoolHolds(slot.image))
      zeroPixels(slot.image);
  }
  m_slots.clear();
  m_current = m_building = -1;
  m_published = false;
  m_damage.clear();
  m_handout.clear();
}

bool DesktopFrames::resize(QSize desktop) {
  std::lock_guard lock(m_mutex);
  dropFrames();
  m_resized = desktop;
  const bool first = !m_pending;
  m_pending = true;
  return first;
}

DesktopFrames::Taken DesktopFrames::take() {
  std::lock_guard lock(m_mutex);
  Taken taken;
  taken.resized = std::exchange(m_resized, std::nullopt);
  m_pending = false;
  if (m_published && m_current >= 0) {
    m_published = false;
    taken.frame = m_slots[m_current].image;
    taken.dirty = std::exchange(m_handout, {});
  }
  freeUnheld(kSpareFrames); // the rest go back to the system (refilled on demand)
  return taken;
}

void DesktopFrames::freeUnheld(int keep) {
  int kept = 0;
  for (int i = int(m_slots.size()) - 1; i >= 0; --i) {
    if (i == m_current || i == m_building || !onlyPoolHolds(m_slots[i].image))
      continue;
    if (++kept <= keep)
      continue;
    zeroPixels(m_slots[i].image);
    m_slots.removeAt(i);
    if (m_current > i)
      --m_current;
    if (m_building > i)
      --m_building;
  }
}

void DesktopFrames::trimIdle() {
  std::lock_guard lock(m_mutex);
  if (m_trimmed || std::chrono::steady_clock::now() - m_lastAbsorb < kIdleTrim)
    return;
  m_trimmed = true;
  if (m_building >= 0 && m_damage.isEmpty() && m_building != m_current)
    m_building = -1; // nothing new in it: a spare like the others
  freeUnheld(0);
}

void DesktopFrames::wipe() {
  std::lock_guard lock(m_mutex);
  dropFrames();
  m_resized.reset();
  m_pending = false;
  m_inFrame = false;
}

int DesktopFrames::poolSize() const {
  std::lock_guard lock(m_mutex);
  return int(m_slots.size());
}

qint64 DesktopFrames::bytesHeld() const {
  std::lock_guard lock(m_mutex);
  qint64 bytes = 0;
  for (const Slot& slot : m_slots)
    bytes += slot.image.sizeInBytes();
  return bytes;
}

} // namespace gc
