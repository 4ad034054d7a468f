// InterruptWatcher: turns SIGINT/SIGTERM into EventWait::interrupt(), so Ctrl-C in the
// middle of a demo (e.g. while waiting for the operator's lock) still ends every child by
// its PID and removes the temporary directory. The handler only writes a byte to a pipe;
// the rest happens on the event loop.
//
// Thread: the main thread; one instance per process.
#pragma once

#include <QObject>

class QSocketNotifier;

namespace gc::tools {

class InterruptWatcher : public QObject {
  Q_OBJECT
public:
  explicit InterruptWatcher(QObject* parent = nullptr);
  ~InterruptWatcher() override;

private:
  static void onSignal(int signal);

  QSocketNotifier* m_notifier = nullptr;
};

} // namespace gc::tools
