#include "tools/demo/EventWait.h"

#include <QDeadlineTimer>
#include <QEventLoop>
#include <QTimer>

namespace gc::tools {

namespace {
bool g_interrupted = false;
} // namespace

bool EventWait::until(const std::function<bool()>& condition, int timeoutMs) {
  if (g_interrupted)
    return false;
  if (condition())
    return true;
  const QDeadlineTimer deadline(timeoutMs);
  QEventLoop loop;
  QTimer poll;
  // The poll only bounds how late a condition is noticed that changed without an event of
  // ours (e.g. a process reaped); output and messages wake the loop themselves.
  poll.setInterval(10);
  QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
    if (g_interrupted || condition() || deadline.hasExpired())
      loop.quit();
  });
  poll.start();
  loop.exec();
  return !g_interrupted && condition();
}

void EventWait::interrupt() {
  g_interrupted = true;
}

bool EventWait::interrupted() {
  return g_interrupted;
}

} // namespace gc::tools
