#include "vm/LibvirtEventLoop.h"

#include "vm/LibvirtConnection.h"
#include "vm/VmLog.h"

#include <libvirt/libvirt.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <vector>

namespace gc {

namespace {

using Clock = std::chrono::steady_clock;

struct Handle {
  int fd = -1;
  int events = 0;
  virEventHandleCallback cb = nullptr;
  void* opaque = nullptr;
  virFreeCallback ff = nullptr;
  bool deleted = false;
};

struct Timeout {
  int frequencyMs = -1; // -1 disabled, 0 every iteration
  Clock::time_point due;
  virEventTimeoutCallback cb = nullptr;
  void* opaque = nullptr;
  virFreeCallback ff = nullptr;
  bool deleted = false;
};

// The process-wide registry behind the six virEventRegisterImpl functions.
class Registry {
public:
  static Registry& instance() {
    static Registry registry; // never destroyed before libvirt stops calling us
    return registry;
  }

  bool ensureWakeFd() {
    std::lock_guard lock(m_mutex);
    if (m_wakeFd < 0)
      m_wakeFd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return m_wakeFd >= 0;
  }

  int addHandle(int fd, int events, virEventHandleCallback cb, void* opaque, virFreeCallback ff) {
    std::lock_guard lock(m_mutex);
    const int id = m_nextId++;
    m_handles[id] = Handle{fd, events, cb, opaque, ff, false};
    wakeLocked();
    return id;
  }

  void updateHandle(int watch, int events) {
    std::lock_guard lock(m_mutex);
    auto it = m_handles.find(watch);
    if (it == m_handles.end() || it->second.deleted)
      return;
    it->second.events = events;
    wakeLocked();
  }

  int removeHandle(int watch) {
    std::lock_guard lock(m_mutex);
    auto it = m_handles.find(watch);
    if (it == m_handles.end() || it->second.deleted)
      return -1;
    it->second.deleted = true; // freed later, from a clean stack
    wakeLocked();
    return 0;
  }

  int addTimeout(int frequencyMs, virEventTimeoutCallback cb, void* opaque, virFreeCallback ff) {
    std::lock_guard lock(m_mutex);
    const int id = m_nextId++;
    m_timeouts[id] = Timeout{frequencyMs, dueFrom(frequencyMs), cb, opaque, ff, false};
    wakeLocked();
    return id;
  }

  void updateTimeout(int timer, int frequencyMs) {
    std::lock_guard lock(m_mutex);
    auto it = m_timeouts.find(timer);
    if (it == m_timeouts.end() || it->second.deleted)
      return;
    it->second.frequencyMs = frequencyMs;
    it->second.due = dueFrom(frequencyMs);
    wakeLocked();
  }

  int removeTimeout(int timer) {
    std::lock_guard lock(m_mutex);
    auto it = m_timeouts.find(timer);
    if (it == m_timeouts.end() || it->second.deleted)
      return -1;
    it->second.deleted = true;
    wakeLocked();
    return 0;
  }

  void requestStop() {
    std::lock_guard lock(m_mutex);
    m_stopRequested = true;
    wakeLocked();
  }

  // Called by start() before the loop thread exists: a stop() that comes before the new
  // thread has run a single iteration must not be forgotten (run() used to clear the flag
  // itself, and a quick start/stop then joined a loop that never stopped).
  void prepareRun() {
    std::lock_guard lock(m_mutex);
    m_stopRequested = false;
  }

  void run() {
    while (runOnce()) {
    }
  }

  // Frees the user data of removed entries; never called with m_mutex held.
  void purgeRemoved() {
    std::vector<std::pair<virFreeCallback, void*>> frees;
    {
      std::lock_guard lock(m_mutex);
      for (auto it = m_handles.begin(); it != m_handles.end();) {
        if (it->second.deleted) {
          if (it->second.ff)
            frees.emplace_back(it->second.ff, it->second.opaque);
          it = m_handles.erase(it);
        } else {
          ++it;
        }
      }
      for (auto it = m_timeouts.begin(); it != m_timeouts.end();) {
        if (it->second.deleted) {
          if (it->second.ff)
            frees.emplace_back(it->second.ff, it->second.opaque);
          it = m_timeouts.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (const auto& [ff, opaque] : frees)
      ff(opaque);
  }

private:
  static Clock::time_point dueFrom(int frequencyMs) {
    return Clock::now() + std::chrono::milliseconds(std::max(frequencyMs, 0));
  }

  void wakeLocked() {
    if (m_wakeFd >= 0) {
      const uint64_t one = 1;
      [[maybe_unused]] const ssize_t written = ::write(m_wakeFd, &one, sizeof one);
    }
  }

  static int toPollEvents(int events) {
    int out = 0;
    if (events & VIR_EVENT_HANDLE_READABLE)
      out |= POLLIN;
    if (events & VIR_EVENT_HANDLE_WRITABLE)
      out |= POLLOUT;
    return out;
  }

  static int fromPollEvents(short revents) {
    int out = 0;
    if (revents & POLLIN)
      out |= VIR_EVENT_HANDLE_READABLE;
    if (revents & POLLOUT)
      out |= VIR_EVENT_HANDLE_WRITABLE;
    if (revents & (POLLERR | POLLNVAL))
      out |= VIR_EVENT_HANDLE_ERROR;
    if (revents & POLLHUP)
      out |= VIR_EVENT_HANDLE_HANGUP;
    return out;
  }

  // One poll and dispatch; false once a stop was requested.
  bool runOnce() {
    purgeRemoved();
    std::vector<pollfd> fds;
    std::vector<int> watches; // parallel to fds[1..]
    int timeoutMs = -1;
    {
      std::lock_guard lock(m_mutex);
      if (m_stopRequested)
        return false;
      fds.push_back(pollfd{m_wakeFd, POLLIN, 0});
      for (const auto& [id, handle] : m_handles) {
        if (handle.deleted || handle.events == 0)
          continue;
        fds.push_back(pollfd{handle.fd, short(toPollEvents(handle.events)), 0});
        watches.push_back(id);
      }
      const auto now = Clock::now();
      for (const auto& [id, timeout] : m_timeouts) {
        if (timeout.deleted || timeout.frequencyMs < 0)
          continue;
        const auto wait = std::chrono::ceil<std::chrono::milliseconds>(timeout.due - now).count();
        const int ms = int(std::clamp<long long>(wait, 0, 60'000));
        timeoutMs = timeoutMs < 0 ? ms : std::min(timeoutMs, ms);
      }
    }
    const int ready = ::poll(fds.data(), nfds_t(fds.size()), timeoutMs);
    if (ready < 0 && errno != EINTR) {
      qCWarning(lcVm) << "libvirt event loop: poll failed, errno" << errno;
      return false;
    }
    if (fds[0].revents & POLLIN) {
      uint64_t drained = 0;
      [[maybe_unused]] const ssize_t got = ::read(m_wakeFd, &drained, sizeof drained);
    }
    dispatchTimeouts();
    for (size_t i = 1; i < fds.size(); ++i)
      if (fds[i].revents)
        dispatchHandle(watches[i - 1], fds[i].fd, fromPollEvents(fds[i].revents));
    return true;
  }

  void dispatchTimeouts() {
    std::vector<int> due;
    {
      std::lock_guard lock(m_mutex);
      const auto now = Clock::now();
      for (auto& [id, timeout] : m_timeouts) {
        if (timeout.deleted || timeout.frequencyMs < 0 || timeout.due > now)
          continue;
        timeout.due = dueFrom(timeout.frequencyMs);
        due.push_back(id);
      }
    }
    for (int id : due) {
      virEventTimeoutCallback cb = nullptr;
      void* opaque = nullptr;
      {
        // Re-checked: an earlier callback of this round may have removed it.
        std::lock_guard lock(m_mutex);
        auto it = m_timeouts.find(id);
        if (it == m_timeouts.end() || it->second.deleted)
          continue;
        cb = it->second.cb;
        opaque = it->second.opaque;
      }
      cb(id, opaque); // user data stays valid: only this thread frees it
    }
  }

  void dispatchHandle(int watch, int fd, int events) {
    virEventHandleCallback cb = nullptr;
    void* opaque = nullptr;
    {
      std::lock_guard lock(m_mutex);
      auto it = m_handles.find(watch);
      if (it == m_handles.end() || it->second.deleted)
        return;
      cb = it->second.cb;
      opaque = it->second.opaque;
    }
    cb(watch, fd, events, opaque);
  }

  std::mutex m_mutex;
  std::map<int, Handle> m_handles;
  std::map<int, Timeout> m_timeouts;
  int m_nextId = 1;
  int m_wakeFd = -1;
  bool m_stopRequested = false;
};

int addHandle(int fd, int events, virEventHandleCallback cb, void* opaque, virFreeCallback ff) {
  return Registry::instance().addHandle(fd, events, cb, opaque, ff);
}
void updateHandle(int watch, int events) {
  Registry::instance().updateHandle(watch, events);
}
int removeHandle(int watch) {
  return Registry::instance().removeHandle(watch);
}
int addTimeout(int frequencyMs, virEventTimeoutCallback cb, void* opaque, virFreeCallback ff) {
  return Registry::instance().addTimeout(frequencyMs, cb, opaque, ff);
}
void updateTimeout(int timer, int frequencyMs) {
  Registry::instance().updateTimeout(timer, frequencyMs);
}
int removeTimeout(int timer) {
  return Registry::instance().removeTimeout(timer);
}

std::mutex g_loopMutex;
bool g_loopRunning = false;

} // namespace

LibvirtEventLoop::~LibvirtEventLoop() {
  stop();
}

Status LibvirtEventLoop::start() {
  if (isRunning())
    return success();
  {
    std::lock_guard lock(g_loopMutex);
    if (g_loopRunning)
      return Failure{Refusal::LibvirtUnavailable,
                     QStringLiteral("another libvirt event loop is already running")};
    Registry& registry = Registry::instance();
    if (!registry.ensureWakeFd())
      return Failure{Refusal::LibvirtUnavailable,
                     QStringLiteral("cannot create the event loop's wake-up descriptor")};
    LibvirtConnection::initializeLibrary();
    static std::once_flag registered;
    std::call_once(registered, [] {
      virEventRegisterImpl(addHandle, updateHandle, removeHandle, addTimeout, updateTimeout, removeTimeout);
    });
    g_loopRunning = true;
  }
  Registry::instance().prepareRun();
  m_thread = std::thread([] {
    pthread_setname_np(pthread_self(), "gc-libvirt-ev");
    Registry::instance().run();
  });
  return success();
}

void LibvirtEventLoop::stop() {
  if (!m_thread.joinable())
    return;
  Registry::instance().requestStop();
  m_thread.join();
  Registry::instance().purgeRemoved();
  std::lock_guard lock(g_loopMutex);
  g_loopRunning = false;
}

} // namespace gc
