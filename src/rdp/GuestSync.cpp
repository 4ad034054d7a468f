#include "rdp/GuestSync.h"

#include "common/QuietSpell.h"
#include "common/Region.h"

#include <QMetaObject>

#include <algorithm>
#include <utility>

namespace gc {

using namespace std::chrono;

GuestSync::GuestSync(QObject* parent) : QObject(parent) {
  m_timer.setSingleShot(true);
  m_timer.setTimerType(Qt::PreciseTimer);
  connect(&m_timer, &QTimer::timeout, this, &GuestSync::evaluate);
}

GuestSync::~GuestSync() = default;

void GuestSync::setAsk(Ask ask, Asked asked, PipelineState pipeline) {
  m_ask = std::move(ask);
  m_asked = std::move(asked);
  m_pipeline = std::move(pipeline);
}

quint8 GuestSync::skipped() const {
  // When every rung the server offers went unanswered (a guest frozen at an earlier lock), all
  // are asked again.
  const quint8 offered = m_result.rungsOffered;
  return (offered & ~m_unanswered) ? quint8(offered & m_unanswered) : quint8(0);
}

void GuestSync::start(QRect area, quint8 offered, bool suppressFirst, Timing timing, Done done) {
  cancel();
  m_timing = timing;
  m_result = Result{};
  m_result.refreshSupported = offered & syncRungBit(Confirmation::RefreshRect);
  m_result.rungsOffered = offered;
  // Rungs unanswered before are left out while another remains to ask.
  m_skip = skipped();
  m_result.rungsSkipped = m_skip;
  m_order = suppressFirst
                ? std::array{Confirmation::SuppressOutput, Confirmation::RefreshRect, Confirmation::GfxCaps}
                : std::array{Confirmation::RefreshRect, Confirmation::SuppressOutput, Confirmation::GfxCaps};
  m_next = 0;
  m_rung = Confirmation::SettleOnly;
  m_armedAt = Clock::now();
  m_done = std::move(done);
  {
    std::lock_guard lock(m_mutex);
    m_area = area;
    m_pending = Confirmation::SettleOnly;
    m_answered = false;
    m_lastChange = m_armedAt;
  }
  if (askNext())
    evaluate();
}

bool GuestSync::askNext() {
  m_rung = Confirmation::SettleOnly;
  while (m_next < m_order.size()) {
    const Confirmation rung = m_order[m_next++];
    const quint8 bit = syncRungBit(rung);
    if (!(m_result.rungsOffered & bit) || (m_skip & bit) || (m_result.rungsAsked & bit))
      continue;
    // A corner rung waits for a pause in the stream; gfx_caps for the pipeline's first frame.
    const bool wait = rung == Confirmation::GfxCaps ? pipeline() != Pipeline::Steady
                                                    : Clock::now() < lastHeard() + kStreamGap;
    if (wait) {
      m_deferred = rung; // asked in evaluate
      m_deferredAt = Clock::now();
      return true;
    }
    return ask(rung);
  }
  endRung(); // the ladder is climbed: nothing pending any more
  return true;
}

bool GuestSync::ask(Confirmation rung) {
  m_rung = rung;
  m_rungAt = Clock::now();
  const bool wasAsking = std::exchange(m_asking, true);
  const Request request = m_ask ? m_ask(rung) : Request::Failed;
  if (request == Request::Unavailable) {
    // Never asked: the server did not offer it after all (its pipeline did not come up). The
    // skip is worked out again without it, and the ladder climbed again from its foot: a rung
    // skipped for this one's sake is asked now (one asked already is passed over).
    m_asking = wasAsking;
    m_result.rungsOffered &= quint8(~syncRungBit(rung));
    m_skip = skipped();
    m_result.rungsSkipped = m_skip;
    m_next = 0;
    return askNext();
  }
  m_result.rungsAsked |= syncRungBit(rung);
  if (request == Request::Failed) {
    finish(Failure{Refusal::DrainFailed,
                   QStringLiteral("the %1 request could not be written").arg(confirmationName(rung))});
    return false;
  }
  return true;
}

GuestSync::Pipeline GuestSync::pipeline() const {
  const Pipeline state = m_pipeline ? m_pipeline() : Pipeline::Steady;
  return state == Pipeline::Opening && m_openingGivenUp ? Pipeline::Steady : state;
}

GuestSync::Clock::time_point GuestSync::lastHeard(bool* pending) const {
  const bool up = pipeline() != Pipeline::Steady;
  if (pending)
    *pending = up;
  if (up)
    return Clock::now(); // the pipeline's first frame is still to come: no pause has begun
  std::lock_guard lock(m_mutex);
  return m_lastHeard;
}

void GuestSync::cancel() {
  m_timer.stop();
  m_deferred = Confirmation::SettleOnly;
  ++m_round; // drops wake-ups already posted
  m_done = nullptr;
  {
    std::lock_guard lock(m_mutex);
    m_pending = Confirmation::SettleOnly;
  }
  endRung();
}

bool GuestSync::rungPending() const {
  std::lock_guard lock(m_mutex);
  return m_pending != Confirmation::SettleOnly;
}

void GuestSync::armRung(Confirmation rung, bool frameOpen) {
  std::lock_guard lock(m_mutex);
  m_pending = rung;
  m_straddling = frameOpen;
}

void GuestSync::endRung() {
  if (!m_asking)
    return;
  m_asking = false;
  // From the event loop: the Asked takes RdpSession's locks, which a caller may hold.
  QMetaObject::invokeMethod(
      this,
      [this] {
        if (m_asked)
          m_asked();
      },
      Qt::QueuedConnection);
}

void GuestSync::noteUpdate(std::span<const QRect> rects, bool changed) {
  bool answered = false;
  {
    std::lock_guard lock(m_mutex);
    const auto now = Clock::now();
    m_lastHeard = now;
    if (changed)
      m_lastChange = now;
    // A frame that was open when the request went out began before it: what it covers was
    // under way before the request (and maybe before the drained input), so it is no answer.
    const bool straddled = std::exchange(m_straddling, false);
    if (!straddled && (m_pending == Confirmation::RefreshRect || m_pending == Confirmation::SuppressOutput)) {
      // The answer covers the whole area; damage that only touches it is not the answer. A
      // late answer to an earlier rung passes for this one's: it too came after the input.
      Region covered;
      for (const QRect& r : rects)
        covered += r.intersected(m_area);
      if (covered.covers(m_area)) {
        m_pending = Confirmation::SettleOnly;
        m_answered = true;
        m_answeredAt = now;
        answered = true;
      }
    }
  }
  if (answered)
    wake();
}

void GuestSync::noteCapsConfirm() {
  {
    std::lock_guard lock(m_mutex);
    m_lastHeard = Clock::now(); // the pipeline's surface and first frame follow it
    if (m_pending != Confirmation::GfxCaps)
      return;
    m_pending = Confirmation::SettleOnly;
    m_answered = true;
    m_answeredAt = Clock::now();
  }
  wake();
}

void GuestSync::noteSessionEnded() {
  {
    std::lock_guard lock(m_mutex);
    m_ended = true;
  }
  wake();
}

void GuestSync::wake() {
  const quint64 round = m_round;
  QMetaObject::invokeMethod(
      this,
      [this, round] {
        if (round == m_round && m_done)
          evaluate();
      },
      Qt::QueuedConnection);
}

void GuestSync::scheduleAt(Clock::time_point when) {
  m_timer.start(QuietSpell::timerMs(when));
}

void GuestSync::evaluate() {
  if (!m_done)
    return;
  bool answered = false, ended = false;
  Clock::time_point answeredAt, lastChange;
  {
    std::lock_guard lock(m_mutex);
    answered = m_answered;
    ended = m_ended;
    answeredAt = m_answeredAt;
    lastChange = m_lastChange;
  }
  if (ended)
    return finish(Failure{Refusal::DrainFailed, QStringLiteral("the guest session ended during the lock")});
  const auto now = Clock::now();
  const auto until = m_armedAt + m_timing.deadline;
  // 0. gfx_caps waits for the pipeline, at most answerWait; a corner rung for a pause in the
  // guest's stream: at most kStreamGapWait, or answerWait for the pipeline's first frame. A
  // pipeline still to open after such a wait is not waited for again in this session.
  if (m_deferred != Confirmation::SettleOnly) {
    bool pending = false;
    const Clock::time_point heard = lastHeard(&pending);
    const auto most = pending ? std::max<Clock::duration>(m_timing.answerWait, kStreamGapWait)
                              : Clock::duration(kStreamGapWait);
    const auto limit = std::min(m_deferredAt + most, until);
    if (m_deferred == Confirmation::GfxCaps) {
      if (pending && now < limit)
        return scheduleAt(std::min(now + kStreamGap, limit)); // looked at again: no event says it
    } else {
      const QuietSpell pause = QuietSpell::at(now, heard, kStreamGap, limit);
      if (pause.waiting)
        return scheduleAt(pause.next);
    }
    if (pipeline() == Pipeline::Opening)
      m_openingGivenUp = true;
    if (ask(std::exchange(m_deferred, Confirmation::SettleOnly)))
      evaluate();
    return;
  }
  if (answered && m_result.answerMs < 0) {
    m_result.answerMs = duration_cast<milliseconds>(answeredAt - m_rungAt).count();
    m_result.confirmedBy = m_rung;
    m_unanswered &= quint8(~syncRungBit(m_rung)); // it answers after all: asked again next time
    endRung();
  }
  m_result.answered = answered;
  m_result.elapsedMs = duration_cast<milliseconds>(now - m_armedAt).count();

  // 1. The rung's answer, for a bounded time; then the next rung.
  if (!answered && m_rung != Confirmation::SettleOnly) {
    const auto giveUp = std::min(m_rungAt + m_timing.answerWait, until);
    if (now < giveUp)
      return scheduleAt(giveUp);
    if (now >= m_rungAt + m_timing.answerWait)
      m_unanswered |= syncRungBit(m_rung);
    {
      std::lock_guard lock(m_mutex);
      m_pending = Confirmation::SettleOnly;
    }
    if (now < until) {
      if (askNext())
        evaluate();
      return;
    }
    m_rung = Confirmation::SettleOnly;
    endRung();
  }
  // 2. Answered: the guest's server handled every input written before the request, and
  // nothing more is waited for. A settle after it would only delay the lock: an animated
  // desktop never settles, and Capture Desktop reads the live desktop when asked, not a frame
  // of this moment. `settled` says whether the screen had been quiet that long anyway.
  const QuietSpell settle = QuietSpell::at(now, lastChange, m_timing.quiet, until);
  if (answered) {
    m_result.settled = settle.quiet;
    return finish(m_result);
  }
  // 3. No answer: the settle is required.
  if (settle.quiet) {
    m_result.settled = true;
    return finish(m_result);
  }
  if (!settle.waiting) {
    return finish(Failure{Refusal::DrainTimeout,
                          m_result.rungsAsked
                              ? QStringLiteral("the guest neither answered a request nor settled")
                              : QStringLiteral("the guest's screen did not settle")});
  }
  scheduleAt(settle.next); // a later change moves the quiet spell on: re-checked then
}

void GuestSync::finish(const Outcome<Result>& outcome) {
  Done done = std::move(m_done);
  cancel();
  if (done)
    done(outcome);
}

} // namespace gc
