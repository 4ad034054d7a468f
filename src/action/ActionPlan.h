// ActionPlan: turns the one ActionSpec into the exact InputEvent sequence the sink sends.
// A click is pointer move, button down, button up at the same point; a double click is two
// such clicks; a right click uses the right button; a key chord presses its modifiers in
// order, presses and releases the key, and releases the modifiers in reverse order.
//
// Thread: stateless; call from any thread.
#pragma once

#include "common/Outcome.h"
#include "grant/ActionSpec.h"
#include "session/InputEvent.h"

#include <QList>
#include <QSize>
#include <QStringView>

#include <optional>

namespace gc {

class ActionPlan {
public:
  // ACTION_INVALID when a pointer action lies outside `frame` (0 <= x < width, 0 <= y <
  // height) or a key has no scancode. Sequence numbers count from 1 within the plan.
  static Outcome<QList<InputEvent>> plan(const ActionSpec& action, QSize frame);

  // RDP set-1 make code for an allowlisted key name ("ctrl", "s", "f5", "pagedown");
  // extended keys as 0xE0xx, as the panel protocol and InputGate spell them.
  static std::optional<quint16> scancode(QStringView key);
};

} // namespace gc
