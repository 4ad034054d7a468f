// RunLock: at most one live console per run id for this user. The lock is a file
// "<ledger dir>/live/<sha256(run_id) hex>.lock" (the ledger dir opened and checked by
// StateDir's rules like the ledger's, "live" 0700 and ours, file 0600, opened
// O_NOFOLLOW, ours, a regular file) held with flock(LOCK_EX | LOCK_NB) for as long as the
// RunLock lives; the kernel drops it when the process dies, so a killed console frees its
// run. The file itself stays (unlinking a flock'ed file races with the next locker); it
// holds nothing and its name reveals only a hash.
//
// Thread: a movable value; own it on one thread.
#pragma once

#include "common/Outcome.h"

#include <QString>

namespace gc {

class RunLock {
public:
  // RUN_ALREADY_OPEN when another live RunLock (any process) holds the run; GRANT_LEDGER
  // when the lock directory or file cannot be used safely.
  static Outcome<RunLock> acquire(const QString& ledgerDir, const QString& runId);
  static QString lockPath(const QString& ledgerDir, const QString& runId);

  RunLock(RunLock&& other) noexcept;
  RunLock& operator=(RunLock&& other) noexcept;
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;
  ~RunLock();

  // Frees the run now (also done by the destructor).
  void release();
  bool isHeld() const { return m_fd >= 0; }

private:
  explicit RunLock(int fd) : m_fd(fd) {}
  int m_fd = -1;
};

} // namespace gc
