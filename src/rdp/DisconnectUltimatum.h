// The client's half of a proper RDP disconnect (MS-RDPBCGR 1.3.1.4.1, "User-Initiated on
// Client"): the MCS Disconnect Provider Ultimatum PDU, reason rn-user-requested, written
// through the session's transport (inside TLS). FreeRDP 3.10's freerdp_disconnect() does not
// send it (only its server side does, mcs_send_disconnect_provider_ultimatum is not
// exported), so a server such as xrdp otherwise sees the connection simply vanish.
//
// Thread: the thread that owns the connection's I/O (RdpSession's worker, under m_ioMutex).
#pragma once

struct rdp_context;

namespace gc {

class DisconnectUltimatum {
public:
  // Writes the 9-byte PDU (TPKT, X.224 data, PER "21 80") and flushes it. False if the
  // transport is gone or the write failed; never blocks longer than the transport's write.
  static bool send(rdp_context* context);
};

} // namespace gc
