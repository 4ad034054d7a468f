// The single authority over the console's phase. Lives on the main thread; not thread-safe
// by design: every input, lock and close request reaches it through the main event loop,
// which is what makes "the gate closes atomically" true.
#pragma once

#include "common/Outcome.h"
#include "session/Phase.h"

#include <QDateTime>
#include <QObject>

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

signals:
  void phaseChanged(gc::Phase from, gc::Phase to, const QString& reason);
  void transitionRefused(gc::Phase from, gc::Phase to, const QString& reason);
  // Emitted once, after phaseChanged(..., CLOSED, ...).
  void closed(const gc::Failure& reason);

private:
  Phase m_phase = Phase::Setup;
  Failure m_closeReason;
};

} // namespace gc
