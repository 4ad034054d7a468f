// What `guest-console open` is told on its command line (never a secret). A value type.
#pragma once

#include "grant/GrantPolicy.h"

#include <QString>
#include <QStringList>

#include <chrono>

namespace gc {

struct ConsoleOptions {
  QString grantPath;
  GrantPolicy policy;
  QString stateDir;   // evidence
  QString ledgerDir;  // consumed-grants ledger and run locks (GrantLedger::perUserDir() in the product)
  QString runtimeDir; // the run's private directory lives below it
  QStringList extraOrigins;
  int maxAuthAttempts = 3;
  std::chrono::milliseconds drainDeadline{2000};
  // After the drain, before Capture Desktop: the guest must confirm it processed the input
  // within guestSyncDeadline, then gets up to that same deadline to show no changed pixel for
  // guestSettleQuiet (RdpSession::syncWithGuest).
  std::chrono::milliseconds guestSyncDeadline{5000};
  std::chrono::milliseconds guestSettleQuiet{200};
  int connectTimeoutMs = 10000;
  int probeTimeoutMs = 5000;
};

} // namespace gc
