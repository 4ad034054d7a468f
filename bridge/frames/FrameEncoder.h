// One frame, synchronously: change detection -> move search (copy records, when the panel
// takes them) -> rect merging -> encoder choice -> encode -> GCF1 packet, then the reference
// moves to what the packet carries. The worker runs it on
// the encoder thread; tests and the benchmark call it directly. Not thread-safe.
#pragma once

#include "bridge/frames/DamageMask.h"
#include "bridge/frames/EncoderChoice.h"
#include "bridge/frames/JpegEncoder.h"
#include "bridge/frames/MoveSearch.h"
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
  bool copies = false; // the panel applies copy records (its hello's "copy_rect")
  // The guest's own moves since the last job (RDPGFX SurfaceToSurface, CacheToSurface), in
  // order: tried first, each kept only if the frame shows it (MoveSearch::confirms).
  QList<Move> guestMoves;
  quint32 frameId = 0;
  quint64 guestSerial = 0; // the guest's serial of `frame` (FramePipeline::presented)
};

struct FrameResult {
  QByteArray packet; // empty when nothing changed
  quint32 frameId = 0;
  quint64 guestSerial = 0;
  int rects = 0;
  int jpegRects = 0;
  int copyRects = 0;
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
  const MoveSearch& moves() const { return m_moves; }

private:
  void updateLossy(const MergedRect& rect, Encoding encoding);
  // Finds moves in the changed area, applies them to the reference and the lossy map, and
  // diffs again against the moved reference. Returns the moves (to be written first).
  QList<Move> findMoves(const QImage& frame, const DamageMask& damage, const QList<Move>& guestMoves);

  TileMap m_tiles;
  TileDiff m_diff;
  MoveSearch m_moves;
  RectMerger m_merger;
  EncoderChoice m_choice;
  PngEncoder m_png;
  JpegEncoder m_jpeg;
  qsizetype m_lastPacketBytes = 0;
};

} // namespace gc
