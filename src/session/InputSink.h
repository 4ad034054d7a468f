// Where the gate delivers input: the RDP session in the console, a recorder in unit tests.
// send() returns only once the event is on the wire (written and flushed), or fails.
#pragma once

#include "common/Outcome.h"
#include "session/InputEvent.h"

#include <QDeadlineTimer>

#include <cstddef>
#include <span>

namespace gc {

class InputSink {
public:
  virtual ~InputSink() = default;
  virtual Status send(const InputEvent& event, QDeadlineTimer deadline) = 0;

  // What one event put on the wire: the PDUs written (a pointer event can take several: a
  // move and one per button edge), and whether all of it went. The receipt counts these.
  struct Delivery {
    int written = 0;
    Status status = success();
  };
  // Default: a sink that writes one unit per event.
  virtual Delivery deliver(const InputEvent& event, QDeadlineTimer deadline) {
    Status s = send(event, deadline);
    const int written = s.ok() ? 1 : 0;
    return {written, std::move(s)};
  }

  // A run of events, in order, each on the wire before this returns; stops at the first that
  // fails. A sink that can have several on their way at once overrides it (the RDP reader:
  // one round trip for the run, not one per event).
  struct RunDelivery {
    std::size_t delivered = 0; // from the first, the events that went
    Status status = success();
  };
  virtual RunDelivery sendRun(std::span<const InputEvent* const> events, QDeadlineTimer deadline) {
    RunDelivery run;
    for (const InputEvent* event : events) {
      if (run.status = send(*event, deadline); !run.status.ok())
        break;
      ++run.delivered;
    }
    return run;
  }
};

} // namespace gc
