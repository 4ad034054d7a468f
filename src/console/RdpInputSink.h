// Delivers gate events (and the one synthetic action) to the RDP session in the RDP reader
// process. Lives on the main thread; RdpReader's sends return once the reader wrote and
// flushed the PDU to the guest's socket.
//
// The last gate before the guest: once the grant has expired (the console's wall-clock rule,
// PhaseController::expired) nothing is sent any more, whichever path it came by (pump,
// drain, held-input release, action).
#pragma once

#include "session/InputSink.h"

#include <QPoint>

#include <functional>
#include <optional>

namespace gc {

class RdpReader;

class RdpInputSink : public InputSink {
public:
  void setSession(RdpReader* session) { m_session = session; }
  // True once the grant has expired: every later send is refused EXPIRED.
  void setExpiredCheck(std::function<bool()> expired) { m_expired = std::move(expired); }

  Status send(const InputEvent& event, QDeadlineTimer deadline) override;
  Delivery deliver(const InputEvent& event, QDeadlineTimer deadline) override;
  // The run goes to the reader with up to RdpReader::kInputsInFlight on their way at once.
  RunDelivery sendRun(std::span<const InputEvent* const> events, QDeadlineTimer deadline) override;

  // Releases what the session holds down (RdpReader::releaseHeld); counts only.
  struct Released {
    int keys = 0;
    int buttons = 0;
  };
  Outcome<Released> releaseHeld(QDeadlineTimer deadline);

  // What the connected guest's server advertised for input (nothing when not connected).
  InputCaps inputCaps() const;
  // Where the last pointer event this sink wrote put the pointer (none before one).
  std::optional<QPoint> lastPointer() const { return m_lastPointer; }

private:
  Status mayWrite(QDeadlineTimer deadline) const;

  RdpReader* m_session = nullptr;
  std::function<bool()> m_expired;
  std::optional<QPoint> m_lastPointer;
};

} // namespace gc
