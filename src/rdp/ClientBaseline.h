// ClientBaseline: the one place that states how every FreeRDP client of ours is hardened,
// shared by the session (RdpSession) and the pin probe (CertificateProbe), so the two can
// never drift apart.
//
// - Callbacks: every interactive default freerdp_client_context_new installs (stdin prompts,
//   certificate store, gateway/smartcard/token dialogs, retry) is replaced with a refusal;
//   no add-ins or channels are loaded; a Server Redirection PDU is refused (Redirect returns
//   FALSE; NULL would follow it). The caller then sets its own VerifyX509Certificate (the pin
//   decides) and LogonErrorInfo; the session also its own Redirect (ConnectGuard records what
//   it refused).
// - Settings: loopback target, a private empty ConfigPath, the certificate decided only by
//   VerifyX509Certificate (no store, no auto-accept), TLS or NLA only (no legacy RDP
//   security), no channel, redirection, audio, clipboard or device of any kind, nothing
//   persisted (no bitmap cache file, transport dump or reconnect cookie), nothing decoded by
//   FreeRDP (no codec context, no drawing or pointer handler of its own).
//
// Thread affinity: none (plain functions on a context the caller owns). Private to src/rdp/.
#pragma once

#include "readerwire/ReaderTypes.h"

#include <QString>

#include <freerdp/client.h>
#include <freerdp/freerdp.h>

#include <memory>

namespace gc {

struct ClientTarget {
  QString host; // 127.0.0.1 (callers check before)
  quint16 port = 0;
  QString configDir; // private, empty
  int connectTimeoutMs = 10000;
  ClientDesktop desktop; // what the Client Core Data announces; 0 = FreeRDP's default
};

class ClientBaseline {
public:
  // The ConfigPath of a client in the RDP reader process: a directory that does not exist,
  // inside a sandbox where no file can be opened anyway (FreeRDP writes nothing there).
  static constexpr const char* kReaderConfigDir = "/nonexistent/guest-console-rdp";

  // A client context of `contextSize` bytes (rdpClientContext or a struct that begins with
  // one) with these callbacks; null if FreeRDP cannot make it.
  using Context = std::unique_ptr<rdpContext, decltype(&freerdp_client_context_free)>;
  static RDP_CLIENT_ENTRY_POINTS entryPoints(size_t contextSize, pRdpClientNew clientNew,
                                             pRdpClientFree clientFree);
  static Context newContext(size_t contextSize, pRdpClientNew clientNew, pRdpClientFree clientFree);

  static void installRefusingCallbacks(freerdp* instance);
  // False when FreeRDP refuses a setting (the caller then refuses to connect).
  [[nodiscard]] static bool apply(rdpSettings* settings, const ClientTarget& target);
};

} // namespace gc
