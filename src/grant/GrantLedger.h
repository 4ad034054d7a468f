// GrantLedger: the single-use rule. A grant_id consumed once is refused forever after.
// The ledger is "<dir>/consumed-grants" (directory 0700, file 0600), one line per
// grant: "<grant_id> <sha256 hex> <UTC time>", ids and digests only. Consuming is
// read-check-append-fsync under flock(LOCK_EX), so two processes racing for the same grant
// cannot both win; the file is opened O_NOFOLLOW and a symlinked ledger is refused.
// The product's dir is perUserDir(): fixed for the real user, whatever --state-dir, HOME or
// XDG_* say, so a grant cannot be re-opened by pointing the console elsewhere. Entries are
// never pruned (a line is about 130 bytes; a consumed grant must stay refused after it expires
// too, or a clock change could revive it).
//
// Thread: each call opens, locks and closes the file; instances may be used from any
// thread, and any number of instances and processes may share a state dir.
#pragma once

#include "common/Outcome.h"
#include "grant/Grant.h"

#include <QString>

namespace gc {

class GrantLedger {
public:
  explicit GrantLedger(QString dir);

  // getpwuid(geteuid())->pw_dir + "/.local/state/guest-console"; empty if the user has no
  // passwd entry (then nothing can be consumed: GRANT_LEDGER).
  static QString perUserDir();

  QString dir() const { return m_dir; }
  QString ledgerPath() const;

  // Records the grant as consumed. GRANT_REUSED when its grant_id is already recorded;
  // GRANT_LEDGER when the ledger cannot be used safely (symlink, not a regular file, owned
  // by someone else, writable by group/others, I/O error) or the grant's id or digest is
  // not in canonical form.
  Status consume(const Grant& grant);

  // Whether grantId is recorded, without consuming anything (for `check`). A missing
  // ledger means nothing was consumed. An unusable ledger yields the failure.
  Outcome<bool> lookup(const QString& grantId) const;
  // lookup() folded to a bool; an unusable ledger counts as consumed (fail closed).
  bool isConsumed(const QString& grantId) const;

private:
  QString m_dir;
};

} // namespace gc
