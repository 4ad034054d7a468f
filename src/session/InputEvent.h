// A validated viewport input event as the gate holds it. No text, no payload beyond the
// scancode or pointer state: the gate never sees clipboard, files or shortcuts. The one
// synthetic action (ActionPlan) also uses Unicode (one UTF-16 code unit of type_text) and
// Pause (a hold_key's or wait's duration; nothing is sent); the gate admits neither.
#pragma once

#include <QtGlobal>

namespace gc {

struct InputEvent {
  enum class Kind : quint8 { Key, Pointer, Unicode, Pause };

  Kind kind = Kind::Key;
  quint64 seq = 0;      // the panel's sequence number
  quint16 scancode = 0; // Key: RDP set-1 scancode, extended keys as 0xE0xx
  bool down = false;    // Key
  quint16 x = 0;        // Pointer: desktop coordinates
  quint16 y = 0;
  quint8 buttons = 0;      // Pointer: bit 0 left, 1 right, 2 middle (3 back, 4 forward: actions only)
  qint16 wheel = 0;        // Pointer: RDP wheel units (120 per notch), |wheel| <= kMaxWheel
  bool horizontal = false; // Pointer: the wheel is the horizontal one (actions only)
  quint16 unit = 0;        // Unicode: a UTF-16 code unit (with `down`)
  quint32 pauseMs = 0;     // Pause

  static InputEvent key(quint64 seq, quint16 scancode, bool down) {
    return {.kind = Kind::Key, .seq = seq, .scancode = scancode, .down = down};
  }
  static InputEvent unicode(quint64 seq, quint16 unit, bool down) {
    return {.kind = Kind::Unicode, .seq = seq, .down = down, .unit = unit};
  }
  static InputEvent pause(quint64 seq, quint32 ms) {
    return {.kind = Kind::Pause, .seq = seq, .pauseMs = ms};
  }
  static InputEvent pointer(quint64 seq, quint16 x, quint16 y, quint8 buttons, qint16 wheel) {
    return {.kind = Kind::Pointer, .seq = seq, .x = x, .y = y, .buttons = buttons, .wheel = wheel};
  }
};

// RDP's wheel rotation is a 9-bit signed field (TS_POINTER_EVENT, MS-RDPBCGR 2.2.8.1.1.3.1.1.3).
inline constexpr int kMaxWheel = 255;
inline constexpr quint8 kButtonMask = 0x7;
// The extended mouse buttons (TS_POINTERX_EVENT XBUTTON1/2), for actions only.
inline constexpr quint8 kButtonBack = 0x8, kButtonForward = 0x10;

// What the guest's RDP server advertised in its Input Capability Set (MS-RDPBCGR 2.2.7.1.6):
// FreeRDP silently drops the events a server did not ask for, so the console refuses them.
struct InputCaps {
  bool unicode = false;         // INPUT_FLAG_UNICODE: TS_UNICODE_KEYBOARD_EVENT
  bool horizontalWheel = false; // TS_INPUT_FLAG_MOUSE_HWHEEL
  bool extendedButtons = false; // INPUT_FLAG_MOUSEX: TS_POINTERX_EVENT (back, forward)
  friend bool operator==(const InputCaps&, const InputCaps&) = default;
};

} // namespace gc
