// The encoder thread's object: owns the FrameEncoder (reference frame, tile state, encoder
// handles and scratch) so that all of it is touched by one thread only, and runs jobs in
// the order the pipeline queues them. Lives on FramePipeline's encoder thread; its slots are
// only ever invoked queued (or blocking-queued for release()) from the main thread.
#pragma once

#include "bridge/frames/FrameEncoder.h"

#include <QObject>

namespace gc {

class FrameWorker : public QObject {
  Q_OBJECT
public:
  explicit FrameWorker(const FrameEncoder::Settings& settings);

  // Encoder thread.
  void encode(const gc::FrameJob& job, quint64 generation);
  // Zeroes and frees the encoder's buffers; the bytes zeroed.
  qint64 release();

signals:
  void encoded(const gc::FrameResult& result, quint64 generation);

private:
  FrameEncoder m_encoder;
};

} // namespace gc
