#include "rdp/SessionSetup.h"

#include "rdp/CertificatePin.h"
#include "rdp/ClientBaseline.h"
#include "rdp/ConnectGuard.h"
#include "rdp/FrameMarking.h"
#include "rdp/FrontGuard.h"
#include "rdp/GraphicsPipeline.h"
#include "rdp/LegacyGraphics.h"
#include "rdp/LegacyUpdates.h"
#include "rdp/RdpContext.h"
#include "rdp/SessionHooks.h"
#include "rdp/WLogRouter.h"

#include <freerdp/error.h>
#include <freerdp/settings.h>

#include <string.h>
#include <unistd.h>
#include <utility>

namespace gc {

namespace {

SessionHooks* sessionOf(freerdp* instance) {
  return reinterpret_cast<RdpContext*>(instance->context)->session;
}

bool setSecretSetting(rdpSettings* settings, FreeRDP_Settings_Keys_String key, const SecureBuffer& value) {
  if (value.isEmpty())
    return freerdp_settings_set_string(settings, key, nullptr);
  return freerdp_settings_set_string_len(settings, key, value.constData(), value.size());
}

} // namespace

RDP_CLIENT_ENTRY_POINTS SessionSetup::entryPoints() {
  RDP_CLIENT_ENTRY_POINTS entry{};
  entry.Size = sizeof(RDP_CLIENT_ENTRY_POINTS);
  entry.Version = RDP_CLIENT_INTERFACE_VERSION;
  entry.ContextSize = sizeof(RdpContext);
  entry.ClientNew = &clientNew;
  entry.ClientFree = &clientFree;
  return entry;
}

bool SessionSetup::configure(rdpSettings* s, const RdpConfig& config, const RdpCredentials& credentials) {
  bool ok = ClientBaseline::apply(
      s, ClientTarget{config.host, config.port, config.configDir, config.connectTimeoutMs, config.desktop});
  const std::pair<FreeRDP_Settings_Keys_Bool, bool> bools[] = {
      // The legacy path takes plain bitmap updates (no RemoteFX/NSCodec surface bits), drawn
      // by LegacyUpdates; the graphics pipeline's settings are GraphicsPipeline's.
      {FreeRDP_RemoteFxCodec, false},
      {FreeRDP_NSCodec, false},
      {FreeRDP_GfxH264, false},
      {FreeRDP_JpegCodec, false},
      {FreeRDP_DesktopResize, true},
      {FreeRDP_AsyncUpdate, false},
      // transport_write waits until the buffered BIO has handed the bytes to the socket:
      // what makes sendKey/sendPointer "written and flushed" on return.
      {FreeRDP_WaitForOutputBufferFlush, true},
  };
  for (const auto& [key, value] : bools)
    ok = ok && freerdp_settings_set_bool(s, key, value);
  ok = ok && freerdp_settings_set_uint32(s, FreeRDP_ColorDepth, 32);
  return ok && GraphicsPipeline::configure(s) &&
         setSecretSetting(s, FreeRDP_Username, credentials.username) &&
         setSecretSetting(s, FreeRDP_Password, credentials.password) &&
         setSecretSetting(s, FreeRDP_Domain, credentials.domain);
}

// The refusing baseline (ClientBaseline) plus the session's own lifecycle hooks and the pin
// check.
void SessionSetup::clientFree(freerdp*, rdpContext* context) {
  auto* ctx = reinterpret_cast<RdpContext*>(context);
  delete std::exchange(ctx->legacy, nullptr);
}

BOOL SessionSetup::clientNew(freerdp* instance, rdpContext* context) {
  auto* ctx = reinterpret_cast<RdpContext*>(context);
  ctx->session = nullptr;
  ctx->originalWritePdu = nullptr;
  ctx->originalTcpConnect = nullptr;
  ctx->pipeline = nullptr;
  ctx->originalReceiveChannelData = nullptr;
  ctx->originalReadPdu = nullptr;
  ctx->legacy = nullptr;
  ctx->gfxChannel = nullptr;
  ctx->legacyFrameOpen = false;
  instance->PreConnect = &preConnect;
  instance->PostConnect = &postConnect;
  instance->PostDisconnect = &postDisconnect;
  ClientBaseline::installRefusingCallbacks(instance);
  instance->Redirect = &refuseRedirect; // NULL would let FreeRDP follow it (ConnectGuard.h)
  instance->VerifyX509Certificate = &verifyX509Certificate;
  instance->LogonErrorInfo = &logonErrorInfo;
  GraphicsPipeline::install(instance, context); // LoadChannels: drdynvc + rdpgfx, nothing else
  return TRUE;
}

// A Server Redirection PDU: the old connection is closed, the new one not yet opened.
BOOL SessionSetup::refuseRedirect(freerdp* instance) {
  sessionOf(instance)->guard().refuseRedirection(instance->context->settings);
  return FALSE;
}

int SessionSetup::logonErrorInfo(freerdp*, UINT32 data, UINT32 type) {
  qCWarning(lcRdp) << "logon error info" << data << type;
  return 1;
}

// The pin alone decides. FreeRDP calls this after the TLS handshake and before CredSSP
// (NLA) or the MCS connect (TLS), i.e. before any credential leaves the process.
int SessionSetup::verifyX509Certificate(freerdp* instance, const BYTE* pem, size_t length, const char*,
                                        UINT16, DWORD flags) {
  SessionHooks* self = sessionOf(instance);
  // A redirect or gateway hop would be a different server: refused outright.
  if (flags & (VERIFY_CERT_FLAG_GATEWAY | VERIFY_CERT_FLAG_REDIRECT)) {
    qCWarning(lcRdp) << "refusing certificate of a redirected/gateway connection";
    return self->judgeCertificate(std::nullopt) ? 1 : 0;
  }
  const auto digest = CertificatePin::leafSha256FromPem(
      QByteArrayView(reinterpret_cast<const char*>(pem), qsizetype(length)));
  if (!digest)
    qCWarning(lcRdp) << "guest certificate could not be parsed";
  return self->judgeCertificate(digest) ? 1 : 0;
}

int SessionSetup::writePdu(rdpTransport* transport, wStream* s) {
  auto* ctx = reinterpret_cast<RdpContext*>(transport_get_context(transport));
  // Refused once the socket is shut for writing (finishGracefully): the PDU counts as written
  // so the session reads on until the guest closes.
  if (!ctx->session->admitWrite())
    return int(Stream_GetPosition(s));
  return ctx->originalWritePdu(transport, s);
}

// FreeRDP's own connect (loopback only, watches the abort event), then a duplicate of the
// socket for abort(): see AbortSocket. ConnectGuard admits connects to the
// granted 127.0.0.1 port only, and none once the session is established, before any socket
// exists.
int SessionSetup::tcpConnect(rdpContext* context, rdpSettings* settings, const char* hostname, int port,
                             DWORD timeout) {
  auto* ctx = reinterpret_cast<RdpContext*>(context);
  // Once a front refused a PDU (or a redirection) the guest gets no new connection either.
  if ((ctx->front && ctx->front->failure()) || !ctx->session->guard().admitConnect(hostname, port)) {
    freerdp_set_last_error_if_not(context, FREERDP_ERROR_CONNECT_CANCELLED);
    return -1;
  }
  SessionHooks* self = ctx->session;
  int fd = self->takeHandedSocket();
  if (fd >= 0) {
    // The RDP reader process cannot open sockets (its sandbox): the console connected this
    // one to the granted port and handed it over. FreeRDP owns it from here on.
    if (!freerdp_settings_set_string(settings, FreeRDP_ClientAddress, "127.0.0.1")) {
      ::close(fd);
      return -1;
    }
  } else {
    fd = ctx->originalTcpConnect(context, settings, hostname, port, timeout);
  }
  if (fd >= 0)
    self->socketConnected(fd);
  return fd;
}

BOOL SessionSetup::preConnect(freerdp* instance) {
  auto* ctx = reinterpret_cast<RdpContext*>(instance->context);
  // freerdp_connect() clears the abort event before calling us, so an abort() that landed
  // before that would be lost; abort() changes the ending before it sets the event.
  if (ctx->session->stopping())
    return FALSE;
  // Wrap the PDU writer to record the order of writes vs. the certificate decision, and the
  // TCP connect to keep a handle on the socket.
  rdpTransportIo io = *freerdp_get_io_callbacks(instance->context);
  if (io.WritePdu == &writePdu)
    return TRUE;
  ctx->originalWritePdu = io.WritePdu;
  io.WritePdu = &writePdu;
  ctx->originalTcpConnect = io.TCPConnect;
  io.TCPConnect = &tcpConnect;
  FrontGuard::install(instance->context, io); // every PDU read is validated before FreeRDP parses it
  return freerdp_set_io_callbacks(instance->context, &io);
}

BOOL SessionSetup::postConnect(freerdp* instance) {
  SessionHooks* self = reinterpret_cast<RdpContext*>(instance->context)->session;
  self->guard().seal();
  // The size the server presented, judged before anything is sized for it.
  rdpSettings* settings = instance->context->settings;
  const QSize presented(int(freerdp_settings_get_uint32(settings, FreeRDP_DesktopWidth)),
                        int(freerdp_settings_get_uint32(settings, FreeRDP_DesktopHeight)));
  DesktopSurface& desktop = self->desktop();
  if (!self->admitDesktopSize(presented, "Demand Active") || !desktop.resize(presented))
    return FALSE;
  // The legacy updates are drawn by the project's decoders straight into the surface of
  // record (the shared desktop in the reader).
  auto* ctx = reinterpret_cast<RdpContext*>(instance->context);
  if (!ctx->legacy)
    ctx->legacy = new LegacyGraphics(desktop);
  ctx->legacy->reset();
  LegacyUpdates::install(instance->context);
  FrameMarking::install(instance->context);
  return TRUE;
}

void SessionSetup::postDisconnect(freerdp*) {
  // Nothing of FreeRDP's to free: the surface of record is RdpSession's, which wipes it after
  // the session (guest pixels); the legacy path's scratch goes with the context (clientFree).
}

} // namespace gc
