// ReaderProcess: the guest-console-rdp process itself, apart from what the console says to it
// (RdpReader). It starts the reader with exactly its two descriptors beside stdio (3: its end
// of the reader socket, 4: the shared desktop), /dev/null for stdin and stdout, and no
// environment but the sanitizers' options; it watches the process through a pidfd and reaps
// it. Nothing of the console's environment, argv or other descriptors reaches the reader.
//
// Thread: the console's main thread (the pidfd's notifier delivers exited() there).
#pragma once

#include "common/Outcome.h"

#include <QObject>
#include <QSocketNotifier>
#include <QString>

#include <chrono>
#include <memory>

namespace gc {

class ReaderProcess : public QObject {
  Q_OBJECT
public:
  // The reader executable: next to this one (a build tree's bin/), else the installed one
  // (GC_READER_INSTALL_PATH); in test builds also the build tree's.
  static QString defaultProgram();

  explicit ReaderProcess(QObject* parent = nullptr);
  ~ReaderProcess() override; // kills and reaps a running reader

  // Starts `program` with `readerEnd` as descriptor 3 and `desktopFd` as descriptor 4 (both
  // stay the caller's to close). RESOURCE_EXHAUSTED when the system has no process to give,
  // RDP_READER_FAILED when the program cannot be started. Once per object.
  Status start(const QString& program, int readerEnd, int desktopFd);

  bool running() const { return m_pid > 0; }
  qint64 pid() const { return m_pid; }
  // Stops the process: `graceful` waits up to `bound` for it to exit by itself, then (or at
  // once) SIGKILL; reaped either way. Idempotent.
  void stop(bool graceful, std::chrono::milliseconds bound);
  // How it ended ("exit 0", "signal 9"), once reaped; empty before.
  QString exitStatus() const { return m_exitStatus; }

signals:
  // The process ended by itself (not by stop()); it has been reaped.
  void exited();

private:
  void reap(bool wait);

  qint64 m_pid = -1;
  int m_pidfd = -1;
  std::unique_ptr<QSocketNotifier> m_exitNotifier;
  QString m_exitStatus;
};

} // namespace gc
