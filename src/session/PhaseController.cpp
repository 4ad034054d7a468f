#include "session/PhaseController.h"

#include <QLoggingCategory>

namespace gc {

Q_LOGGING_CATEGORY(lcPhase, "gc.phase")

PhaseController::PhaseController(QObject* parent) : QObject(parent) {}

Status PhaseController::transition(Phase to, const QString& reason) {
  const Phase from = m_phase;
  if (to != Phase::Closed && from != Phase::Closed && closeIfExpired())
    return Status(Refusal::Expired, QStringLiteral("the grant expired before %1").arg(phaseName(to)));
  if (!isLegalTransition(from, to)) {
    qCWarning(lcPhase) << "refused transition" << phaseName(from) << "->" << phaseName(to) << reason;
    emit transitionRefused(from, to, reason);
    return Status(Refusal::IllegalTransition,
                  QStringLiteral("%1 -> %2 is not allowed").arg(phaseName(from), phaseName(to)));
  }
  m_phase = to;
  if (to == Phase::Closed && m_closeReason.message.isEmpty())
    m_closeReason = Failure{Refusal::OperatorClose, reason};
  qCInfo(lcPhase) << phaseName(from) << "->" << phaseName(to) << reason;
  emit phaseChanged(from, to, reason);
  if (to == Phase::Closed)
    emit closed(m_closeReason);
  return success();
}

bool PhaseController::close(Refusal code, const QString& message) {
  if (m_phase == Phase::Closed)
    return false;
  m_closeReason = Failure{code, message.isEmpty() ? refusalText(code) : message};
  const Status done = transition(Phase::Closed, refusalName(code));
  Q_ASSERT(done.ok());
  return done.ok();
}

bool PhaseController::closeIfExpired() {
  if (!expired())
    return false;
  close(Refusal::Expired,
        QStringLiteral("the grant expired at %1").arg(m_expiresAt.toUTC().toString(Qt::ISODateWithMs)));
  return true;
}

} // namespace gc
