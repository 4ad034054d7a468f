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
  // After the drain, before Capture Desktop (GuestSync): the guest answers each rung's request
  // within guestAnswerWait (an answer ends the sync), or the console falls back to the settle
  // alone: a screen without a changed pixel for guestSettleQuiet, by guestSyncDeadline.
  std::chrono::milliseconds guestSyncDeadline{5000};
  std::chrono::milliseconds guestSettleQuiet{200};
  std::chrono::milliseconds guestAnswerWait{1500};
  // Capture Desktop waits for a picture without a change for guestSettleQuiet, at most this
  // long (an animated desktop never settles).
  std::chrono::milliseconds captureSettleBound{1000};
  int connectTimeoutMs = 10000;
  int probeTimeoutMs = 5000;
  // The RDP reader executable (guest-console-rdp); empty: RdpReader::defaultProgram().
  QString readerProgram;
};

} // namespace gc
