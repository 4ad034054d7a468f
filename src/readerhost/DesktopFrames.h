// The desktop as the console hands it on: a small pool of full-desktop frames that are
// reused, never reallocated per update.
//
// Threads: absorb() and resize() run on the console's main thread while RdpReader holds a
// lease on the shared desktop (the only time the reader process does not write it); take()
// runs on the main thread too; wipe() on any thread. One mutex (a leaf) guards the pool; it
// is held only while the rectangles of one lease are copied.
//
// Why a pool: a frame handed out (take()) is implicitly shared and immutable — the pipeline,
// the encoder thread and the capture may hold it for a while. Detaching on the next write
// (the old design) allocated and copied 8 MB per 1080p update, and freshly allocated frames
// cost page faults and page clearing on top. Here a frame is written again only once nobody
// else holds it (refcount 1); it is first brought up to date from the newest frame with just
// the rectangles it missed ("stale"), then the update's rectangles are compared row by row
// with what it shows and copied where they differ. Updates that repaint unchanged pixels (a
// server resending a static screen) therefore produce no damage and no hand-over at all.
//
// A frame is "published" when it is complete — at the server's end-of-frame marker, or after
// each update when the server marks no frames — and stays pinned until take() hands it out,
// while the worker already draws the next one into another frame. So a frame completed while
// the main thread was busy is never lost to the next one being half drawn.
#pragma once

#include <QImage>
#include <QList>
#include <QRect>
#include <QSize>

#include <chrono>
#include <mutex>
#include <optional>
#include <span>

namespace gc {

class DesktopFrames {
public:
  struct Absorbed {
    bool changed = false;      // some pixel differs from what the desktop showed before
    bool firstPending = false; // nothing was pending before: the caller posts one take()
  };
  struct Taken {
    QImage frame;                 // null when nothing changed since the last take()
    QList<QRect> dirty;           // where `frame` differs from the previous frame taken
    std::optional<QSize> resized; // the desktop was resized before `frame` (emit first)
  };

  // Worker: FreeRDP's GDI buffer (32 bpp, BGRX) after an update, and the rectangles it reported.
  Absorbed absorb(const uchar* gdi, qsizetype stride, QSize desktop, std::span<const QRect> rects);
  // Worker: the desktop changed size; every frame is dropped, the next absorb() is a full frame.
  bool resize(QSize desktop); // returns firstPending
  // Worker: the server's Surface Frame Markers. Between begin and end nothing is handed out,
  // so the panel never gets half of a frame (a full-screen frame arrives as many PDUs). A frame
  // left open longer than kFrameHold is handed out anyway (a server that never ends it).
  void beginFrame();
  bool endFrame();       // returns firstPending
  bool releaseOverdue(); // worker, between events; returns firstPending
  // Worker, between events: after kIdleTrim without updates, frees the frames nobody holds
  // (the spare kept for the next update): a static desktop costs only the frame on show.
  void trimIdle();
  // Main thread: the newest complete frame if one was published since the last take(), with
  // the damage since then.
  Taken take();
  // Any thread: zeroes every frame nobody else holds and forgets them all (privacy on close).
  void wipe();

  // For tests and bytesHeld accounting.
  int poolSize() const;
  qint64 bytesHeld() const;

private:
  struct Slot {
    QImage image;
    QList<QRect> stale; // changed in the newest frame since this one was current
  };
  // -1: no frame available. `wholeCopied`: the first frame (of this size) was copied whole.
  int pickBuilding(const uchar* gdi, qsizetype stride, QSize desktop, bool& wholeCopied);
  void dropFrames(); // zeroes the frames nobody holds, forgets all of them (m_mutex held)
  static void addRect(QList<QRect>& list, const QRect& rect);
  bool holding() const;      // inside a marked frame, not yet overdue (m_mutex held)
  bool publish();            // m_building is complete (m_mutex held); returns firstPending
  void freeUnheld(int keep); // frees frames nobody holds beyond `keep` (m_mutex held)

  mutable std::mutex m_mutex;
  QList<Slot> m_slots;
  int m_current = -1;       // the newest complete frame (published)
  bool m_published = false; // m_current awaits take(): pinned, never written or picked
  int m_building = -1;      // the frame absorb() writes; published when complete
  QList<QRect> m_damage;    // changed in m_building since it was picked
  QList<QRect> m_handout;   // changed in the published frames since the last take()
  std::optional<QSize> m_resized;
  bool m_pending = false; // a take() is due
  bool m_inFrame = false;
  std::chrono::steady_clock::time_point m_frameBegan;
  std::chrono::steady_clock::time_point m_lastAbsorb;
  bool m_trimmed = true; // nothing to free since the last trim
};

} // namespace gc
