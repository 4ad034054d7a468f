// ActionPlan: turns the one ActionSpec into the exact InputEvent sequence the sink sends, all
// of it one segment with nothing else in between:
// - click: hold_keys down in order; per click a move to the point, the button down and up
//   there (count 1-3 times); hold_keys up in reverse. double_click / right_click are clicks.
// - move: one pointer event.
// - drag: hold_keys down; a move to the first point, the button down there, moves along the
//   path no more than kDragStep pixels apart (so a Windows drag threshold is crossed), the
//   button up at the last point; hold_keys up.
// - scroll: hold_keys down; a move to the point; one wheel event of 120 units per notch,
//   vertical first (dy > 0 is down: negative rotation), then horizontal (dx > 0 right).
// - key_chord: keys down in order, up in reverse; hold_key: the same with a Pause between.
// - type_text: per UTF-16 code unit a Unicode down and up (a character above U+FFFF is its
//   surrogate pair, two units); \n, \r\n and \r are Enter, \t is Tab, as scancodes. Without
//   Unicode input at the server, a grant with text_input "scancodes" types the text as US
//   layout scancodes (Shift held for the shifted characters) when every character has one.
// - wait: one Pause; done, fail: nothing.
// What the server did not advertise (Unicode, the horizontal wheel, the back/forward
// buttons) is ACTION_UNSUPPORTED; nothing is planned, nothing sent.
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
  static constexpr int kDragStep = 8; // px between consecutive moves of a drag
  static constexpr qint16 kNotch = 120;

  struct Context {
    InputCaps caps;
    ActionPolicy::TextInput textInput = ActionPolicy::TextInput::Unicode;
    quint32 keyboardLayout = 0x00000409;
  };

  // ACTION_INVALID when a point lies outside `frame` (0 <= x < width, 0 <= y < height) or
  // a key has no scancode; ACTION_UNSUPPORTED as above. Sequence numbers count from 1.
  static Outcome<QList<InputEvent>> plan(const ActionSpec& action, QSize frame, const Context& context);
  static Outcome<QList<InputEvent>> plan(const ActionSpec& action, QSize frame) {
    return plan(action, frame, Context{});
  }

  // RDP set-1 make code for a canonical key name ("ctrl", "s", "f5", "pagedown", "win");
  // extended keys as 0xE0xx, as the panel protocol and InputGate spell them.
  static std::optional<quint16> scancode(QStringView key);

  // A character typed as scancodes on a US layout: the make code and whether Shift is held.
  struct Typed {
    quint16 scancode = 0;
    bool shift = false;
  };
  static std::optional<Typed> usScancode(char16_t c);
};

} // namespace gc
