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

Status InputState::sendUnicode(rdp_input* input, quint16 unit, bool down) {
  const bool held = m_heldUnits.contains(unit);
  if (down && !held && m_heldUnits.size() >= kMaxHeldUnits)
    return Failure{Refusal::InputInvalid, QStringLiteral("too many Unicode keys held down")};
  if (!freerdp_input_send_unicode_keyboard_event(input, down ? 0 : KBD_FLAGS_RELEASE, unit))
    return Failure{Refusal::InputSendFailed, QStringLiteral("the Unicode key event could not be written")};
  if (down && !held)
    m_heldUnits.append(unit);
  else if (!down)
    m_heldUnits.removeAll(unit);
  return success();
}

Status InputState::sendPointer(rdp_input* input, quint16 x, quint16 y, quint8 buttons, qint16 wheel,
                               int& sent, bool horizontal) {
  constexpr quint8 kExtended = 0x18; // back (XBUTTON1), forward (XBUTTON2)
  const bool moved = x != m_sentX || y != m_sentY;
  const quint8 basic = buttons & PointerEncoder::AllButtons;
  const bool basicChanged = ((m_sentButtons ^ basic) & PointerEncoder::AllButtons) != 0;
  const quint8 extendedChanged = quint8((m_sentButtons ^ buttons) & kExtended);
  const qint16 vertical = horizontal ? 0 : wheel;
  const bool sideways = horizontal && wheel != 0;
  // The basic PDUs unless only an extended button or the horizontal wheel changes (the
  // encoder would add a move nothing asked for).
  QList<quint16> basicFlags;
  if (moved || basicChanged || vertical != 0 || (extendedChanged == 0 && !sideways))
    basicFlags =
        PointerEncoder::encode(quint8(m_sentButtons & PointerEncoder::AllButtons), basic, moved, vertical);
  for (quint16 flags : basicFlags) {
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
  const struct {
    quint8 bit;
    quint16 flag;
  } extended[] = {{0x08, PTR_XFLAGS_BUTTON1}, {0x10, PTR_XFLAGS_BUTTON2}};
  for (const auto& b : extended) {
    if (!(extendedChanged & b.bit))
      continue;
    const bool down = (buttons & b.bit) != 0;
    if (!freerdp_input_send_extended_mouse_event(input, quint16(b.flag | (down ? PTR_XFLAGS_DOWN : 0)), x, y))
      return Failure{Refusal::InputSendFailed,
                     QStringLiteral("the extended pointer event could not be written")};
    ++sent;
    m_sentButtons = quint8((m_sentButtons & ~b.bit) | (down ? b.bit : 0));
    m_sentX = x;
    m_sentY = y;
  }
  if (sideways) {
    // The same 9-bit two's complement rotation as the vertical wheel (MS-RDPBCGR 2.2.8.1.1.3.1.1.3).
    const int clamped = std::clamp(int(wheel), -255, 255);
    if (!freerdp_input_send_mouse_event(input, quint16(PTR_FLAGS_HWHEEL | (quint16(clamped) & 0x01FF)), x, y))
      return Failure{Refusal::InputSendFailed, QStringLiteral("the pointer event could not be written")};
    ++sent;
    m_sentX = x;
    m_sentY = y;
  }
  return success();
}

InputState::Held InputState::held() const {
  return {m_heldKeys, m_sentButtons, quint16(std::max(m_sentX, 0)), quint16(std::max(m_sentY, 0)),
          m_heldUnits};
}

} // namespace gc
