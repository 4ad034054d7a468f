#include "rdp/InputState.h"

#include "rdp/PointerEncoder.h"

#include <freerdp/input.h>
#include <freerdp/scancode.h>

#include <algorithm>

namespace gc {

Status InputState::sendKey(rdp_input* input, quint16 scancode, bool down) {
  const bool extended = (scancode >> 8) == 0xE0;
  const UINT32 code = MAKE_RDP_SCANCODE(scancode & 0xFF, extended);
  if (!freerdp_input_send_keyboard_event_ex(input, down, FALSE, code))
    return Failure{Refusal::InputSendFailed, QStringLiteral("the key event could not be written")};
  m_heldKeys.set(std::size_t(scancode & 0xFF) + (extended ? 256 : 0), down);
  return success();
}

Status InputState::sendPointer(rdp_input* input, quint16 x, quint16 y, quint8 buttons, qint16 wheel,
                               int& sent) {
  const bool moved = x != m_sentX || y != m_sentY;
  for (quint16 flags : PointerEncoder::encode(m_sentButtons, buttons, moved, wheel)) {
    if (!freerdp_input_send_mouse_event(input, flags, x, y))
      return Failure{Refusal::InputSendFailed, QStringLiteral("the pointer event could not be written")};
    ++sent;
    // Track what the guest has seen, edge by edge, so a failed send is not replayed wrongly.
    if (flags & PTR_FLAGS_BUTTON1)
      m_sentButtons = quint8((m_sentButtons & ~PointerEncoder::Left) |
                             ((flags & PTR_FLAGS_DOWN) ? PointerEncoder::Left : 0));
    if (flags & PTR_FLAGS_BUTTON2)
      m_sentButtons = quint8((m_sentButtons & ~PointerEncoder::Right) |
                             ((flags & PTR_FLAGS_DOWN) ? PointerEncoder::Right : 0));
    if (flags & PTR_FLAGS_BUTTON3)
      m_sentButtons = quint8((m_sentButtons & ~PointerEncoder::Middle) |
                             ((flags & PTR_FLAGS_DOWN) ? PointerEncoder::Middle : 0));
    m_sentX = x;
    m_sentY = y;
  }
  return success();
}

InputState::Held InputState::held() const {
  return {m_heldKeys, m_sentButtons, quint16(std::max(m_sentX, 0)), quint16(std::max(m_sentY, 0))};
}

} // namespace gc
