#include "rdp/PointerEncoder.h"

#include <freerdp/input.h>

#include <algorithm>

namespace gc {

QList<quint16> PointerEncoder::encode(quint8 previousButtons, quint8 buttons, bool moved, qint16 wheel) {
  QList<quint16> flags;
  const quint8 changed = quint8((previousButtons ^ buttons) & AllButtons);
  if (moved || (changed == 0 && wheel == 0))
    flags.append(PTR_FLAGS_MOVE);
  const struct {
    quint8 bit;
    quint16 flag;
  } map[] = {{Left, PTR_FLAGS_BUTTON1}, {Right, PTR_FLAGS_BUTTON2}, {Middle, PTR_FLAGS_BUTTON3}};
  for (const auto& b : map) {
    if (changed & b.bit)
      flags.append(quint16(b.flag | ((buttons & b.bit) ? PTR_FLAGS_DOWN : 0)));
  }
  if (wheel != 0) {
    // The rotation is a 9-bit two's complement value; PTR_FLAGS_WHEEL_NEGATIVE is its sign
    // bit (MS-RDPBCGR 2.2.8.1.1.3.1.1.3).
    const int clamped = std::clamp(int(wheel), -255, 255);
    flags.append(quint16(PTR_FLAGS_WHEEL | (quint16(clamped) & WheelRotationMask)));
  }
  return flags;
}

} // namespace gc
