// Change detection. Keeps what the panel has (the pixels of every rectangle SENT so far, not
// of every frame submitted: when a packet carried every change, that is simply the frame it
// was encoded from, shared rather than copied) and compares a new frame against it,
// tile by tile, only where the damage mask says the RDP server drew. Because the reference
// only moves when a packet is built, damage coalesced over many frames while the panel
// stalls still diffs correctly against what the panel last received.
//
// Moves (copy records the panel applies) are applied to the reference lazily while it is a
// frame shared with its owner: they are kept as pending (source, offset) pairs and detect()
// reads the reference through them, so a scroll frame costs no copy of the desktop. A move
// whose areas overlap an earlier pending destination, a partial commit, or a read of
// reference() settles them (the reference is detached once and the moves applied for real).
// Owned by FrameEncoder; lives on the encoder thread.
#pragma once

#include <QImage>
#include <QList>
#include <QPoint>
#include <QRect>

namespace gc {

class DamageMask;
class TileMap;

class TileDiff {
public:
  // Marks in `tiles` (after TileMap::beginFrame) the tiles whose pixels differ from the
  // reference, with tight boxes. `frame` is Format_RGB32/ARGB32 and of the reference's size.
  // Returns the number of changed tiles.
  int detect(const QImage& frame, const DamageMask& damage, TileMap& tiles) const;
  // Marks every tile changed (full frame: panel has nothing, or the desktop was resized);
  // a reference of another size is dropped.
  void detectAll(const QImage& frame, TileMap& tiles);
  bool matches(const QImage& frame) const {
    return !m_reference.isNull() && m_reference.size() == frame.size();
  }

  // After a packet is built: the sent rectangles now hold `frame`'s pixels on the panel.
  // `everyChangeSent`: no changed area failed to encode, so the panel shows all of `frame`.
  void commit(const QImage& frame, const QList<QRect>& sent, bool everyChangeSent);
  // The panel applied a copy record: moves `from`'s pixels to `to` in the reference too:
  // pending while the reference is shared and the move's areas miss every earlier pending
  // destination, else applied at once (detaching a shared reference first).
  void applyMove(const QRect& from, const QPoint& to);
  // Whether `area` of the reference reads the same with the pending moves settled or not
  // (it meets no pending destination).
  bool unmovedAt(const QRect& area) const;
  // What the panel has (lossless truth; JPEG areas hold the source pixels, not the decoded).
  // Unmoved: callers read it where unmovedAt() holds, or settle() first.
  const QImage& reference() const { return m_reference; }
  // Applies the pending moves for real (one detach of a shared reference).
  void settle();
  int pendingMoves() const { return int(m_pending.size()); }

  // Zeroes the reference in place (privacy), or drops it when it is a frame shared with its
  // owner; release() also frees it.
  void wipe();
  void release();
  qint64 bytesHeld() const { return m_reference.sizeInBytes(); }

private:
  struct Pending {
    QRect destination;
    QPoint offset; // source = destination - offset
  };
  QRect changedBoxThroughMoves(const QImage& frame, const QRect& tile) const;

  QImage m_reference;
  QList<Pending> m_pending;
};

} // namespace gc
