// The lock barrier (DESIGN.md §6): close the gate, drain every accepted event onto the
// wire, tell the panel how far, commit the lock, and only then start Capture Desktop.
// Lives on the main thread. requestLock() runs the whole barrier synchronously, so no panel
// message can be processed between the gate closing and the lock being committed.
#pragma once

#include "common/Outcome.h"
#include "session/InputGate.h"
#include "session/PhaseController.h"

#include <QDeadlineTimer>
#include <QObject>

#include <chrono>
#include <functional>

namespace gc {

class LockBarrier : public QObject {
  Q_OBJECT
public:
  LockBarrier(PhaseController* phases, InputGate* gate,
              std::chrono::milliseconds drainDeadline = std::chrono::milliseconds(2000),
              QObject* parent = nullptr);

  // Who asked ("panel", "mcp", "control") is recorded in the transition reason. Refused with
  // PHASE_WRONG outside SETUP. A drain failure closes the console and returns the failure;
  // capture never starts then.
  Status requestLock(const QString& requestedBy);

  // Between the committed lock (READ_ONLY) and the capture start: waits until the guest has
  // processed (and shown) the drained input (RdpSession::syncWithGuest). A failure closes the
  // console like a drain failure: capture never starts on a screen that may not show the
  // setup. Unset: capture starts right after the commit (unit tests of the barrier alone).
  using GuestSettle = std::function<Status(QDeadlineTimer)>;
  void setGuestSettle(GuestSettle settle, std::chrono::milliseconds deadline);

signals:
  // In order, each at most once: drained → (READ_ONLY) → [guest settled] → captureStarted
  // (CAPTURING).
  void drained(quint64 upto);
  void captureStarted();

private:
  PhaseController* m_phases;
  InputGate* m_gate;
  std::chrono::milliseconds m_drainDeadline;
  GuestSettle m_settle;
  std::chrono::milliseconds m_settleDeadline{0};
};

} // namespace gc
