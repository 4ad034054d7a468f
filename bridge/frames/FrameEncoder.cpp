#include "bridge/frames/FrameEncoder.h"

#include "bridge/frames/FramePacket.h"

#include <QLoggingCategory>

namespace gc {

Q_LOGGING_CATEGORY(lcFrames, "gc.frames")

FrameEncoder::FrameEncoder() : FrameEncoder(Settings{}) {}

FrameEncoder::FrameEncoder(const Settings& settings)
    : m_merger(settings.maxRects), m_choice(settings.policy), m_png(settings.png), m_jpeg(settings.jpeg) {}

FrameResult FrameEncoder::encode(const FrameJob& job) {
  FrameResult result;
  result.frameId = job.frameId;
  result.guestSerial = job.guestSerial;
  const bool refineOnly = job.frame.isNull();
  QList<Move> moves;
  // Copy (shares, no pixels copied): the reference must not be read through a reference
  // to m_diff's member while commit() writes it.
  const QImage source = refineOnly ? m_diff.reference() : job.frame;
  if (source.isNull() || source.depth() != 32 || source.width() > 0xffff || source.height() > 0xffff) {
    result.bytesHeld = bytesHeld();
    return result;
  }
  if (m_tiles.desktop() != source.size()) {
    m_tiles.resize(source.size());
  }
  m_tiles.beginFrame();
  if (!refineOnly) {
    m_choice.beginFrame(job.lagging);
    if (job.full || !m_diff.matches(source)) {
      m_diff.detectAll(source, m_tiles);
    } else {
      m_diff.detect(source, job.damage, m_tiles);
      if (job.copies) {
        moves = findMoves(source, job.damage, job.guestMoves);
      }
    }
  }
  if (job.refine) {
    for (int r = 0; r < m_tiles.rows(); ++r) {
      for (int c = 0; c < m_tiles.columns(); ++c) {
        if (m_tiles.isLossy(c, r) && !m_tiles.isChanged(c, r)) {
          m_tiles.markChanged(c, r, m_tiles.tileRect(c, r), false);
        }
      }
    }
  }
  if (m_tiles.changedCount() == 0 && moves.isEmpty()) {
    result.lossyOutstanding = m_tiles.hasLossy();
    result.bytesHeld = bytesHeld();
    return result;
  }

  const QList<MergedRect> merged = m_merger.merge(m_tiles);
  FramePacket packet(job.frameId, source.size(), m_lastPacketBytes + m_lastPacketBytes / 4);
  QList<QRect> sent;
  sent.reserve(merged.size());
  bool everyChangeSent = true;
  for (const Move& move : moves) {
    // Fits by construction (inside the desktop, at most kMaxMoves, before any image).
    packet.addCopy(move.from, move.to);
    ++result.copyRects;
  }
  for (const MergedRect& rect : merged) {
    // A refinement exists to replace JPEG with exact pixels: never lossy.
    EncoderDecision decision = job.refine ? EncoderDecision{} : m_choice.choose(rect, m_tiles);
    bool ok = packet.beginRect(rect.pixels, decision.encoding);
    if (ok && decision.encoding == Encoding::Jpeg) {
      ok = m_jpeg.encode(source, rect.pixels, decision.quality, packet.data());
      if (!ok) {
        packet.abortRect();
        decision = EncoderDecision{};
        ok = packet.beginRect(rect.pixels, decision.encoding);
      }
    }
    if (ok && decision.encoding == Encoding::Png) {
      ok = m_png.encode(source, rect.pixels, packet.data());
    }
    if (!ok) {
      // Not sent: leave the reference alone so the area still differs, and mark it lossy
      // so the next refinement retries it.
      packet.abortRect();
      everyChangeSent = false;
      updateLossy(rect, Encoding::Jpeg);
      qCWarning(lcFrames) << "could not encode a" << rect.pixels.size() << "rect";
      continue;
    }
    packet.finishRect();
    sent.append(rect.pixels);
    updateLossy(rect, decision.encoding);
    result.jpegRects += decision.encoding == Encoding::Jpeg ? 1 : 0;
  }
  if (!refineOnly) {
    m_diff.commit(source, sent, everyChangeSent);
  }
  result.rects = packet.rectCount();
  if (result.rects > 0) {
    result.packet = packet.take();
    m_lastPacketBytes = result.packet.size();
  }
  result.lossyOutstanding = m_tiles.hasLossy();
  result.bytesHeld = bytesHeld();
  return result;
}

QList<Move> FrameEncoder::findMoves(const QImage& frame, const DamageMask& damage,
                                    const QList<Move>& guestMoves) {
  if (m_tiles.changedCount() == 0) {
    return {};
  }
  QRect changed;
  qint64 changedPixels = 0;
  for (int r = 0; r < m_tiles.rows(); ++r) {
    for (int c = 0; c < m_tiles.columns(); ++c) {
      if (m_tiles.isChanged(c, r)) {
        const QRect box = m_tiles.changedBox(c, r);
        changed = changed.united(box);
        changedPixels += qint64(box.width()) * box.height();
      }
    }
  }
  // The guest's own moves first, in its order: each is checked against the reference as the
  // moves before it left it, and applied there at once, as the panel will apply it.
  QList<Move> moves;
  for (const Move& move : guestMoves) {
    if (moves.size() >= MoveSearch::kMaxMoves) {
      break;
    }
    if (!m_diff.unmovedAt(move.from)) {
      m_diff.settle(); // it reads what an earlier move wrote
    }
    if (m_moves.confirms(frame, m_diff.reference(), move)) {
      m_diff.applyMove(move.from, move.to);
      m_tiles.moveLossy(move.from, move.to);
      moves.append(move);
    }
  }
  // Searched only when enough pixels changed for a copy to save anything: a few glyphs far
  // apart (typing, a caret and a status line) span a large box of unchanged rows, and hashing
  // that box twice per frame cost more than encoding the glyphs.
  if (moves.isEmpty() && changedPixels >= MoveSearch::kMinArea) {
    moves = m_moves.search(frame, m_diff.reference(), changed);
    for (const Move& move : moves) {
      m_diff.applyMove(move.from, move.to);
      m_tiles.moveLossy(move.from, move.to);
    }
  }
  if (moves.isEmpty()) {
    return moves;
  }
  // What is left to send is what the moved reference still lacks: the rows scrolled in, and
  // any pixel a move made wrong. So the diff looks at the damage and at every destination
  // (a destination may reach tiles the damage left out: the pixels there were right before).
  DamageMask moved = damage;
  for (const Move& move : moves) {
    moved.add(move.destination());
  }
  m_tiles.restartFrame();
  m_diff.detect(frame, moved, m_tiles);
  return moves;
}

void FrameEncoder::updateLossy(const MergedRect& rect, Encoding encoding) {
  for (int r = rect.tiles.top(); r <= rect.tiles.bottom(); ++r) {
    for (int c = rect.tiles.left(); c <= rect.tiles.right(); ++c) {
      if (!m_tiles.isChanged(c, r)) {
        continue;
      }
      if (encoding == Encoding::Jpeg) {
        m_tiles.setLossy(c, r, true);
      } else if (rect.pixels.contains(m_tiles.tileRect(c, r))) {
        // Only a PNG covering the whole tile makes all of it exact again.
        m_tiles.setLossy(c, r, false);
      }
    }
  }
}

void FrameEncoder::wipe() {
  m_diff.wipe();
  m_moves.wipe();
  m_tiles.wipe();
  m_jpeg.wipe();
}

void FrameEncoder::release() {
  m_diff.release();
  m_moves.release();
  m_tiles.release();
  m_jpeg.release();
  m_lastPacketBytes = 0;
}

qint64 FrameEncoder::bytesHeld() const {
  return m_diff.bytesHeld() + m_tiles.bytesHeld() + m_jpeg.bytesHeld() + m_moves.bytesHeld();
}

} // namespace gc
