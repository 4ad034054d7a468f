#include "session/InputGate.h"

#include <QLoggingCategory>
#include <QTimer>

#include <algorithm>
#include <cstring>

namespace gc {

Q_LOGGING_CATEGORY(lcGate, "gc.gate")

namespace {

bool validScancode(quint16 code) {
  const quint16 base = code & 0x00FF;
  const quint16 prefix = code & 0xFF00;
  if (base == 0 || base > 0x7F)
    return false;
  return prefix == 0 || prefix == 0xE000;
}

void zero(InputEvent& e) {
  // volatile-free wipe is enough here: the object stays alive and is read again only as zeros.
  std::memset(static_cast<void*>(&e), 0, sizeof e);
}

} // namespace

InputGate::InputGate(PhaseController* phases, InputSink* sink, InputGateLimits limits, QObject* parent)
    : QObject(parent), m_phases(phases), m_sink(sink), m_limits(limits), m_tokens(limits.burst),
      m_now([] { return Clock::now(); }) {
  m_lastRefill = m_now();
  // The gate empties itself the moment the console closes, whatever closed it.
  connect(m_phases, &PhaseController::closed, this, [this] { wipe(); });
}

InputGate::~InputGate() {
  wipe();
}

Outcome<quint64> InputGate::refuse(quint64 seq, Refusal code, const QString& message) {
  ++m_refused[code];
  emit refused(seq, code);
  return Outcome<quint64>(code, message);
}

std::optional<Failure> InputGate::validate(const InputEvent& e) const {
  if (e.kind == InputEvent::Kind::Key) {
    if (!validScancode(e.scancode))
      return Failure{Refusal::InputInvalid,
                     QStringLiteral("scancode 0x%1 out of range").arg(e.scancode, 0, 16)};
    return std::nullopt;
  }
  if (e.x >= m_desktop.width() || e.y >= m_desktop.height())
    return Failure{
        Refusal::InputInvalid,
        QStringLiteral("pointer outside the %1x%2 desktop").arg(m_desktop.width()).arg(m_desktop.height())};
  if (e.buttons & ~kButtonMask)
    return Failure{Refusal::InputInvalid, QStringLiteral("unknown pointer buttons")};
  if (e.wheel > kMaxWheel || e.wheel < -kMaxWheel)
    return Failure{Refusal::InputInvalid, QStringLiteral("wheel out of range")};
  return std::nullopt;
}

bool InputGate::takeToken() {
  const auto now = m_now();
  const double elapsed = std::chrono::duration<double>(now - m_lastRefill).count();
  m_lastRefill = now;
  m_tokens = std::min(m_limits.burst, m_tokens + std::max(0.0, elapsed) * m_limits.ratePerSecond);
  if (m_tokens < 1.0)
    return false;
  m_tokens -= 1.0;
  return true;
}

Outcome<quint64> InputGate::submit(const InputEvent& event) {
  // Order matters: the phase decides first, so nothing about a locked console's input
  // (validity, rate) is even looked at.
  if (m_phases->phase() != Phase::Setup)
    return refuse(event.seq, Refusal::PhaseLocked,
                  QStringLiteral("input is closed in %1").arg(phaseName(m_phases->phase())));
  if (auto bad = validate(event))
    return refuse(event.seq, bad->code, bad->message);
  if (event.seq == 0 || event.seq <= m_lastSeq)
    return refuse(event.seq, Refusal::SequenceInvalid,
                  QStringLiteral("sequence %1 does not follow %2").arg(event.seq).arg(m_lastSeq));
  m_lastSeq = event.seq;
  if (static_cast<int>(m_queue.size()) >= m_limits.capacity)
    return refuse(event.seq, Refusal::QueueFull,
                  QStringLiteral("%1 events already queued").arg(m_queue.size()));
  if (!takeToken())
    return refuse(event.seq, Refusal::RateLimit,
                  QStringLiteral("more than %1 events/s").arg(m_limits.ratePerSecond));

  m_queue.push_back(event);
  m_highestAccepted = event.seq;
  ++m_accepted;
  emit accepted(event.seq);
  schedulePump();
  return event.seq;
}

void InputGate::schedulePump() {
  if (m_pumpScheduled)
    return;
  m_pumpScheduled = true;
  QTimer::singleShot(0, this, &InputGate::pump);
}

Status InputGate::deliverFront(QDeadlineTimer deadline) {
  InputEvent& next = m_queue.front();
  const Status sent = m_sink->send(next, deadline);
  if (!sent.ok()) {
    wipe();
    return sent;
  }
  m_highestDelivered = next.seq;
  zero(next);
  m_queue.pop_front();
  ++m_delivered;
  emit delivered(m_highestDelivered);
  return success();
}

void InputGate::pump() {
  m_pumpScheduled = false;
  // Once the lock is requested only drain() delivers: it owns the barrier.
  if (m_phases->phase() != Phase::Setup)
    return;
  for (int n = 0; n < m_limits.pumpBatch && !m_queue.empty(); ++n) {
    const Status sent = deliverFront(QDeadlineTimer(kPumpSendTimeoutMs));
    if (!sent.ok()) {
      qCWarning(lcGate) << "delivery failed:" << sent.failure().toString();
      emit deliveryFailed(sent.failure());
      return;
    }
  }
  if (!m_queue.empty())
    schedulePump();
}

Outcome<quint64> InputGate::drain(QDeadlineTimer deadline) {
  if (m_phases->phase() != Phase::Locking)
    return Outcome<quint64>(Refusal::PhaseWrong, QStringLiteral("drain outside LOCKING"));
  while (!m_queue.empty()) {
    if (deadline.hasExpired()) {
      wipe();
      return Outcome<quint64>(Refusal::DrainTimeout,
                              QStringLiteral("deadline passed after seq %1").arg(m_highestDelivered));
    }
    const Status sent = deliverFront(deadline);
    if (!sent.ok()) {
      const Refusal code = deadline.hasExpired() ? Refusal::DrainTimeout : Refusal::DrainFailed;
      return Outcome<quint64>(code, sent.failure().message);
    }
  }
  return m_highestDelivered;
}

void InputGate::wipe() {
  for (InputEvent& e : m_queue)
    zero(e);
  m_queue.clear();
}

} // namespace gc
