// Delivers gate events (and the one synthetic action) to the RDP session. Lives on the
// main thread; RdpSession's sends return once FreeRDP has flushed the PDU to the socket.
//
// The last gate before the guest: once the grant has expired (the console's wall-clock rule,
// PhaseController::expired) nothing is sent any more, whichever path it came by (pump,
// drain, held-input release, action).
#pragma once

#include "session/InputSink.h"

#include <functional>

namespace gc {

class RdpSession;

class RdpInputSink : public InputSink {
public:
  void setSession(RdpSession* session) { m_session = session; }
  // True once the grant has expired: every later send is refused EXPIRED.
  void setExpiredCheck(std::function<bool()> expired) { m_expired = std::move(expired); }

  Status send(const InputEvent& event, QDeadlineTimer deadline) override;
  Delivery deliver(const InputEvent& event, QDeadlineTimer deadline) override;

  // Releases what the session holds down (RdpSession::releaseHeld); counts only.
  struct Released {
    int keys = 0;
    int buttons = 0;
  };
  Outcome<Released> releaseHeld(QDeadlineTimer deadline);

private:
  Status mayWrite(QDeadlineTimer deadline) const;

  RdpSession* m_session = nullptr;
  std::function<bool()> m_expired;
};

} // namespace gc
