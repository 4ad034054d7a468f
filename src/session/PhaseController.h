// The single authority over the console's phase. Lives on the main thread; not thread-safe
// by design: every input, lock and close request reaches it through the main event loop,
// which is what makes "the gate closes atomically" true.
//
// Expiry is a rule here, not a timer: once the wall clock (UTC) has reached the grant's
// expires_at, expired() is true, every forward transition is refused EXPIRED and closes the
// console with EXPIRED, and each gate (input, lock, capture, action, relay call, panel
// message) asks closeIfExpired() first. A timer may wake the console at expires_at; it does
// not decide. A stopped process (SIGSTOP) that resumes after expires_at sees the same rule.
#pragma once

#include "common/Outcome.h"
#include "session/Phase.h"

#include <QDateTime>
#include <QObject>

#include <functional>

namespace gc {

class PhaseController : public QObject {
  Q_OBJECT
public:
  explicit PhaseController(QObject* parent = nullptr);

  Phase phase() const { return m_phase; }
  bool isClosed() const { return m_phase == Phase::Closed; }
  // Why the console closed (valid once CLOSED).
  const Failure& closeReason() const { return m_closeReason; }

  // Performs one transition from the table; an illegal one is refused
  // (ILLEGAL_TRANSITION), recorded through transitionRefused, and changes nothing.
  Status transition(Phase to, const QString& reason);
  // Any phase → CLOSED with a typed reason. Closing twice is a no-op that keeps the
  // first reason (returns false then).
  bool close(Refusal code, const QString& message);

  // The grant's expires_at (invalid: never expires).
  void setExpiry(const QDateTime& expiresAt) { m_expiresAt = expiresAt; }
  const QDateTime& expiresAt() const { return m_expiresAt; }
  // The one wall clock the rule reads (UTC). Tests inject theirs.
  using WallClock = std::function<QDateTime()>;
  void setWallClockForTest(WallClock clock) { m_clock = std::move(clock); }
  QDateTime now() const { return m_clock ? m_clock() : QDateTime::currentDateTimeUtc(); }
  bool expired() const { return m_expiresAt.isValid() && now() >= m_expiresAt; }
  // The gate: true when expired; closes with EXPIRED first if still open.
  bool closeIfExpired();

signals:
  void phaseChanged(gc::Phase from, gc::Phase to, const QString& reason);
  void transitionRefused(gc::Phase from, gc::Phase to, const QString& reason);
  // Emitted once, after phaseChanged(..., CLOSED, ...).
  void closed(const gc::Failure& reason);

private:
  Phase m_phase = Phase::Setup;
  Failure m_closeReason;
  QDateTime m_expiresAt;
  WallClock m_clock;
};

} // namespace gc
