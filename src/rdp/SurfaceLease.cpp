#include "rdp/SurfaceLease.h"

#include <winpr/synch.h>

namespace gc {

SurfaceLease::SurfaceLease() : m_event(CreateEventA(nullptr, TRUE, FALSE, nullptr)) {}

SurfaceLease::~SurfaceLease() {
  CloseHandle(m_event);
}

void SurfaceLease::request() {
  {
    std::lock_guard lock(m_mutex);
    if (m_requested || m_held)
      return;
    m_requested = true;
  }
  SetEvent(m_event);
}

void SurfaceLease::giveBack() {
  {
    std::lock_guard lock(m_mutex);
    m_held = false;
  }
  m_returned.notify_all();
}

void SurfaceLease::wake() {
  {
    std::lock_guard lock(m_mutex); // a worker between its check and its wait sees `stopped`
  }
  m_returned.notify_all();
}

void SurfaceLease::serve(const std::function<void(quint64 serial)>& grant,
                         const std::function<bool()>& stopped) {
  std::unique_lock lock(m_mutex);
  if (!m_requested || !atFrameBoundary())
    return;
  ResetEvent(m_event);
  m_requested = false;
  m_held = true;
  m_readySaid = false;
  const quint64 serial = ++m_serial;
  lock.unlock();
  grant(serial);
  lock.lock();
  m_returned.wait(lock, [&] { return !m_held || stopped(); });
}

void SurfaceLease::frameBegan() {
  if (!m_frameOpen) {
    m_frameOpen = true;
    m_frameOpenedAt = std::chrono::steady_clock::now();
  }
}

bool SurfaceLease::atFrameBoundary() const {
  return !m_frameOpen || std::chrono::steady_clock::now() - m_frameOpenedAt >= kFrameHold;
}

bool SurfaceLease::takeReadyToSay() {
  if (m_readySaid)
    return false;
  m_readySaid = true;
  return true;
}

} // namespace gc
