// Orphan cleanup (DESIGN.md §9): removes run directories under
// <runtime>/guest-console/runs/ that a console left behind when it was killed. A directory is
// removed only when its binding.json proves it is this app's (strict JSON, app
// "guest-console", run == the directory's name) and the process it names is gone (dead pid,
// or a reused pid whose kernel start time differs). Everything else is kept and reported:
// links (never followed, at any level), directories without a valid binding, live consoles,
// entries or files owned by another uid, other file systems.
//
// Every step works on directory file descriptors (openat/fstatat with O_NOFOLLOW and
// AT_SYMLINK_NOFOLLOW, unlinkat), so a link planted anywhere is removed as a link or
// refused, and nothing outside the runs root is ever touched.
//
// Thread: reentrant (no shared state); runs on the caller's thread (main, in practice).
#pragma once

#include "common/Outcome.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace gc {

class RunSweeper {
public:
  struct Kept {
    QString run;    // the entry's name under the runs root (or the root itself)
    QString reason; // why it was left alone
  };
  struct Report {
    QStringList removed;
    QList<Kept> kept;
    // Set when the runs root itself was refused (a link, not ours, not private): nothing
    // under it was looked at.
    std::optional<Failure> refused;
    // {"removed":[…],"kept":[{"run","reason"}…]} (+ "error":{code,message} when refused).
    QJsonObject toJson() const;
  };

  // Sweeps <runtimeDir>/guest-console/runs. A missing root is an empty report.
  static Report sweep(const QString& runtimeDir);
};

} // namespace gc
