#include "console/RdpInputSink.h"

#include "readerhost/RdpReader.h"
#include "readerwire/ReaderWire.h"

#include <chrono>

namespace gc {

namespace {
// How long the reader may take to answer a send: what is left of the caller's deadline (a
// deadline that never expires still gets a bound: a reader that stops answering is broken).
std::chrono::milliseconds remaining(QDeadlineTimer deadline) {
  const qint64 ms = deadline.isForever() ? 30000 : std::max<qint64>(1, deadline.remainingTime());
  return std::chrono::milliseconds(ms);
}
} // namespace

Status RdpInputSink::mayWrite(QDeadlineTimer deadline) const {
  if (m_expired && m_expired())
    return Status(Refusal::Expired, QStringLiteral("the grant has expired: nothing more is sent"));
  if (!m_session || m_session->state() != RdpReader::State::Connected)
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
  switch (event.kind) {
  case InputEvent::Kind::Key:
  case InputEvent::Kind::Unicode: {
    Status s = event.kind == InputEvent::Kind::Key
                   ? m_session->sendKey(event.scancode, event.down, remaining(deadline))
                   : m_session->sendUnicode(event.unit, event.down, remaining(deadline));
    const int written = s.ok() ? 1 : 0;
    return {written, std::move(s)};
  }
  case InputEvent::Kind::Pointer: {
    int written = 0;
    Status s = m_session->sendPointer(event.x, event.y, event.buttons, event.wheel, &written,
                                      remaining(deadline), event.horizontal);
    if (written > 0)
      m_lastPointer = QPoint(event.x, event.y);
    return {written, std::move(s)};
  }
  case InputEvent::Kind::Pause:
    break;
  }
  return {0, Status(Refusal::Internal, QStringLiteral("a pause is not input"))};
}

InputCaps RdpInputSink::inputCaps() const {
  if (!m_session || m_session->state() != RdpReader::State::Connected)
    return {};
  const quint32 caps = m_session->inputCaps();
  return {(caps & wire::kInputCapUnicode) != 0, (caps & wire::kInputCapHorizontalWheel) != 0,
          (caps & wire::kInputCapExtendedMouse) != 0};
}

Outcome<RdpInputSink::Released> RdpInputSink::releaseHeld(QDeadlineTimer deadline) {
  if (Status s = mayWrite(deadline); !s.ok())
    return s.failure();
  const Outcome<RdpReader::Released> released = m_session->releaseHeld(remaining(deadline));
  if (!released)
    return released.failure();
  return Released{released->keys, released->buttons};
}

} // namespace gc
