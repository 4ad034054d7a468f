#include "session/LockBarrier.h"

namespace gc {

LockBarrier::LockBarrier(PhaseController* phases, InputGate* gate, std::chrono::milliseconds drainDeadline,
                         QObject* parent)
    : QObject(parent), m_phases(phases), m_gate(gate), m_drainDeadline(drainDeadline) {}

void LockBarrier::setGuestSettle(GuestSettle settle, std::chrono::milliseconds deadline) {
  m_settle = std::move(settle);
  m_settleDeadline = deadline;
}

Status LockBarrier::requestLock(const QString& requestedBy) {
  if (m_phases->phase() != Phase::Setup)
    return Status(Refusal::PhaseWrong,
                  QStringLiteral("lock requested in %1").arg(phaseName(m_phases->phase())));

  // 1. The gate closes: from this transition on, InputGate::submit refuses with PHASE_LOCKED.
  if (Status s =
          m_phases->transition(Phase::Locking, QStringLiteral("lock requested by %1").arg(requestedBy));
      !s.ok())
    return s;

  // 2. Everything accepted before that instant goes onto the wire, in order.
  const Outcome<quint64> upto = m_gate->drain(QDeadlineTimer(m_drainDeadline));
  if (!upto.ok()) {
    m_phases->close(upto.code(), upto.failure().message);
    return Status(upto.failure());
  }

  // 3. The panel learns how far input went; 4. the lock is committed; 5. the guest has
  // processed and shown it; 6. capture starts.
  emit drained(upto.value());
  if (Status s = m_phases->transition(Phase::ReadOnly, QStringLiteral("lock committed")); !s.ok())
    return s;
  if (m_settle) {
    if (Status settled = m_settle(QDeadlineTimer(m_settleDeadline)); !settled.ok()) {
      m_phases->close(settled.code(), settled.failure().message);
      return settled;
    }
  }
  if (Status s = m_phases->transition(Phase::Capturing, QStringLiteral("capture desktop started")); !s.ok())
    return s;
  emit captureStarted();
  return success();
}

} // namespace gc
