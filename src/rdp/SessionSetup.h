// SessionSetup: the connection stage of RdpSession — the FreeRDP client entry points, the
// settings a session connects with, the pin check, the PDU-order trace and the socket hook,
// and the legacy path's handlers put in place once connected (LegacyUpdates, FrameMarking:
// they draw into the session's DesktopSurface, one buffer of the guest's pixels).
//
// Thread affinity: configure() runs on the thread calling RdpSession::start() (the main
// thread); every callback runs on the session's FreeRDP worker. Static functions only; they
// reach the session only through its hooks in RdpContext (SessionHooks.h). Private to src/rdp/.
#pragma once

#include "readerwire/ReaderTypes.h"

#include <freerdp/client.h>

namespace gc {

struct SessionSetup {
  // The entry points for freerdp_client_context_new (ContextSize: RdpContext).
  static RDP_CLIENT_ENTRY_POINTS entryPoints();
  // The session's settings on top of ClientBaseline, and the credentials. False when FreeRDP
  // refuses one.
  [[nodiscard]] static bool configure(rdpSettings* settings, const RdpConfig& config,
                                      const RdpCredentials& credentials);

  static BOOL clientNew(freerdp* instance, rdpContext* context);
  static void clientFree(freerdp*, rdpContext* context);
  static BOOL refuseRedirect(freerdp* instance);
  static int logonErrorInfo(freerdp*, UINT32 data, UINT32 type);
  static int verifyX509Certificate(freerdp* instance, const BYTE* pem, size_t length, const char*, UINT16,
                                   DWORD flags);
  static int writePdu(rdpTransport* transport, wStream* s);
  static int tcpConnect(rdpContext* context, rdpSettings* settings, const char* hostname, int port,
                        DWORD timeout);
  static BOOL preConnect(freerdp* instance);
  static BOOL postConnect(freerdp* instance);
  static void postDisconnect(freerdp* instance);
};

} // namespace gc
