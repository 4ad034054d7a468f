// EventWait: lets the demo's script read top to bottom ("start the guest, wait for its
// ready line, …") while Qt keeps delivering every child's output, socket message and timer.
// It runs a local event loop until a condition holds or a deadline passes; it never sleeps
// blindly and it re-checks the condition after every batch of events.
//
// Thread: the main thread (the thread whose event loop delivers the awaited events).
#pragma once

#include <functional>

namespace gc::tools {

class EventWait {
public:
  // true as soon as `condition()` holds (checked at once, then every 10 ms while events run);
  // false when `timeoutMs` passed without it, or when interrupted() was called meanwhile.
  static bool until(const std::function<bool()>& condition, int timeoutMs);

  // Makes every current and later until() return false at once (Ctrl-C: clean up and leave).
  static void interrupt();
  static bool interrupted();
};

} // namespace gc::tools
