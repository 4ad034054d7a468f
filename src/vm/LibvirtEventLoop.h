// libvirt's event loop, implemented by us (virEventRegisterImpl) as a poll(2) loop on one
// dedicated thread, "gc-libvirt-ev".
//
// Why not virEventRegisterDefaultImpl + virEventRunDefaultImpl on a thread: since libvirt
// 6.x the default implementation is GLib's *default* main context, which Qt's GLib event
// dispatcher already owns on the main thread; a second thread iterating it blocks forever
// waiting for ownership (seen with libvirt 9.0 + Qt 6.4). Our own loop shares nothing.
//
// Threads: start()/stop()/the destructor on the owning (main) thread. libvirt's callbacks
// (DomainWatcher's among them) run on the loop thread and must only hand off to Qt objects
// through queued calls. The registration functions libvirt calls are thread-safe.
//
// Order: start() before opening any connection whose events are wanted. Close those
// connections before stop(): stop() releases the user data of handles and timers libvirt
// has removed (libvirt requires that from a clean stack, never inside its remove call).
// At most one loop runs per process; the implementation stays registered for the life of
// the process (libvirt cannot unregister one), a stopped loop simply dispatches nothing.
#pragma once

#include "common/Outcome.h"

#include <thread>

namespace gc {

class LibvirtEventLoop {
public:
  LibvirtEventLoop() = default;
  LibvirtEventLoop(const LibvirtEventLoop&) = delete;
  LibvirtEventLoop& operator=(const LibvirtEventLoop&) = delete;
  ~LibvirtEventLoop(); // stop()

  // Registers the implementation (once per process) and starts the loop thread.
  // Failure (LIBVIRT_UNAVAILABLE) if another loop is already running or the wake-up
  // descriptor cannot be created.
  Status start();
  // Wakes the loop, joins its thread and frees what libvirt has unregistered. Idempotent.
  void stop();
  bool isRunning() const { return m_thread.joinable(); }

private:
  std::thread m_thread;
};

} // namespace gc
