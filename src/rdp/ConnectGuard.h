// ConnectGuard: the console's RDP client connects only to 127.0.0.1 and the granted port, never
// again once the session is established, and follows no Server Redirection PDU (MS-RDPBCGR 2.2.13).
//
// Why two hooks: FreeRDP 3.10 acts on a redirection PDU by itself. rdp_check_fds() ->
// rdp_client_redirect() closes the connection, copies the PDU's target, user name, domain,
// password cookie and load-balance cookie into the settings and connects to the target;
// `instance->Redirect = NULL` means "go ahead" (IFCALLRESULT(TRUE, ...)). So:
// - refuseRedirection() is the freerdp::Redirect callback. FreeRDP calls it after the old
//   connection is closed and before the new one is opened; it returns FALSE, so no socket is
//   opened. It records what the PDU carried (flags and counts only, never the target or the
//   credentials) and overwrites the secrets it carried in the settings, then scrubs any other
//   copy of the password cookie by value (FreeRDP frees its own copy without zeroing it).
// - admitConnect() guards rdpTransportIo::TCPConnect: connects go to exactly 127.0.0.1 and
//   the granted port, and only until the session is established (seal(), from PostConnect):
//   FreeRDP's security negotiation may connect again to the same target while it falls back
//   from one protocol to the next (a refused first connect included), but once connected any
//   further connect (a redirect that got past the callback, freerdp_reconnect() after a
//   transport failure) is refused before socket() is called.
// Known limit: for a redirection naming a host NAME (FQDN or NetBIOS) FreeRDP resolves the
// name (getaddrinfo) before calling the Redirect callback; no connection to the target follows.
//
// Thread: both hooks run on the RDP worker inside FreeRDP; the getters may be called from any
// thread (atomics; summary() is written before the worker posts failed()/lost()).
#pragma once

#include "privacy/ResidueScrubber.h"

#include <QString>

#include <atomic>
#include <mutex>

typedef struct rdp_settings rdpSettings;

namespace gc {

class ConnectGuard {
public:
  // What a refused redirection PDU carried: counts and flags, nothing it named.
  struct Redirection {
    quint32 flags = 0;       // RedirectionFlags (LB_*)
    int targetAddresses = 0; // TargetNetAddress + TargetNetAddresses entries
    int targetNames = 0;     // TargetFQDN, TargetNetBiosName
    int cookieBytes = 0;     // password cookie + load-balance info bytes, overwritten
    ScrubReport residue;     // other copies of the password cookie, overwritten by value
  };

  void allow(QString host, quint16 port); // before the connect starts

  // TCPConnect hook: true for a connect to exactly the allowed host and port before seal().
  bool admitConnect(const char* hostname, int port);
  // The session is established (PostConnect): no connect is admitted from now on.
  void seal();
  // Redirect callback body: records and wipes the redirection; the caller returns FALSE.
  void refuseRedirection(rdpSettings* settings);

  bool redirectionRefused() const { return m_redirected.load(); }
  int connectsAdmitted() const { return m_admitted.load(); }
  int connectsRefused() const { return m_refused.load(); }
  Redirection redirection() const;
  // "the guest sent a Server Redirection PDU (...)": for the close reason and the evidence.
  QString describe() const;

private:
  QString m_host;
  quint16 m_port = 0;
  std::atomic<int> m_admitted{0};
  std::atomic<int> m_refused{0};
  std::atomic<bool> m_redirected{false};
  std::atomic<bool> m_sealed{false};
  mutable std::mutex m_mutex; // a leaf: guards m_redirection
  Redirection m_redirection;
};

} // namespace gc
