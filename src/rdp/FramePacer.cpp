#include "rdp/FramePacer.h"

namespace gc {

bool FramePacer::allowed(Clock::time_point now) const {
  const auto since = now - m_lastRelease;
  switch (m_mode) {
  case PacingMode::Unpaced:
    return true;
  case PacingMode::NoPanel:
    return since >= m_timing.interval;
  case PacingMode::Panel:
    return inFlight() <= m_timing.maxInFlight || since >= m_timing.hold;
  }
  return true;
}

bool FramePacer::ackNow(Clock::time_point now, std::size_t deferred) {
  if (!allowed(now) && deferred + 1 < m_timing.maxHeld)
    return false;
  m_lastRelease = now;
  return true;
}

bool FramePacer::releaseDue(Clock::time_point now, std::size_t deferred) const {
  return deferred > 0 && allowed(now);
}

} // namespace gc
