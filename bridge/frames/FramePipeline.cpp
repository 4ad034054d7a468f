#include "bridge/frames/FramePipeline.h"

#include "bridge/frames/FrameWorker.h"
#include "privacy/SecureBytes.h"
#include "privacy/SecureImage.h"

namespace gc {

FramePipeline::FramePipeline(QObject* parent) : FramePipeline(Options{}, parent) {}

FramePipeline::FramePipeline(const Options& options, QObject* parent)
    : QObject(parent), m_options(options), m_worker(new FrameWorker(options.encoder)) {
  m_options.maxUnackedFrames = qMax(1, m_options.maxUnackedFrames);
  m_thread.setObjectName(QStringLiteral("gc-frame-encoder"));
  m_worker->moveToThread(&m_thread);
  connect(m_worker, &FrameWorker::encoded, this, &FramePipeline::onEncoded, Qt::QueuedConnection);
  m_refineTimer.setSingleShot(true);
  m_refineTimer.setInterval(m_options.refineDelayMs);
  connect(&m_refineTimer, &QTimer::timeout, this, &FramePipeline::onRefineTimeout);
  m_thread.start();
}

FramePipeline::~FramePipeline() {
  m_thread.quit();
  m_thread.wait();
  // The thread has finished: deleting its object from here is safe, and its destructor
  // zeroes the encoder buffers.
  m_worker->release();
  delete m_worker;
}

void FramePipeline::submit(const QImage& frame, const QList<QRect>& dirty,
                           const QList<std::pair<QRect, QPoint>>& guestMoves, quint64 guestSerial) {
  if (frame.isNull() || frame.width() > 0xffff || frame.height() > 0xffff) {
    return;
  }
  // Hints only (the encoder checks each against the frame): beyond a few, the oldest would
  // no longer describe what the panel holds, so all are dropped until the next job.
  if (m_copyRects && !m_movesLost) {
    for (const auto& [source, target] : guestMoves) {
      m_guestMoves.append(Move{source, target});
    }
    if (m_guestMoves.size() > 4 * MoveSearch::kMaxMoves) {
      m_guestMoves.clear();
      m_movesLost = true;
    }
  }
  m_latestSerial = std::max(m_latestSerial, guestSerial);
  QImage image = frame;
  if (image.format() != QImage::Format_RGB32 && image.format() != QImage::Format_ARGB32 &&
      image.format() != QImage::Format_ARGB32_Premultiplied) {
    image = image.convertToFormat(QImage::Format_RGB32);
  }
  if (m_damage.desktop() != image.size()) {
    // Resized desktop (or first frame): the mask restarts at the new size; the encoder sees
    // the size change and sends every pixel.
    m_damage = DamageMask(image.size());
    m_damage.addAll();
  }
  for (const QRect& rect : dirty) {
    m_damage.add(rect);
  }

  secureDrop(m_latest); // zeroes the previous frame if nobody else holds it any more
  m_latest = image;
  if (m_lossyOutstanding) {
    m_refineTimer.start(); // refinement waits for a quiet period
  }
  schedule();
}

void FramePipeline::acknowledge(quint32 frameId) {
  m_unacked.removeIf([frameId](quint32 sent) { return sent <= frameId; });
  quint64 shown = 0;
  while (!m_serialOfPacket.isEmpty() && m_serialOfPacket.front().first <= frameId) {
    shown = std::max(shown, m_serialOfPacket.front().second);
    m_serialOfPacket.pop_front();
  }
  if (shown > m_presented) {
    m_presented = shown;
    emit presented(shown);
  }
  Wiped ignored;
  wipeSent(false, ignored);
  schedule();
}

void FramePipeline::reset() {
  ++m_generation;
  m_guestMoves.clear();
  m_unacked.clear();
  m_serialOfPacket.clear();
  m_full = true;
  m_refine = false;
  m_lossyOutstanding = false;
  m_refineTimer.stop();
  schedule();
}

void FramePipeline::setPanelLagging(bool lagging) {
  m_lagging = lagging;
}

void FramePipeline::setCopyRects(bool enabled) {
  m_copyRects = enabled;
}

FramePipeline::Wiped FramePipeline::wipe() {
  Wiped wiped;
  ++m_generation;
  QMetaObject::invokeMethod(
      m_worker, [w = m_worker, &wiped] { wiped.encoderBytes = w->release(); }, Qt::BlockingQueuedConnection);
  wipeSent(true, wiped);
  wiped.packetBytesEmitted = std::exchange(m_bytesEmitted, 0);
  // The worker ran every job queued before the release: their results are stale and the
  // in-flight accounting ends here.
  m_wipedBelow = m_generation;
  m_encoding = false;
  m_inFlightBytes = 0;
  m_encoderBytes = 0;
  secureDrop(m_latest);
  m_guestMoves.clear();
  m_damage = DamageMask();
  m_unacked.clear();
  m_serialOfPacket.clear();
  m_latestSerial = 0;
  m_presented = 0;
  m_full = true;
  m_refine = false;
  m_lossyOutstanding = false;
  m_refineTimer.stop();
  sayEncoding();
  return wiped;
}

void FramePipeline::wipeSent(bool all, Wiped& wiped) {
  for (qsizetype i = 0; i < m_sent.size();) {
    QByteArray& packet = m_sent[i];
    if (packet.isDetached()) {
      wiped.packetBytes += secureWipe(packet);
      ++wiped.packetsWiped;
    } else if (all) {
      ++wiped.packetsShared;
    } else {
      ++i;
      continue;
    }
    m_sent.removeAt(i);
  }
}

qint64 FramePipeline::bytesHeld() const {
  return m_latest.sizeInBytes() + m_inFlightBytes + m_damage.bytesHeld() + m_encoderBytes;
}

void FramePipeline::schedule() {
  if (m_encoding || m_unacked.size() >= m_options.maxUnackedFrames) {
    sayEncoding();
    return;
  }
  const bool damaged = !m_latest.isNull() && (m_full || !m_damage.isEmpty());
  if (!damaged && !m_refine) {
    sayEncoding();
    return;
  }
  FrameJob job;
  if (damaged) {
    job.frame = m_latest;
    job.damage = m_damage;
    job.full = m_full;
  }
  job.refine = m_refine;
  job.lagging = m_lagging;
  job.copies = m_copyRects;
  job.guestMoves = std::exchange(m_guestMoves, {});
  m_movesLost = false;
  job.guestSerial = m_latestSerial;
  job.frameId = m_nextFrameId++;
  if (m_nextFrameId == 0) {
    m_nextFrameId = 1;
  }
  m_damage.clear();
  m_full = false;
  m_refine = false;
  m_encoding = true;
  m_inFlightBytes = job.frame.sizeInBytes();
  QMetaObject::invokeMethod(
      m_worker,
      [w = m_worker, job, generation = m_generation]() mutable {
        w->encode(job, generation);
        secureDrop(job.frame); // the queued call may hold the frame's last reference
      },
      Qt::QueuedConnection);
  sayEncoding();
}

void FramePipeline::sayEncoding() {
  if (m_encoding != m_encodingSaid) {
    m_encodingSaid = m_encoding;
    emit encodingChanged(m_encoding);
  }
}

void FramePipeline::onEncoded(const FrameResult& result, quint64 generation) {
  if (!result.packet.isEmpty()) {
    // The queued call's copy of the result is its last other holder: wipe on the next turn.
    m_sent.append(result.packet);
    QTimer::singleShot(0, this, [this] {
      Wiped ignored;
      wipeSent(false, ignored);
    });
  }
  if (generation < m_wipedBelow) {
    return;
  }
  m_encoding = false;
  m_inFlightBytes = 0;
  m_encoderBytes = result.bytesHeld;
  if (generation == m_generation) {
    m_lossyOutstanding = result.lossyOutstanding;
    if (m_lossyOutstanding) {
      m_refineTimer.start();
    }
    if (!result.packet.isEmpty()) {
      m_unacked.append(result.frameId);
      m_serialOfPacket.append({result.frameId, result.guestSerial});
      if (m_serialOfPacket.size() > kMaxUnacknowledged)
        m_serialOfPacket.pop_front();
      m_bytesEmitted += result.packet.size();
      emit packetReady(result.packet, result.frameId);
    }
  }
  schedule();
}

void FramePipeline::onRefineTimeout() {
  if (m_lossyOutstanding) {
    m_refine = true;
    schedule();
  }
}

} // namespace gc
