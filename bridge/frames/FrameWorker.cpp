#include "bridge/frames/FrameWorker.h"

namespace gc {

FrameWorker::FrameWorker(const FrameEncoder::Settings& settings) : m_encoder(settings) {}

void FrameWorker::encode(const FrameJob& job, quint64 generation) {
  emit encoded(m_encoder.encode(job), generation);
}

void FrameWorker::release() {
  m_encoder.release();
}

} // namespace gc
