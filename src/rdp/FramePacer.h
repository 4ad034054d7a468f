// FramePacer: when the console's RDPGFX client acknowledges a frame (RDPGFX_FRAME_ACKNOWLEDGE,
// MS-RDPEGFX 2.2.2.13), so the guest draws no faster than anyone looks.
// A server keeps only a few frames unacknowledged; an acknowledgement held back is the
// protocol's own way to slow it down, and nothing the guest sent is dropped.
//
// - Unpaced (the lock's guest sync, Capture Desktop; the default): every frame at once.
// - NoPanel (nobody sees the frames): at most one release of acknowledgements per
//   `interval`; the session also sends Suppress Output (allow = false) for the legacy path.
// - Panel: a frame is acknowledged while the frames handed to the console (leases) and not
//   yet presented by the panel are at most `maxInFlight`; the console's "presented" releases
//   what was held. A panel that presents nothing for `hold` gets a release anyway.
// In every mode a held acknowledgement is released within max(interval, hold): the session's
// poll loop asks releaseDue() between events, so a guest never stalls for good; and never
// more than `maxHeld` are held.
//
// Pure logic, no clock of its own (times are passed in) and no lock: the owner (RdpSession)
// calls it under its I/O mutex.
#pragma once

#include "readerwire/ReaderTypes.h"

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace gc {

class FramePacer {
public:
  using Clock = std::chrono::steady_clock;
  struct Timing {
    std::chrono::milliseconds interval{500}; // NoPanel: at most 2 releases a second
    std::chrono::milliseconds hold{1000}; // Panel: the longest a panel that presents nothing holds the guest
    std::uint64_t maxInFlight = 2;        // Panel: frames handed and not yet presented
    // Never more held than this: a server that does not slow down for missing acknowledgements
    // (freerdp-shadow-cli3 keeps its capture rate) would otherwise reach the RDPGFX front's
    // frames-in-flight bound (front::Limits::maxFramesInFlight) and be refused. The session
    // sets it to half that bound.
    std::size_t maxHeld = 8;
  };

  FramePacer() = default;
  explicit FramePacer(Timing timing) : m_timing(timing) {}

  void setTiming(Timing timing) { m_timing = timing; }
  const Timing& timing() const { return m_timing; }
  PacingMode mode() const { return m_mode; }
  void setMode(PacingMode mode) { m_mode = mode; }

  // The frames handed to the console so far (the lease serial) and those it presented.
  void noteHanded(std::uint64_t serial) { m_handed = serial > m_handed ? serial : m_handed; }
  void notePresented(std::uint64_t upto) { m_presented = upto > m_presented ? upto : m_presented; }
  std::uint64_t handed() const { return m_handed; }
  std::uint64_t presented() const { return m_presented; }
  std::uint64_t inFlight() const { return m_handed > m_presented ? m_handed - m_presented : 0; }

  // A frame ended with `deferred` acknowledgements already held: acknowledge it (and
  // everything held) now? True also records the release.
  bool ackNow(Clock::time_point now, std::size_t deferred);
  // `deferred` acknowledgements are held: are they to go out now? (Then call noteReleased.)
  bool releaseDue(Clock::time_point now, std::size_t deferred) const;
  void noteReleased(Clock::time_point now) { m_lastRelease = now; }

private:
  bool allowed(Clock::time_point now) const;

  Timing m_timing;
  PacingMode m_mode = PacingMode::Unpaced;
  std::uint64_t m_handed = 0;
  std::uint64_t m_presented = 0;
  Clock::time_point m_lastRelease{};
};

} // namespace gc
