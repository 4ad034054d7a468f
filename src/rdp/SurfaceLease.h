// SurfaceLease: who may touch the surface of record (DesktopSurface) right now, the RDP worker
// that writes it or the reader that asked for it. A reader asks (request()), either for the
// next frame boundary — at once between frames; a frame left open longer than kFrameHold
// counts as ended — or for the next frame with changes at a boundary (a standing request: it
// spares the reader a "frame ready" and a request per frame). There the worker stops
// processing the guest's PDUs and grants it (serve()); it writes again only after giveBack().
// So a reader never sees half a frame, and the worker never writes while anyone reads. Also
// the worker's frame bookkeeping the grant depends on: whether a frame is open, and whether
// "a frame is ready" was said since the last grant.
//
// Thread: request(), giveBack() and wake() on any thread (the reader's: the main thread);
// the rest on the RDP worker only. The lease's flags are guarded by one leaf mutex.
#pragma once

#include <QtGlobal>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>

namespace gc {

class SurfaceLease {
public:
  // A frame the server began and has not ended for this long is handed out anyway.
  static constexpr std::chrono::milliseconds kFrameHold{100};

  SurfaceLease();
  SurfaceLease(const SurfaceLease&) = delete;
  SurfaceLease& operator=(const SurfaceLease&) = delete;
  ~SurfaceLease();

  enum class When {
    Boundary,   // at the next frame boundary, whatever changed (maybe nothing)
    FrameReady, // at the first frame boundary with changes (standing until then)
  };
  // The reader wants the pixels; wakes the worker's event wait. Idempotent while a lease is
  // held; a Boundary request makes a standing one due at once.
  void request(When when);
  // The reader is done: the worker may write again.
  void giveBack();
  // The session is stopping: a worker waiting for the lease's return looks at `stopped` again.
  void wake();

  // ---- the worker's side ---------------------------------------------------------------
  // A winpr event handle, set while a lease is pending: among the worker's wait handles.
  void* event() const { return m_event; }
  // Between events: when a lease is pending (a standing one: and `changed`) and the worker is
  // at a frame boundary, `grant` runs with the lease's serial (the changes are taken and the
  // reader told there), then the worker waits until the lease is given back or `stopped()`
  // holds. A request not granted leaves the event reset: the worker's wait does not spin on it.
  void serve(bool changed, const std::function<void(quint64 serial)>& grant,
             const std::function<bool()>& stopped);
  // A frame begins (no lease until it ends or kFrameHold passes) / ends.
  void frameBegan();
  void frameEnded() { m_frameOpen = false; }
  bool frameOpen() const { return m_frameOpen; }
  bool atFrameBoundary() const;
  // True once per grant: whether "a frame is ready" is to be said now. Never while a standing
  // request waits: the grant itself says it.
  bool takeReadyToSay();

private:
  std::mutex m_mutex; // a leaf; guards the three flags and the serial
  std::condition_variable m_returned;
  bool m_requested = false; // at the next boundary
  bool m_standing = false;  // at the next boundary with changes
  bool m_held = false;
  quint64 m_serial = 0;
  void* m_event; // a winpr manual-reset event

  // The worker's own.
  bool m_frameOpen = false;
  std::chrono::steady_clock::time_point m_frameOpenedAt;
  bool m_readySaid = false;
};

} // namespace gc
