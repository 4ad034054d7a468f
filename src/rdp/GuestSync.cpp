#include "rdp/GuestSync.h"

#include <QMetaObject>
#include <QRegion>

#include <algorithm>

namespace gc {

using namespace std::chrono;

GuestSync::GuestSync(QObject* parent) : QObject(parent) {
  m_timer.setSingleShot(true);
  m_timer.setTimerType(Qt::PreciseTimer);
  connect(&m_timer, &QTimer::timeout, this, &GuestSync::evaluate);
}

GuestSync::~GuestSync() = default;

void GuestSync::arm(QRect area, bool refreshSupported, Timing timing, Done done) {
  cancel();
  m_timing = timing;
  m_result = Result{};
  m_result.refreshSupported = refreshSupported;
  m_armedAt = Clock::now();
  m_done = std::move(done);
  std::lock_guard lock(m_mutex);
  m_area = area;
  m_pending = refreshSupported;
  m_answered = false;
  m_lastChange = m_armedAt;
}

void GuestSync::begin() {
  if (m_done)
    evaluate();
}

void GuestSync::fail(const Failure& failure) {
  if (m_done)
    finish(failure);
}

void GuestSync::cancel() {
  m_timer.stop();
  ++m_round; // drops wake-ups already posted
  m_done = nullptr;
  std::lock_guard lock(m_mutex);
  m_pending = false;
}

void GuestSync::noteUpdate(std::span<const QRect> rects, bool changed) {
  bool answered = false;
  {
    std::lock_guard lock(m_mutex);
    const auto now = Clock::now();
    if (changed)
      m_lastChange = now;
    if (m_pending) {
      // The answer covers the whole area; damage that only touches it is not the answer.
      QRegion covered;
      for (const QRect& r : rects)
        covered += r.intersected(m_area);
      if (covered == QRegion(m_area)) {
        m_pending = false;
        m_answered = true;
        m_answeredAt = now;
        answered = true;
      }
    }
  }
  if (answered)
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
  const auto wait = duration_cast<milliseconds>(when - Clock::now()) + milliseconds(1);
  m_timer.start(int(std::clamp<qint64>(wait.count(), 0, 24 * 3600 * 1000)));
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
  if (answered && m_result.answerMs < 0)
    m_result.answerMs = duration_cast<milliseconds>(answeredAt - m_armedAt).count();
  m_result.answered = answered;
  m_result.confirmedBy = answered ? Confirmation::RefreshRect : Confirmation::SettleOnly;
  m_result.elapsedMs = duration_cast<milliseconds>(now - m_armedAt).count();

  // 1. The answer, for a bounded time.
  if (m_result.refreshSupported && !answered) {
    const auto giveUp = std::min(m_armedAt + m_timing.answerWait, until);
    if (now < giveUp)
      return scheduleAt(giveUp);
  }
  // 2. The settle: required without an answer, best effort after one.
  const auto quietAt = lastChange + m_timing.quiet;
  if (now >= quietAt) {
    m_result.settled = true;
    return finish(m_result);
  }
  if (now >= until) {
    if (answered)
      return finish(m_result); // an animated desktop never settles; the answer confirmed the input
    return finish(Failure{Refusal::DrainTimeout,
                          m_result.refreshSupported
                              ? QStringLiteral("the guest neither answered the refresh request nor settled")
                              : QStringLiteral("the guest's screen did not settle")});
  }
  scheduleAt(std::min(quietAt, until)); // a later change moves quietAt on: re-checked then
}

void GuestSync::finish(const Outcome<Result>& outcome) {
  Done done = std::move(m_done);
  cancel();
  if (done)
    done(outcome);
}

} // namespace gc
