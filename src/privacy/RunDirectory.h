// The run's private directory (DESIGN.md §9): <runtime>/guest-console/runs/<run>/, 0700.
// It holds only the run binding (binding.json: app, run id, pid, process start time, grant
// digest), the MCP socket and FreeRDP's empty config dir; remove() deletes it on every
// close path. Lives on the main thread.
#pragma once

#include "common/Outcome.h"

#include <QString>

namespace gc {

class RunDirectory {
public:
  RunDirectory() = default;
  ~RunDirectory(); // removes the directory if it still exists
  RunDirectory(const RunDirectory&) = delete;
  RunDirectory& operator=(const RunDirectory&) = delete;

  // The app's root of run directories under a runtime dir.
  static QString runsRoot(const QString& runtimeDir);
  // Kernel start time of a process (clock ticks since boot, /proc/<pid>/stat field 22):
  // with the pid, it names a process uniquely across pid reuse. 0 when gone.
  static quint64 processStartTime(qint64 pid);

  // Creates the directory (refusing an existing one, and any link on the way) and writes
  // the binding. Run ids are checked to be a safe path component.
  Status create(const QString& runtimeDir, const QString& runId, const QString& grantDigest);
  QString path() const { return m_path; }
  QString freerdpConfigDir() const;
  QString mcpSocketPath() const;
  bool exists() const;
  // Removes everything inside without following links, then the directory. Idempotent.
  Status remove();

private:
  QString m_path;
};

} // namespace gc
