// Runs libvirt's default event implementation (virEventRegisterDefaultImpl) on a dedicated
// thread, so domain events and connection-close notices arrive without the Qt event loop
// having to host libvirt's file descriptors and timers.
//
// Threads: start()/stop()/the destructor on the owning (main) thread. libvirt callbacks
// (DomainWatcher's) run on the loop thread "gc-libvirt-events" and must only hand off to
// the main thread (queued), never touch Qt objects directly.
//
// Order: start() before opening any connection whose events are wanted (libvirt binds a
// connection's event machinery to the implementation registered when it opens). Close
// those connections before stop(): the loop's last iteration frees the timers and handles
// they remove. At most one loop runs per process; the implementation stays registered for
// the life of the process (libvirt cannot unregister it).
#pragma once

#include "common/Outcome.h"

#include <atomic>
#include <thread>

namespace gc {

class LibvirtEventLoop {
public:
  LibvirtEventLoop() = default;
  LibvirtEventLoop(const LibvirtEventLoop&) = delete;
  LibvirtEventLoop& operator=(const LibvirtEventLoop&) = delete;
  ~LibvirtEventLoop(); // stop()

  // Failure (LIBVIRT_UNAVAILABLE) if the implementation cannot be registered or another
  // loop is already running.
  Status start();
  // Wakes the loop and joins its thread. Idempotent.
  void stop();
  bool isRunning() const { return m_thread.joinable(); }

private:
  void run();

  std::thread m_thread;
  std::atomic_bool m_stopRequested{false};
};

} // namespace gc
