// Qt key events -> RDP set-1 scancodes as the panel protocol writes them (extended keys as
// 0xE000 | code; the same table as vscode-extension/media/scancodes.ts). The physical key is
// what counts, so the guest applies its own layout:
// - on xcb and wayland, QKeyEvent::nativeScanCode() is the X11/XKB keycode = evdev code + 8,
//   and evdev codes map to set 1 by a fixed table;
// - elsewhere (offscreen, synthetic QTest events with no native code) Qt::Key is mapped as
//   if the keyboard were US QWERTY.
// Pause/Break is absent on purpose: it is the E1 sequence, not one scancode.
//
// Thread: pure functions; any thread.
#pragma once

#include <QtGlobal>

class QKeyEvent;

namespace gc {

class ScancodeMap {
public:
  // 0 when the key has no scancode.
  static quint16 forEvent(const QKeyEvent& event);
  static quint16 fromEvdev(quint32 evdevCode);
  static quint16 fromQtKey(int key, bool keypad);
  static bool isExtended(quint16 scancode) { return (scancode & 0xFF00) == 0xE000; }
};

} // namespace gc
