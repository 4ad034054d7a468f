// Where the gate delivers input: the RDP session in the console, a recorder in unit tests.
// send() returns only once the event is on the wire (written and flushed), or fails.
#pragma once

#include "common/Outcome.h"
#include "session/InputEvent.h"

#include <QDeadlineTimer>

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
};

} // namespace gc
