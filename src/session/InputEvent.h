// A validated viewport input event as the gate holds it. No text, no payload beyond the
// scancode or pointer state: the gate never sees clipboard, files or shortcuts.
#pragma once

#include <QtGlobal>

namespace gc {

struct InputEvent {
  enum class Kind : quint8 { Key, Pointer };

  Kind kind = Kind::Key;
  quint64 seq = 0;      // the panel's sequence number
  quint16 scancode = 0; // Key: RDP set-1 scancode, extended keys as 0xE0xx
  bool down = false;    // Key
  quint16 x = 0;        // Pointer: desktop coordinates
  quint16 y = 0;
  quint8 buttons = 0; // Pointer: bit 0 left, 1 right, 2 middle
  qint16 wheel = 0;   // Pointer: RDP wheel units (120 per notch), |wheel| <= kMaxWheel

  static InputEvent key(quint64 seq, quint16 scancode, bool down) {
    InputEvent e;
    e.kind = Kind::Key;
    e.seq = seq;
    e.scancode = scancode;
    e.down = down;
    return e;
  }
  static InputEvent pointer(quint64 seq, quint16 x, quint16 y, quint8 buttons, qint16 wheel) {
    InputEvent e;
    e.kind = Kind::Pointer;
    e.seq = seq;
    e.x = x;
    e.y = y;
    e.buttons = buttons;
    e.wheel = wheel;
    return e;
  }
};

// RDP's wheel rotation is a 9-bit signed field (TS_POINTER_EVENT, MS-RDPBCGR 2.2.8.1.1.3.1.1.3).
inline constexpr int kMaxWheel = 255;
inline constexpr quint8 kButtonMask = 0x7;

} // namespace gc
