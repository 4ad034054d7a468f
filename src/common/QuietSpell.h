// Waiting for a quiet spell, at most until a bound: the one rule the lock's guest sync (a pause
// in the guest's stream before a corner rung, the settle when nothing answered) and Capture
// Desktop (a picture that stopped changing) share. Standard library only.
//
// Thread: any (pure functions).
#pragma once

#include <algorithm>
#include <chrono>

namespace gc {

struct QuietSpell {
  using Clock = std::chrono::steady_clock;

  bool quiet = false;       // `span` has passed since the last change
  bool waiting = false;     // neither quiet nor past the bound: look again at `next`
  Clock::time_point next{}; // when it may be quiet, or the bound, whichever is first

  static QuietSpell at(Clock::time_point now, Clock::time_point lastChange, Clock::duration span,
                       Clock::time_point bound) {
    const Clock::time_point quietAt = lastChange + span;
    const bool quiet = now >= quietAt;
    return {quiet, !quiet && now < bound, std::min(quietAt, bound)};
  }

  // A single-shot timer's interval that fires at `when` or just after it (a millisecond late
  // rather than early, so the look it triggers finds the spell over), clamped to a day.
  static int timerMs(Clock::time_point when, Clock::time_point now = Clock::now()) {
    using std::chrono::duration_cast;
    using std::chrono::milliseconds;
    const auto wait = duration_cast<milliseconds>(when - now) + milliseconds(1);
    return int(std::clamp<long long>(wait.count(), 0, 24LL * 3600 * 1000));
  }
};

} // namespace gc
