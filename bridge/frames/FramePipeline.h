// From the RDP session's frames to GCF1 binary frame updates for the panel (DESIGN.md §7).
//
// Threads: the pipeline lives on the main thread (all public functions and packetReady are
// main-thread only). Encoding runs on ONE dedicated encoder thread (FrameWorker), one frame
// at a time: one core's worth of CPU at most, in frame order, with no locks — jobs go to the
// worker as queued calls carrying an implicitly shared, immutable frame; results come back
// as a queued signal. No buffer is shared for writing between the two threads.
//
// Flow control: at most maxUnackedFrames packets (protocol limits.maxUnackedFrames) are
// unacknowledged, counting the one being encoded. Beyond that, submit() only COALESCES:
// damage is OR-ed into a fixed-size tile mask and only the newest frame is kept, so a
// stalled panel costs neither memory nor, once it acks, latency: the next packet carries
// the union of the damage, encoded from the newest frame, diffed against what the panel
// last received. A packet is always a whole frame (all its rects), never a partial one.
#pragma once

#include "bridge/frames/DamageMask.h"
#include "bridge/frames/FrameEncoder.h"

#include <QByteArray>
#include <QImage>
#include <QList>
#include <QObject>
#include <QRect>
#include <QThread>
#include <QTimer>

namespace gc {

class FrameWorker;

class FramePipeline : public QObject {
  Q_OBJECT
public:
  struct Options {
    int maxUnackedFrames = 2; // resources/protocol/panel-protocol.json limits.maxUnackedFrames
    // After this long without new frames, areas sent as JPEG are re-sent as PNG.
    int refineDelayMs = 250;
    FrameEncoder::Settings encoder;
  };

  explicit FramePipeline(QObject* parent = nullptr);
  explicit FramePipeline(const Options& options, QObject* parent = nullptr);
  ~FramePipeline() override;

  // One desktop frame and what travels with it. `frame` is the full desktop, Format_RGB32
  // (BGRX in memory), never written again by the caller (it is implicitly shared, not
  // copied); `dirty` is what changed since the previous submit. Other formats are converted
  // (slow path). `guestMoves`: the moves the guest made behind this frame (RDPGFX
  // SurfaceToSurface, CacheToSurface), in order, each as (source area, target top-left), kept
  // across coalesced frames as hints the encoder tries first when the panel takes copies.
  // `guestSerial`: the guest's serial of this frame (0: none); presented() reports it.
  void submit(const QImage& frame, const QList<QRect>& dirty,
              const QList<std::pair<QRect, QPoint>>& guestMoves = {}, quint64 guestSerial = 0);
  // The panel's frame_ack: acknowledges `frameId` and every earlier frame; presented()
  // follows when that shows a newer guest serial.
  void acknowledge(quint32 frameId);
  // A new panel connected: forget unacked frames; the next packet is a full frame.
  void reset();
  // Lowers JPEG quality (80 -> 60 -> 40) while set.
  void setPanelLagging(bool lagging);
  // Whether the panel applies GCF1 copy records (its hello's "copy_rect"): then moves found
  // in the damage (a scroll) go out as copies. Off until a panel says so.
  void setCopyRects(bool enabled);
  // What wipe() zeroed, and what it could not: a packet still shared with another holder
  // when the pipeline dropped it (that holder frees it unwiped).
  struct Wiped {
    qint64 encoderBytes = 0; // reference frame, tile state, JPEG scratch
    qint64 packetBytes = 0;  // packets emitted and not yet wiped
    int packetsWiped = 0;
    int packetsShared = 0;
    qint64 packetBytesEmitted = 0; // every packet handed on through packetReady
    bool complete() const { return packetsShared == 0; }
  };
  // Privacy on close: zeroes and frees the reference frame, tile state and encoder scratch
  // (blocks until the encoder thread has done so), zeroes the packets it emitted, drops the
  // frame held; the next packet after a new submit is a full frame.
  Wiped wipe();

  // Bytes the pipeline holds: frames referenced, damage mask, encoder buffers.
  qint64 bytesHeld() const;
  int unackedFrames() const { return int(m_unacked.size()); }
  // True while a frame is being encoded (tests wait for false before asserting "nothing").
  bool isEncoding() const { return m_encoding; }

signals:
  // One GCF1 message per frame, on the main thread.
  void packetReady(const QByteArray& packet, quint32 frameId);
  // The panel has shown every frame up to the one of guest serial `guestSerial`.
  void presented(quint64 guestSerial);
  // isEncoding() changed (once per change, after the pipeline scheduled what it could): a
  // frame submitted while encoding only replaces the newest one waiting.
  void encodingChanged(bool encoding);

private:
  void schedule();
  void sayEncoding(); // encodingChanged() if isEncoding() is not what it said last
  void onEncoded(const gc::FrameResult& result, quint64 generation);
  void onRefineTimeout();
  // Zeroes and drops the emitted packets nobody else holds any more; with `all`, drops the
  // rest too (counted as shared). Adds to `wiped`.
  void wipeSent(bool all, Wiped& wiped);

  Options m_options;
  QThread m_thread;
  FrameWorker* m_worker = nullptr; // lives on m_thread; deleted after it stops

  QImage m_latest; // newest frame submitted (shared with the caller, not a copy)
  DamageMask m_damage;
  bool m_full = true;
  bool m_refine = false;
  bool m_lagging = false;
  bool m_copyRects = false;
  QList<Move> m_guestMoves;   // since the last job, in order
  quint64 m_latestSerial = 0; // m_latest's guest serial
  // Each packet's frame id and the guest serial of the frame it shows (at most
  // kMaxUnacknowledged, the oldest dropped), so an ack names what the panel has shown;
  // m_presented: the newest reported.
  static constexpr qsizetype kMaxUnacknowledged = 64;
  QList<std::pair<quint32, quint64>> m_serialOfPacket;
  quint64 m_presented = 0;
  bool m_movesLost = false; // more than the encoder would try: none is a useful hint
  bool m_lossyOutstanding = false;

  bool m_encoding = false;
  bool m_encodingSaid = false; // what encodingChanged() said last
  qint64 m_inFlightBytes = 0;
  qint64 m_encoderBytes = 0;
  QList<quint32> m_unacked;
  // Every packet emitted (or encoded for a stale generation), kept until no other holder
  // remains so that the last reference zeroes it: the panel's socket copies what it sends,
  // and QByteArray frees without zeroing.
  QList<QByteArray> m_sent;
  qint64 m_bytesEmitted = 0;
  quint32 m_nextFrameId = 1;
  quint64 m_generation = 0; // bumped by reset()/wipe(): results of older jobs are stale
  quint64 m_wipedBelow = 0; // results of generations below this were accounted for by wipe()
  QTimer m_refineTimer;
};

} // namespace gc
