#include "readerhost/ReaderFrames.h"

namespace gc {

namespace {

bool insideDesktop(const QRect& r, QSize size) {
  return !r.isEmpty() && QRect(QPoint(0, 0), size).contains(r);
}

} // namespace

ReaderFrames::ReaderFrames(QObject* parent) : QObject(parent) {
  m_unchangedTimer.setSingleShot(true);
  m_unchangedTimer.setInterval(kUnchangedPresent);
  connect(&m_unchangedTimer, &QTimer::timeout, this, [this] {
    if (m_handedLease <= m_presentedLease)
      emit presentDue(m_unchangedLease);
  });
  m_trim.setInterval(1000);
  connect(&m_trim, &QTimer::timeout, this, [this] { m_frames.trimIdle(); });
}

bool ReaderFrames::fitsShared(QSize size) const {
  return !size.isEmpty() && quint64(size.width()) * quint64(size.height()) <=
                                quint64(m_maxDesktop.width()) * quint64(m_maxDesktop.height());
}

void ReaderFrames::startSession() {
  m_handedLease = 0;
  m_presentedLease = 0;
  m_unchangedLease = 0;
}

std::optional<QString> ReaderFrames::absorb(const wire::Leased& leased, const uchar* pixels,
                                            Absorbed& result) {
  if (leased.serial <= m_lastSerial)
    return QStringLiteral("a lease out of order");
  const QSize size = leased.size;
  if (!fitsShared(size))
    return QStringLiteral("a lease of a desktop larger than the shared desktop");
  if (!leased.resized && size != m_size && !m_size.isEmpty())
    return QStringLiteral("a lease of another size without a resize");
  QList<QRect> rects;
  rects.reserve(leased.damage.size() + leased.moves.size());
  for (const QRect& r : leased.damage) {
    if (!insideDesktop(r, size))
      return QStringLiteral("damage outside the desktop");
    rects.append(r);
  }
  for (const wire::SurfaceMove& m : leased.moves) {
    const QRect target = m.source.translated(m.target - m.source.topLeft());
    if (!insideDesktop(m.source, size) || !insideDesktop(target, size))
      return QStringLiteral("a move outside the desktop");
    rects.append(target); // the pool compares and copies: a move's target is changed pixels
  }
  if (leased.resized) {
    m_pendingMoves.clear(); // moves of the old desktop mean nothing on the new one
    m_movesOverflowed = false;
  }
  if (!m_movesOverflowed) {
    m_pendingMoves += leased.moves;
    if (m_pendingMoves.size() > kMaxGuestMoves) {
      m_pendingMoves.clear();
      m_movesOverflowed = true;
    }
  }
  m_lastSerial = leased.serial;
  m_size = size;
  result = Absorbed{false, leased.resized};
  if (leased.resized)
    result.pending = m_frames.resize(size);
  if (!rects.isEmpty()) {
    const DesktopFrames::Absorbed absorbed =
        m_frames.absorb(pixels, qsizetype(size.width()) * 4, size,
                        std::span<const QRect>(rects.constData(), std::size_t(rects.size())));
    result.pending = result.pending || absorbed.firstPending;
    result.changed = result.changed || absorbed.changed;
  }
  return std::nullopt;
}

void ReaderFrames::settle(quint64 serial, const Absorbed& result) {
  if (!result.changed)
    presentUnchanged(serial);
  if (result.pending)
    handOut();
}

// A lease that changed no pixel (a server resending a static screen) has nothing to show:
// it is presented with the newest frame handed out, or, when that one was presented, after
// kUnchangedPresent (coalesced), so a static screen is not re-sent as fast as the guest can.
void ReaderFrames::presentUnchanged(quint64 lease) {
  m_unchangedLease = std::max(m_unchangedLease, lease);
  if (m_handedLease <= m_presentedLease && !m_unchangedTimer.isActive())
    m_unchangedTimer.start();
}

std::optional<quint64> ReaderFrames::present(quint64 upto) {
  if (upto >= m_handedLease)
    upto = std::max(upto, m_unchangedLease);
  if (upto <= m_presentedLease || upto > m_lastSerial)
    return std::nullopt;
  m_presentedLease = upto;
  return upto;
}

void ReaderFrames::handOut() {
  DesktopFrames::Taken taken = m_frames.take();
  // A resize reached the console already (Resized, before any frame of the new size).
  if (!taken.frame.isNull()) {
    // The frame holds every lease up to the last one absorbed: that is its serial.
    m_handedLease = m_lastSerial;
    FrameUpdate update{std::move(taken.frame), std::move(taken.dirty), {}, m_lastSerial};
    update.moves.reserve(m_pendingMoves.size());
    for (const wire::SurfaceMove& m : std::exchange(m_pendingMoves, {}))
      update.moves.append({m.source, m.target});
    m_movesOverflowed = false;
    emit frameUpdated(update);
  }
}

void ReaderFrames::wipe() {
  m_trim.stop();
  m_unchangedTimer.stop();
  m_frames.wipe();
}

} // namespace gc
