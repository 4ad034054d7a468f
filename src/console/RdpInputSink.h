// Delivers gate events (and the one synthetic action) to the RDP session. Lives on the
// main thread; RdpSession's sends return once FreeRDP has flushed the PDU to the socket.
#pragma once

#include "session/InputSink.h"

namespace gc {

class RdpSession;

class RdpInputSink : public InputSink {
public:
  void setSession(RdpSession* session) { m_session = session; }
  Status send(const InputEvent& event, QDeadlineTimer deadline) override;

private:
  RdpSession* m_session = nullptr;
};

} // namespace gc
