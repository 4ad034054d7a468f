#include "session/LockBarrier.h"

namespace gc {

LockBarrier::LockBarrier(PhaseController* phases, InputGate* gate, std::chrono::milliseconds drainDeadline,
                         QObject* parent)
    : QObject(parent), m_phases(phases), m_gate(gate), m_drainDeadline(drainDeadline) {
  connect(m_phases, &PhaseController::closed, this, &LockBarrier::onClosed);
}

void LockBarrier::setGuestSync(StartSync start, CancelSync cancel, std::chrono::milliseconds deadline) {
  m_startSync = std::move(start);
  m_cancelSync = std::move(cancel);
  m_syncDeadline = deadline;
}

void LockBarrier::setGuestSettle(GuestSettle settle, std::chrono::milliseconds deadline) {
  setGuestSync([settle = std::move(settle)](QDeadlineTimer d, const SyncDone& done) { done(settle(d)); }, {},
               deadline);
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

  // 3. The panel learns how far input went; 4. what the setup left pressed is released (a
  // held Ctrl or button would otherwise become part of the model's action).
  emit drained(upto.value());
  if (m_release) {
    if (Status released = m_release(QDeadlineTimer(m_drainDeadline)); !released.ok()) {
      const Failure f{released.code() == Refusal::Expired ? Refusal::Expired : Refusal::DrainFailed,
                      QStringLiteral("held input could not be released: %1").arg(released.failure().message)};
      m_phases->close(f.code, f.message);
      return Status(f);
    }
  }

  // 5. The lock is committed; 6. the guest has processed and shown it; 7. capture starts.
  if (Status s = m_phases->transition(Phase::ReadOnly, QStringLiteral("lock committed")); !s.ok())
    return s;
  if (!m_startSync) {
    if (Status s = m_phases->transition(Phase::Capturing, QStringLiteral("capture desktop started")); !s.ok())
      return s;
    emit captureStarted();
    return success();
  }
  m_syncing = true;
  m_finished.reset();
  const quint64 round = ++m_round;
  m_startSync(QDeadlineTimer(m_syncDeadline),
              [this, round](const Status& result) { onSynced(round, result); });
  if (m_finished && round == m_round)
    return *m_finished; // the sync ended before start returned
  return success();
}

void LockBarrier::onSynced(quint64 round, const Status& result) {
  if (round != m_round || !m_syncing)
    return; // cancelled: the console closed during the sync
  m_syncing = false;
  if (m_phases->phase() != Phase::ReadOnly) {
    m_finished = Status(Refusal::PhaseWrong, QStringLiteral("the lock ended during the guest sync"));
    return;
  }
  if (!result.ok()) {
    m_finished = result;
    m_phases->close(result.code(), result.failure().message);
    emit lockFailed(result.failure());
    return;
  }
  if (Status s = m_phases->transition(Phase::Capturing, QStringLiteral("capture desktop started")); !s.ok()) {
    m_finished = s;
    emit lockFailed(s.failure()); // expired during the sync: closed EXPIRED
    return;
  }
  m_finished = success();
  emit captureStarted();
}

void LockBarrier::onClosed(const Failure& reason) {
  if (!m_syncing)
    return;
  // Closed (panic, close, expiry, VM gone, …) while the guest sync ran: it is cancelled and
  // capture never starts.
  m_syncing = false;
  ++m_round;
  if (m_cancelSync)
    m_cancelSync();
  emit lockFailed(reason);
}

} // namespace gc
