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
};

} // namespace gc
