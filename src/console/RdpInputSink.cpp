#include "console/RdpInputSink.h"

#include "rdp/RdpSession.h"

namespace gc {

Status RdpInputSink::mayWrite(QDeadlineTimer deadline) const {
  if (m_expired && m_expired())
    return Status(Refusal::Expired, QStringLiteral("the grant has expired: nothing more is sent"));
  if (!m_session || m_session->state() != RdpSession::State::Connected)
    return Status(Refusal::InputSendFailed, QStringLiteral("the guest is not connected"));
  if (deadline.hasExpired())
    return Status(Refusal::DrainTimeout, QStringLiteral("deadline passed before the send"));
  return success();
}

Status RdpInputSink::send(const InputEvent& event, QDeadlineTimer deadline) {
  return deliver(event, deadline).status;
}

InputSink::Delivery RdpInputSink::deliver(const InputEvent& event, QDeadlineTimer deadline) {
  if (Status s = mayWrite(deadline); !s.ok())
    return {0, s};
  if (event.kind == InputEvent::Kind::Key) {
    Status s = m_session->sendKey(event.scancode, event.down);
    const int written = s.ok() ? 1 : 0;
    return {written, std::move(s)};
  }
  int written = 0;
  Status s = m_session->sendPointer(event.x, event.y, event.buttons, event.wheel, &written);
  return {written, std::move(s)};
}

Outcome<RdpInputSink::Released> RdpInputSink::releaseHeld(QDeadlineTimer deadline) {
  if (Status s = mayWrite(deadline); !s.ok())
    return s.failure();
  const Outcome<RdpSession::Released> released = m_session->releaseHeld();
  if (!released)
    return released.failure();
  return Released{released->keys, released->buttons};
}

} // namespace gc
