// InputState: the input stage of RdpSession — writes key and pointer events to FreeRDP and
// remembers what the guest has seen pressed, so the lock barrier can release it.
//
// Thread affinity: none of its own; RdpSession calls it with m_ioMutex held (the main thread
// sends, the worker's event processing is excluded). Private to src/rdp/.
#pragma once

#include "common/Outcome.h"

#include <QList>

#include <bitset>

struct rdp_input;

namespace gc {

class InputState {
public:
  struct Held {
    std::bitset<512> keys; // low byte of the scancode, +256 for 0xE0 extended
    quint8 buttons = 0;    // PointerEncoder bits, and 0x8 / 0x10 for the back / forward buttons
    quint16 x = 0, y = 0;  // last position sent
    QList<quint16> units;  // Unicode code units sent down and not up
  };
  static constexpr qsizetype kMaxHeldUnits = 16;

  // scancode: 0x00xx or 0xE0xx (the caller checked the prefix).
  Status sendKey(rdp_input* input, quint16 scancode, bool down);
  // `sent`: the PDUs written, also when a later one failed. Buttons 0x8 / 0x10 go as
  // TS_POINTERX_EVENT edges; a horizontal wheel as PTR_FLAGS_HWHEEL (positive: right).
  Status sendPointer(rdp_input* input, quint16 x, quint16 y, quint8 buttons, qint16 wheel, int& sent,
                     bool horizontal = false);
  // One UTF-16 code unit, TS_UNICODE_KEYBOARD_EVENT (no release flag = down).
  Status sendUnicode(rdp_input* input, quint16 unit, bool down);

  Held held() const;

private:
  std::bitset<512> m_heldKeys;
  quint8 m_sentButtons = 0;
  QList<quint16> m_heldUnits;
  int m_sentX = -1, m_sentY = -1;
};

} // namespace gc
