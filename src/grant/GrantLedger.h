// GrantLedger: the single-use rule. A grant_id consumed once is refused forever after.
// The ledger is "<dir>/consumed-grants" (directory 0700, file 0600), one line per
// grant: "<grant_id> <sha256 hex> <UTC time> <check>", ids and digests only; <check> is the
// first 16 hex digits of SHA-256 over the three fields before it. Consuming is
// read-check-append-fsync under flock(LOCK_EX), so two processes racing for the same grant
// cannot both win. The product's dir is perUserDir(): fixed for the real user, whatever
// --state-dir, HOME or XDG_* say, so a grant cannot be re-opened by pointing the console
// elsewhere. Entries are never pruned (a line is about 145 bytes; a consumed grant must stay
// refused after it expires too, or a clock change could revive it).
//
// Nobody else can swap or burn the ledger:
// - every directory from the anchor down to the ledger's own is opened by descriptor (an
//   openat chain, O_DIRECTORY|O_NOFOLLOW) and checked on that descriptor: owned by us or
//   root, not writable by group or others unless sticky. Otherwise another user could rename
//   the state dir away and the console would start an empty ledger. The anchor is the
//   user's home (from passwd) for a dir below it, else "/".
// - the file is opened O_NONBLOCK|O_NOFOLLOW, then fstat'ed: a FIFO, a device, a directory or
//   a link is refused at once, never waited on.
// - a record is appended with ONE write() of the whole line and verified; a short write (a
//   full disk) is truncated away and refused (GRANT_LEDGER), so the grant stays usable.
// - the reader counts only complete lines ('\n'-terminated) whose check matches (or
//   three-field lines written before checks existed); a torn tail left by a crash counts for
//   nothing and the next consume truncates it away.
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

  // The line consume() appends for an id and digest at `time` (for tests of the reader).
  static QByteArray recordLine(const QByteArray& id, const QByteArray& digestHex, const QByteArray& time);

  // Records the grant as consumed. GRANT_REUSED when its grant_id is already recorded;
  // GRANT_LEDGER when the ledger cannot be used safely (symlink, not a regular file, owned
  // by someone else, writable by group/others, an ancestor others may rename, I/O error,
  // a short write) or the grant's id or digest is not in canonical form.
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
