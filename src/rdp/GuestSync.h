// GuestSync: the guest sync of the lock (DESIGN.md §6), as asynchronous state. "Written and
// flushed" only means the drained input left this process; a slow guest (or QEMU's user
// networking) can still hold it, and Capture Desktop must not start before the guest has
// processed and shown it. The round trip: a Refresh Rect request for a small area, which the
// guest's RDP server handles in order after the input PDUs before it, answered by an update
// that covers the WHOLE area and arrives after the request (an update that merely touches
// it is ordinary damage, not the answer). Then `quiet` without a changed pixel means the
// screen settled (not required after an answer: an animated desktop never settles).
//
// A server that does not support Refresh Rect, or advertises it and never answers (some
// implement only Suppress Output), gets the quiet-screen settle alone after a bounded wait
// for the answer: confirmed by "settle_only". Without an answer the settle is required:
// DRAIN_TIMEOUT when the screen does not settle by the deadline; DRAIN_FAILED when the
// session ends.
//
// Thread affinity: the object lives on the main thread (arm/begin/cancel, the timer, the
// done callback). noteUpdate() and noteSessionEnded() run on the RDP worker, inside
// FreeRDP's update processing. m_mutex is a leaf; arm() is called under RdpSession's
// m_ioMutex, which the worker's update processing also holds, so an update is either wholly
// before the request or wholly after it.
#pragma once

#include "common/Outcome.h"
#include "readerwire/ReaderTypes.h"

#include <QObject>
#include <QRect>
#include <QTimer>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <span>

namespace gc {

class GuestSync : public QObject {
  Q_OBJECT
public:
  using Clock = std::chrono::steady_clock;
  using Confirmation = SyncConfirmation;
  static QString confirmationName(Confirmation c) { return syncConfirmationName(c); }
  using Timing = SyncTiming;
  using Result = SyncResult;
  using Done = std::function<void(const Outcome<Result>&)>;

  explicit GuestSync(QObject* parent = nullptr);
  ~GuestSync() override;

  // Main thread, under RdpSession's m_ioMutex, right before the request is written: a new
  // round for `area`. A running round is cancelled first.
  void arm(QRect area, bool refreshSupported, Timing timing, Done done);
  // Main thread, once the request is out: evaluation starts (it may finish at once).
  void begin();
  // Main thread: ends the round with `failure` (the request could not be written).
  void fail(const Failure& failure);
  // Main thread: ends the round without calling done.
  void cancel();
  bool active() const { return bool(m_done); }

  // RDP worker: one processed update (its invalid rectangles; `changed`: a pixel changed).
  void noteUpdate(std::span<const QRect> rects, bool changed);
  // RDP worker, as its last act: the session is gone.
  void noteSessionEnded();

private:
  void evaluate();
  void finish(const Outcome<Result>& outcome);
  void wake(); // any thread: evaluate soon on the main thread
  void scheduleAt(Clock::time_point when);

  QTimer m_timer;
  Done m_done;
  Timing m_timing;
  Result m_result;
  Clock::time_point m_armedAt;
  std::atomic<quint64> m_round{0};

  std::mutex m_mutex; // a leaf; guards the fields below
  QRect m_area;
  bool m_pending = false;
  bool m_answered = false;
  bool m_ended = false;
  Clock::time_point m_answeredAt;
  Clock::time_point m_lastChange;
};

} // namespace gc
