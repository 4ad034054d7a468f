#include "tools/demo/InterruptWatcher.h"

#include "tools/demo/EventWait.h"

#include <QSocketNotifier>

#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <unistd.h>

namespace gc::tools {

namespace {
int g_pipe[2] = {-1, -1};
} // namespace

InterruptWatcher::InterruptWatcher(QObject* parent) : QObject(parent) {
  if (::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    return;
  m_notifier = new QSocketNotifier(g_pipe[0], QSocketNotifier::Read, this);
  connect(m_notifier, &QSocketNotifier::activated, this, [] {
    char byte = 0;
    while (::read(g_pipe[0], &byte, 1) > 0) {
    }
    std::fputs("\nguest-console-demo: interrupted; cleaning up\n", stderr);
    EventWait::interrupt();
  });
  struct sigaction action {};
  action.sa_handler = &InterruptWatcher::onSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

InterruptWatcher::~InterruptWatcher() {
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  for (int& fd : g_pipe) {
    if (fd >= 0)
      ::close(fd);
    fd = -1;
  }
}

void InterruptWatcher::onSignal(int) {
  const char byte = 1;
  (void)!::write(g_pipe[1], &byte, 1); // async-signal-safe; a full pipe already says it
}

} // namespace gc::tools
