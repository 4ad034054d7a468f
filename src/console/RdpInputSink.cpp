#include "console/RdpInputSink.h"

#include "rdp/RdpSession.h"

namespace gc {

Status RdpInputSink::send(const InputEvent& event, QDeadlineTimer deadline) {
  if (!m_session || m_session->state() != RdpSession::State::Connected)
    return Status(Refusal::InputSendFailed, QStringLiteral("the guest is not connected"));
  if (deadline.hasExpired())
    return Status(Refusal::DrainTimeout, QStringLiteral("deadline passed before the send"));
  if (event.kind == InputEvent::Kind::Key)
    return m_session->sendKey(event.scancode, event.down);
  return m_session->sendPointer(event.x, event.y, event.buttons, event.wheel);
}

} // namespace gc
