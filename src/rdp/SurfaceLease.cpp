#include "rdp/SurfaceLease.h"

#include <winpr/synch.h>

namespace gc {

SurfaceLease::SurfaceLease() : m_event(CreateEventA(nullptr, TRUE, FALSE, nullptr)) {}

SurfaceLease::~SurfaceLease() {
  CloseHandle(m_event);
}

void SurfaceLease::request(When when) {
  std::lock_guard lock(m_mutex); // serve() resets the event under it: no wake-up is lost
  if (m_held)
    return;
  bool& flag = when == When::Boundary ? m_requested : m_standing;
  if (flag)
    return;
  flag = true;
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

void SurfaceLease::serve(bool changed, const std::function<void(quint64 serial)>& grant,
                         const std::function<bool()>& stopped) {
  std::unique_lock lock(m_mutex);
  if (!m_requested && !m_standing)
    return;
  ResetEvent(m_event); // looked at again after the worker's next event
  if (!atFrameBoundary() || (!m_requested && !changed))
    return;
  m_requested = false;
  m_standing = false;
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
  {
    std::lock_guard lock(m_mutex);
    if (m_standing)
      return false; // serve() grants it before the next event
  }
  if (m_readySaid)
    return false;
  m_readySaid = true;
  return true;
}

} // namespace gc
