#include "vm/LibvirtEventLoop.h"

#include "vm/LibvirtConnection.h"
#include "vm/VmLog.h"

#include <libvirt/libvirt.h>

#include <mutex>
#include <pthread.h>

namespace gc {

namespace {

std::atomic_bool g_loopRunning{false};

// A one-shot zero-delay timer: adding it from another thread interrupts the loop's poll().
void wakeOnce(int timer, void* /*opaque*/) {
  virEventRemoveTimeout(timer);
}

} // namespace

LibvirtEventLoop::~LibvirtEventLoop() {
  stop();
}

Status LibvirtEventLoop::start() {
  if (isRunning())
    return success();
  LibvirtConnection::initializeLibrary();
  static std::once_flag registered;
  static int registerResult = 0;
  std::call_once(registered, [] { registerResult = virEventRegisterDefaultImpl(); });
  if (registerResult < 0)
    return Failure{Refusal::LibvirtUnavailable,
                   QStringLiteral("cannot register libvirt's event loop: ") + LibvirtConnection::lastError()};
  bool expected = false;
  if (!g_loopRunning.compare_exchange_strong(expected, true))
    return Failure{Refusal::LibvirtUnavailable,
                   QStringLiteral("another libvirt event loop is already running")};
  m_stopRequested = false;
  m_thread = std::thread([this] { run(); });
  return success();
}

void LibvirtEventLoop::run() {
  pthread_setname_np(pthread_self(), "gc-libvirt-ev");
  while (!m_stopRequested.load()) {
    if (virEventRunDefaultImpl() < 0) {
      qCWarning(lcVm).noquote() << "libvirt event loop failed:" << LibvirtConnection::lastError();
      break;
    }
  }
}

void LibvirtEventLoop::stop() {
  if (!m_thread.joinable())
    return;
  m_stopRequested = true;
  if (virEventAddTimeout(0, wakeOnce, nullptr, nullptr) < 0)
    qCWarning(lcVm) << "cannot wake the libvirt event loop";
  m_thread.join();
  g_loopRunning = false;
}

} // namespace gc
