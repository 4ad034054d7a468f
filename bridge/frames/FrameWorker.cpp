#include "bridge/frames/FrameWorker.h"

namespace gc {

FrameWorker::FrameWorker(const FrameEncoder::Settings& settings) : m_encoder(settings) {}

void FrameWorker::encode(const FrameJob& job, quint64 generation) {
  emit encoded(m_encoder.encode(job), generation);
}

qint64 FrameWorker::release() {
  const qint64 held = m_encoder.bytesHeld();
  m_encoder.release();
  return held;
}

} // namespace gc
