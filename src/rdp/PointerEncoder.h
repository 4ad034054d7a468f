// Turns the panel's pointer model (absolute position + button mask + wheel) into the
// RDP pointer PDUs' flag words. The panel sends a click as a pointer with a bit set, then
// one with it clear, so buttons are edges relative to the last mask actually sent.
// Pure; any thread.
#pragma once

#include <QList>

namespace gc {

class PointerEncoder {
public:
  // Button mask bits (the panel protocol's).
  static constexpr quint8 Left = 0x1, Right = 0x2, Middle = 0x4, AllButtons = 0x7;

  // The flag words to send, in order, at one position: a move (when the position changed
  // or nothing else would carry it), then one press/release per changed button (left,
  // right, middle), then a wheel step (positive = away from the user).
  static QList<quint16> encode(quint8 previousButtons, quint8 buttons, bool moved, qint16 wheel);
};

} // namespace gc
