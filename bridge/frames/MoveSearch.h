// Move detection: finds areas of a new frame that are areas of what the panel already has,
// shifted vertically (a scroll that reached the console as plain damage), so they go out as
// GCF1 copy records instead of pixels. As guacamole-server's display plan does
// (src/libguac/display-plan-search.c): hashes of the previous presented frame's rows against
// the new frame's, a vote for the shift, then the runs of rows that match at that shift.
//
// Bounded CPU: one hash pass over the changed area of each image (of the new frame only,
// when the reference is the frame hashed last time), at most
// kMaxVotingRows rows vote, kShiftsTried shifts are checked row by row, at most kMaxMoves
// moves; the result needs no trust in the
// hashes, since the encoder diffs the frame against the moved reference afterwards (a hash
// collision costs bytes, never a wrong pixel).
//
// Owned by FrameEncoder; lives on the encoder thread. The row hashes are scratch derived
// from guest pixels: zeroed on wipe()/release().
#pragma once

#include <QImage>
#include <QList>
#include <QPoint>
#include <QRect>

#include <vector>

namespace gc {

struct Move {
  QRect from;
  QPoint to;
  QRect destination() const { return QRect(to, from.size()); }
};

class MoveSearch {
public:
  static constexpr int kMaxMoves = 4;
  static constexpr int kMinRows = 16;        // a shorter run is cheaper sent as pixels
  static constexpr int kMaxVotingRows = 512; // rows sampled to vote for the shift
  static constexpr int kMinVotes = 8;
  static constexpr int kMaxCandidates = 4; // reference rows a row hash may vote for
  static constexpr int kShiftsTried = 4;   // best-voted shifts checked on every row
  // Pixels changed (the changed tiles' own boxes, not the box around them all) before a
  // search is worth it; the area searched is at least as large.
  static constexpr qint64 kMinArea = 256 * 64;

  // Moves that turn `reference` into (most of) `frame` inside `area` (the changed pixels'
  // bounding box), in the order they must be applied; empty when none is worth sending.
  // Both images are 32-bit and of one size; `area` lies inside them.
  QList<Move> search(const QImage& frame, const QImage& reference, const QRect& area);
  // Whether a move the guest reported is worth a copy record: inside both images, at least
  // kMinArea / 16 pixels, and at least half of its destination rows equal the
  // reference's source rows exactly (memcmp, no hash).
  bool confirms(const QImage& frame, const QImage& reference, const Move& move) const;

  void wipe();
  void release();
  qint64 bytesHeld() const;

private:
  std::vector<quint64> m_frameRows;
  std::vector<quint64> m_referenceRows;
  qint64 m_hashedKey = 0; // the image m_frameRows were hashed from (QImage::cacheKey)
  QRect m_hashedArea;
};

} // namespace gc
