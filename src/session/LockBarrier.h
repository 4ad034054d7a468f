// The lock barrier (DESIGN.md §6): close the gate, drain every accepted event onto the
// wire, tell the panel how far, release what the setup left held, commit the lock, let the
// guest confirm it has processed and shown all of it, and only then start Capture Desktop.
// Lives on the main thread. requestLock() runs everything up to the committed lock
// synchronously, so no panel message can be processed between the gate closing and the
// lock being committed. The guest sync that follows is asynchronous state inside READ_ONLY:
// requestLock() returns to the event loop while it runs, so panic, close, expiry, a lost
// guest and panel messages are served meanwhile; a close during the sync cancels it and
// capture never starts.
#pragma once

#include "common/Outcome.h"
#include "session/InputGate.h"
#include "session/PhaseController.h"

#include <QDeadlineTimer>
#include <QJsonObject>
#include <QObject>

#include <chrono>
#include <functional>
#include <optional>

namespace gc {

class LockBarrier : public QObject {
  Q_OBJECT
public:
  LockBarrier(PhaseController* phases, InputGate* gate,
              std::chrono::milliseconds drainDeadline = std::chrono::milliseconds(2000),
              QObject* parent = nullptr);

  // Who asked ("panel", "mcp", "control") is recorded in the transition reason. Refused with
  // PHASE_WRONG outside SETUP. A drain failure closes the console and returns the failure;
  // capture never starts then. Success means the lock is committed (READ_ONLY); capture
  // starts when the guest sync ends well (captureStarted), or lockFailed says why not. A
  // sync that finished before requestLock() returned gives its result here as well.
  Status requestLock(const QString& requestedBy);

  // After the drain, before the commit: releases every key and button the console sent
  // down (the console knows them: it sent them). A failure closes like a drain failure.
  using ReleaseHeld = std::function<Status(QDeadlineTimer)>;
  void setReleaseHeld(ReleaseHeld release) { m_release = std::move(release); }

  // Between the committed lock (READ_ONLY) and the capture start: the guest confirms it has
  // processed (and shown) the drained input (RdpSession::startGuestSync). `start` returns at
  // once and calls `done` exactly once on the main thread (it may call it before returning);
  // `cancel` stops a running sync (the console closed meanwhile), after which `done` is not
  // called. A failure closes the console: capture never starts on a screen that may not show
  // the setup. Unset: capture starts right after the commit (unit tests of the barrier).
  using SyncDone = std::function<void(const Status&)>;
  using StartSync = std::function<void(QDeadlineTimer, SyncDone)>;
  using CancelSync = std::function<void()>;
  void setGuestSync(StartSync start, CancelSync cancel, std::chrono::milliseconds deadline);
  // The same with a synchronous settle step (unit tests).
  using GuestSettle = std::function<Status(QDeadlineTimer)>;
  void setGuestSettle(GuestSettle settle, std::chrono::milliseconds deadline);

  // READ_ONLY with the guest sync under way.
  bool syncing() const { return m_syncing; }

  // How the guest confirmed the drained input ({"by":
  // "refresh_rect"|"suppress_output"|"gfx_caps"|"settle_only", "asked": […], …}), as the sync's owner noted
  // it before calling done(); empty before a sync ended. The request_lock reply, the capture and the receipt
  // carry it.
  void noteConfirmation(QJsonObject confirmation) { m_confirmation = std::move(confirmation); }
  const QJsonObject& confirmation() const { return m_confirmation; }

signals:
  // In order, each at most once: drained → (READ_ONLY) → [guest settled] → captureStarted
  // (CAPTURING). lockFailed instead of captureStarted when the lock got past the drain but
  // capture will never start (the sync failed, or the console closed during it).
  void drained(quint64 upto);
  void captureStarted();
  void lockFailed(const gc::Failure& failure);

private:
  void onSynced(quint64 round, const Status& result);
  void onClosed(const Failure& reason);

  PhaseController* m_phases;
  InputGate* m_gate;
  std::chrono::milliseconds m_drainDeadline;
  ReleaseHeld m_release;
  StartSync m_startSync;
  CancelSync m_cancelSync;
  std::chrono::milliseconds m_syncDeadline{0};
  bool m_syncing = false;
  quint64 m_round = 0;              // a late or cancelled sync's done() is ignored
  std::optional<Status> m_finished; // how the last sync ended (a synchronous done())
  QJsonObject m_confirmation;
};

} // namespace gc
