// GuestSync: the guest sync of the lock (DESIGN.md §6), as asynchronous state. "Written and
// flushed" only means the drained input left this process; a slow guest (or QEMU's user
// networking) can still hold it, and Capture Desktop must not start before the guest has
// processed and shown it. The round trip is a ladder of requests the guest's RDP server
// handles in order after the input PDUs before it, each answered by something that arrives
// after the request; the first answer ends the asking:
//   refresh_rect     Refresh Rect for a small corner (if the server advertised it), answered
//                    by an update that covers the WHOLE corner (an update that merely touches
//                    it is ordinary damage, not the answer);
//   suppress_output  Suppress Output allow=0 then allow=1 with the desktop (if advertised),
//                    answered the same way: the repaint covers the corner;
//   gfx_caps         over RDPGFX only: the connect's CapsAdvertise again, answered by a
//                    CapsConfirm naming one of the sets offered (MS-RDPEGFX 3.2.5.18 obliges it).
// With the output suppressed (no panel), suppress_output comes first: its "on" is the
// un-suppress the pacing held back since the lock began, so no repaint it brings was asked
// for before the drained input. A frame open when a request went out began before it: its end
// is no answer, whatever it covers.
// A corner rung is asked only once the guest's stream has paused for kStreamGap (at most
// kStreamGapWait): an update covering the corner that the guest sent before it stopped reading
// (a frozen guest) and that is still arriving would pass for the answer; once nothing has come
// for a while, nothing sent before is still on its way. A CapsConfirm counts as heard. A
// desktop that never pauses is asked after the wait: there the gap stays open, and the guest
// is not frozen (it keeps sending). While the graphics pipeline is opening (Opening: the
// server said it supports the pipeline and its channel has not opened yet) or coming up
// (ComingUp: open, its first frame, the whole surface, has not ended yet, and the server may
// still be encoding it with nothing on the wire), the rung waits up to answerWait: that frame
// covers the corner and would pass for the answer. A pipeline still to open after such a wait
// is taken not to come for the rest of the session (FreeRDP's server library says it supports
// the pipeline by default: weston and the test guest's legacy mode never open it), so it costs
// one lock the wait once. The gfx_caps rung waits for the same, and for no pause: it is asked
// once the pipeline's first frame has ended (the connect's CapsAdvertise was sent before the
// drained input, so its confirm is no answer); if the pipeline is not up by then, the rung is
// not offered after all (Request::Unavailable).
// Each rung waits answerWait. A rung that went unanswered is remembered for the session and
// skipped at the next lock: servers that advertise what they do not do (Refresh Rect on
// shadow and GRD) cost the wait once. A rung that turns out unavailable counts for nothing in
// that rule: the skip is worked out again without it, so a server whose pipeline never came
// is asked its corner rungs again rather than nothing. An answer ends the round at once
// (`settled` then only records whether the screen had been quiet for `quiet` by then).
//
// A server that answers no rung gets the quiet-screen settle alone: confirmed by
// "settle_only", which the console refuses unless the grant opts in. Without an answer the
// settle is required: DRAIN_TIMEOUT when the screen does not settle by the deadline;
// DRAIN_FAILED when the session ends or a request cannot be written.
//
// Thread affinity: the object lives on the main thread (start/cancel, the timer, the done
// callback, the Ask). noteUpdate(), noteCapsConfirm() and noteSessionEnded() run on the RDP
// worker, inside FreeRDP's update processing. m_mutex is a leaf; the Ask calls armRung()
// under RdpSession's m_ioMutex right before it writes the request, and the worker's update
// processing holds m_ioMutex too, so an update is either wholly before the request or wholly
// after it.
#pragma once

#include "common/Outcome.h"
#include "readerwire/ReaderTypes.h"

#include <QObject>
#include <QRect>
#include <QTimer>

#include <array>
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
  static constexpr std::chrono::milliseconds kStreamGap{50};
  static constexpr std::chrono::milliseconds kStreamGapWait{300};

  // What an Ask did: the request went out; the server cannot be asked it (yet: the pipeline's
  // caps are not confirmed); or it could not be written.
  enum class Request : quint8 { Written, Unavailable, Failed };
  // Writes `rung`'s request (under m_ioMutex, calling armRung() first). `asked`: the ladder
  // has no request pending any more (the pacer's own Suppress Output, held back meanwhile,
  // may go). Both on the main thread.
  using Ask = std::function<Request(Confirmation rung)>;
  using Asked = std::function<void()>;
  // The guest's graphics pipeline as the ladder sees it (see above): its channel is still to
  // open (the server said it supports it); open, and its first frame has not ended; neither.
  enum class Pipeline : quint8 { Steady, Opening, ComingUp };
  // Main thread, no lock taken.
  using PipelineState = std::function<Pipeline()>;

  explicit GuestSync(QObject* parent = nullptr);
  ~GuestSync() override;

  void setAsk(Ask ask, Asked asked, PipelineState pipeline = nullptr);

  // Main thread: a new round, the corner `area` watched, `offered` the rungs the server
  // advertised (syncRungBit set; gfx_caps also while the pipeline is opening or coming up).
  // `suppressFirst`: the output is suppressed and is to be allowed again, so suppress_output is
  // asked first (its allow is that un-suppress, written after the drained input). A running
  // round is cancelled first. The first request goes out from here (a write that fails calls
  // `done` at once).
  void start(QRect area, quint8 offered, bool suppressFirst, Timing timing, Done done);
  // Main thread: ends the round without calling done.
  void cancel();
  bool active() const { return bool(m_done); }
  // Any thread: a rung's request is out and unanswered (the pacer must not send its own
  // Suppress Output: the repaint would pass for the answer).
  bool rungPending() const;

  // Under m_ioMutex, from the Ask, right before the request is written; `frameOpen`: a frame
  // of the guest's had begun and not ended (its end is no answer).
  void armRung(Confirmation rung, bool frameOpen);

  // RDP worker: one processed update or frame's end (its invalid rectangles, maybe none;
  // `changed`: a pixel changed).
  void noteUpdate(std::span<const QRect> rects, bool changed);
  // RDP worker: a CapsConfirm the gfx client accepted (the connect's, or the answer to a
  // re-advertise).
  void noteCapsConfirm();
  // RDP worker, as its last act: the session is gone.
  void noteSessionEnded();

private:
  void evaluate();
  bool askNext();              // false: the request could not be written (the round is finished)
  bool ask(Confirmation rung); // likewise
  // The session's pipeline state; Opening counts as Steady once waited for in vain.
  Pipeline pipeline() const;
  // The guest was last heard (now while its pipeline is opening or coming up, said in `pending`).
  Clock::time_point lastHeard(bool* pending = nullptr) const;
  // Rungs unanswered before, left out while another offered one remains.
  quint8 skipped() const;
  void finish(const Outcome<Result>& outcome);
  void wake(); // any thread: evaluate soon on the main thread
  void scheduleAt(Clock::time_point when);
  void endRung();

  QTimer m_timer;
  Ask m_ask;
  Asked m_asked;
  PipelineState m_pipeline;
  Done m_done;
  Timing m_timing;
  Result m_result;
  Clock::time_point m_armedAt;
  Clock::time_point m_rungAt; // the current rung's request
  Confirmation m_rung = Confirmation::SettleOnly;
  quint8 m_unanswered = 0;               // rungs that went unanswered at a lock of this session
  quint8 m_skip = 0;                     // those left out of this round
  bool m_openingGivenUp = false;         // a pipeline still to open was waited for in vain
  std::array<Confirmation, 3> m_order{}; // the rungs in the order asked
  std::size_t m_next = 0;                // the next of m_order to consider
  bool m_asking = false;                 // a rung was asked and the ladder has not ended
  Confirmation m_deferred =
      Confirmation::SettleOnly; // a rung waiting for the stream to pause or the pipeline
  Clock::time_point m_deferredAt;
  std::atomic<quint64> m_round{0};

  mutable std::mutex m_mutex; // a leaf; guards the fields below
  QRect m_area;
  Confirmation m_pending = Confirmation::SettleOnly; // the rung awaiting its answer
  bool m_straddling = false;                         // the frame open at the request has not ended yet
  bool m_answered = false;
  bool m_ended = false;
  Clock::time_point m_answeredAt;
  Clock::time_point m_lastChange;
  Clock::time_point m_lastHeard; // the guest's latest frame end (update) or CapsConfirm of the session
};

} // namespace gc
