// One frame, synchronously: change detection -> rect merging -> encoder choice -> encode ->
// GCF1 packet, then the reference moves to what the packet carries. The worker runs it on
// the encoder thread; tests and the benchmark call it directly. Not thread-safe.
#pragma once

#include "bridge/frames/DamageMask.h"
#include "bridge/frames/EncoderChoice.h"
#include "bridge/frames/JpegEncoder.h"
#include "bridge/frames/PngEncoder.h"
#include "bridge/frames/RectMerger.h"
#include "bridge/frames/TileDiff.h"
#include "bridge/frames/TileMap.h"

#include <QByteArray>
#include <QImage>

namespace gc {

struct FrameJob {
  QImage frame;        // RGB32; null for a refinement-only job (encodes from the reference)
  DamageMask damage;   // where the frame may differ from the last sent one
  bool full = false;   // the panel has nothing: send every pixel
  bool refine = false; // re-send, losslessly, tiles the panel holds only as JPEG
  bool lagging = false;
  quint32 frameId = 0;
};

struct FrameResult {
  QByteArray packet; // empty when nothing changed
  quint32 frameId = 0;
  int rects = 0;
  int jpegRects = 0;
  bool lossyOutstanding = false; // some tiles await a lossless refinement
  qint64 bytesHeld = 0;          // the encoder's buffers after this frame
};

class FrameEncoder {
public:
  struct Settings {
    EncoderChoice::Policy policy;
    PngEncoder::Settings png;
    JpegEncoder::Settings jpeg;
    int maxRects = 32;
  };

  FrameEncoder();
  explicit FrameEncoder(const Settings& settings);

  FrameResult encode(const FrameJob& job);

  // Zeroes the reference frame, the tile state and the encoder scratch in place;
  // release() zeroes and frees them (the next frame is then a full one).
  void wipe();
  void release();
  qint64 bytesHeld() const;

  // For tests.
  const TileDiff& diff() const { return m_diff; }
  const TileMap& tiles() const { return m_tiles; }
  const JpegEncoder& jpeg() const { return m_jpeg; }

private:
  void updateLossy(const MergedRect& rect, Encoding encoding);

  TileMap m_tiles;
  TileDiff m_diff;
  RectMerger m_merger;
  EncoderChoice m_choice;
  PngEncoder m_png;
  JpegEncoder m_jpeg;
  qsizetype m_lastPacketBytes = 0;
};

} // namespace gc
