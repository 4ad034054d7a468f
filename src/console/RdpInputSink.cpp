#include "console/RdpInputSink.h"

#include "privacy/SecureZero.h"
#include "readerhost/RdpReader.h"
#include "readerwire/ReaderWire.h"

#include <chrono>
#include <optional>
#include <type_traits>
#include <vector>

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

namespace {
// The reader wire's message for a gate or action event (not a pause: nothing is sent).
std::optional<RdpReader::InputMessage> messageFor(const InputEvent& event) {
  switch (event.kind) {
  case InputEvent::Kind::Key:
    return wire::Key{.scancode = event.scancode, .down = event.down};
  case InputEvent::Kind::Unicode:
    return wire::Unicode{.codeUnit = event.unit, .down = event.down};
  case InputEvent::Kind::Pointer:
    return wire::Pointer{.x = event.x,
                         .y = event.y,
                         .buttons = event.buttons,
                         .wheel = event.wheel,
                         .horizontal = event.horizontal};
  case InputEvent::Kind::Pause:
    break;
  }
  return std::nullopt;
}

// The messages hold what the operator typed: zeroed before their memory is given back.
void wipe(std::vector<RdpReader::InputMessage>& messages) {
  static_assert(std::is_trivially_copyable_v<RdpReader::InputMessage>);
  secureZero(messages.data(), messages.size() * sizeof(RdpReader::InputMessage));
}
} // namespace

InputSink::Delivery RdpInputSink::deliver(const InputEvent& event, QDeadlineTimer deadline) {
  if (Status s = mayWrite(deadline); !s.ok())
    return {0, s};
  std::optional<RdpReader::InputMessage> message = messageFor(event);
  if (!message)
    return {0, Status(Refusal::Internal, QStringLiteral("a pause is not input"))};
  std::size_t delivered = 0;
  int written = 0;
  Status s =
      m_session->sendInputs(std::span(&*message, 1), remaining(deadline), &delivered, std::span(&written, 1));
  secureZero(&*message, sizeof *message);
  if (event.kind == InputEvent::Kind::Pointer && written > 0)
    m_lastPointer = QPoint(event.x, event.y);
  return {written, std::move(s)};
}

InputSink::RunDelivery RdpInputSink::sendRun(std::span<const InputEvent* const> events,
                                             QDeadlineTimer deadline) {
  if (Status s = mayWrite(deadline); !s.ok())
    return {0, s};
  std::vector<RdpReader::InputMessage> messages;
  messages.reserve(events.size());
  for (const InputEvent* event : events) {
    std::optional<RdpReader::InputMessage> message = messageFor(*event);
    if (!message)
      break; // delivered up to here; the pause is refused below
    messages.push_back(*message);
  }
  RunDelivery run;
  run.status = m_session->sendInputs(messages, remaining(deadline), &run.delivered);
  for (std::size_t i = 0; i < run.delivered; ++i)
    if (events[i]->kind == InputEvent::Kind::Pointer)
      m_lastPointer = QPoint(events[i]->x, events[i]->y);
  wipe(messages);
  if (run.status.ok() && run.delivered < events.size())
    run.status = Status(Refusal::Internal, QStringLiteral("a pause is not input"));
  return run;
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
