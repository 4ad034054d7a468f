// The input gate (DESIGN.md §6). Lives on the main thread, like the PhaseController it asks:
// panel messages arrive through the main event loop, so the phase check in submit() and the
// lock transition can never interleave.
//
// SETUP: a valid event gets accepted into a bounded FIFO and acknowledged; a pump delivers
// the FIFO to the sink in order. Any other phase: refused with PHASE_LOCKED, counted.
// A key is valid only if its scancode is on the protocol's keyboard table (the keys the
// panel and the viewer can produce); any other gets SCANCODE_FORBIDDEN.
#pragma once

#include "common/Outcome.h"
#include "session/InputEvent.h"
#include "session/InputSink.h"
#include "session/PhaseController.h"

#include <QMap>
#include <QObject>
#include <QSize>

#include <chrono>
#include <deque>
#include <functional>
#include <span>

namespace gc {

struct InputGateLimits {
  int capacity = 256;         // queued, not yet delivered
  double ratePerSecond = 400; // sustained accepted events per second
  double burst = 200;         // token bucket depth
  int pumpBatch = 64;         // events delivered per pump turn before yielding to the loop
};

class InputGate : public QObject {
  Q_OBJECT
public:
  using Clock = std::chrono::steady_clock;

  InputGate(PhaseController* phases, InputSink* sink, InputGateLimits limits = {}, QObject* parent = nullptr);
  ~InputGate() override;

  // The protocol's keyboardScancodes table (resources/protocol/panel-protocol.json), sorted.
  static std::span<const quint16> keyboardScancodes();
  static bool isKeyboardScancode(quint16 scancode);

  void setDesktopSize(QSize size) { m_desktop = size; }
  QSize desktopSize() const { return m_desktop; }

  // Validates and queues one event. Returns the accepted sequence number or the refusal.
  Outcome<quint64> submit(const InputEvent& event);

  // LOCKING only: delivers every queued event to the sink before the deadline. Returns the
  // highest sequence number delivered (0 when nothing was ever accepted). On failure the
  // remaining events are dropped and wiped; the caller closes the console.
  Outcome<quint64> drain(QDeadlineTimer deadline);

  // Zeroes and drops everything queued (close, expiry, teardown).
  void wipe();

  quint64 acceptedCount() const { return m_accepted; }
  quint64 deliveredCount() const { return m_delivered; }
  quint64 highestAccepted() const { return m_highestAccepted; }
  quint64 highestDelivered() const { return m_highestDelivered; }
  const QMap<Refusal, quint64>& refusedCounts() const { return m_refused; }
  int queued() const { return static_cast<int>(m_queue.size()); }

  // Tests drive time through this hook; production uses the steady clock.
  void setClockForTest(std::function<Clock::time_point()> now) { m_now = std::move(now); }

signals:
  void accepted(quint64 seq);
  void refused(quint64 seq, gc::Refusal code);
  void delivered(quint64 seq);
  // Delivery outside a lock failed: the console must close (RDP is gone or broken).
  void deliveryFailed(const gc::Failure& failure);

private:
  Outcome<quint64> refuse(quint64 seq, Refusal code, const QString& message);
  std::optional<Failure> validate(const InputEvent& event) const;
  bool takeToken();
  void schedulePump();
  void pump();
  // Sends up to `most` events from the queue's head as one run (InputSink::sendRun); what
  // went leaves the queue, zeroed. On failure wipes the rest and returns the failure.
  Status deliverFront(std::size_t most, QDeadlineTimer deadline);
  static constexpr std::size_t kRunLength = 64; // the most events one run sends

  static constexpr int kPumpSendTimeoutMs = 2000;

  PhaseController* m_phases;
  InputSink* m_sink;
  InputGateLimits m_limits;
  QSize m_desktop{1024, 768};
  std::deque<InputEvent> m_queue;
  bool m_pumpScheduled = false;
  quint64 m_lastSeq = 0;
  quint64 m_highestAccepted = 0;
  quint64 m_highestDelivered = 0;
  quint64 m_accepted = 0;
  quint64 m_delivered = 0;
  QMap<Refusal, quint64> m_refused;
  double m_tokens;
  Clock::time_point m_lastRefill;
  std::function<Clock::time_point()> m_now;
};

} // namespace gc
