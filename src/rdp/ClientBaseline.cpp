#include "rdp/ClientBaseline.h"

#include "rdp/front/Limits.h"

#include <QFile>

#include <freerdp/client.h>
#include <freerdp/settings.h>

#include <algorithm>
#include <utility>

namespace gc {

namespace {

BOOL refuseAuthenticate(freerdp*, char**, char**, char**) {
  return FALSE;
}
// Credentials are provided up front; FreeRDP asking means they were refused or missing.
BOOL refuseAuthenticateEx(freerdp*, char**, char**, char**, rdp_auth_reason) {
  return FALSE;
}
// Only reached without ExternalCertificateManagement; never trust FreeRDP's store.
DWORD refuseCertificateEx(freerdp*, const char*, UINT16, const char*, const char*, const char*, const char*,
                          DWORD) {
  return 0;
}
DWORD refuseChangedCertificateEx(freerdp*, const char*, UINT16, const char*, const char*, const char*,
                                 const char*, const char*, const char*, const char*, DWORD) {
  return 0;
}
BOOL refuseGatewayMessage(freerdp*, UINT32, BOOL, BOOL, size_t, const WCHAR*) {
  return FALSE;
}
BOOL refuseSmartcard(freerdp*, SmartcardCertInfo**, DWORD, DWORD*, BOOL) {
  return FALSE;
}
BOOL refuseAccessToken(freerdp*, AccessTokenType, char**, size_t, ...) {
  return FALSE;
}
SSIZE_T noRetry(freerdp*, const char*, size_t, void*) {
  return -1;
}
int ignoreLogonErrorInfo(freerdp*, UINT32, UINT32) {
  return 1;
}
// FreeRDP follows a Server Redirection PDU when Redirect is NULL (ConnectGuard.h); refuse it.
BOOL refuseRedirect(freerdp*) {
  return FALSE;
}

} // namespace

RDP_CLIENT_ENTRY_POINTS ClientBaseline::entryPoints(size_t contextSize, pRdpClientNew clientNew,
                                                    pRdpClientFree clientFree) {
  RDP_CLIENT_ENTRY_POINTS entry{};
  entry.Size = sizeof(RDP_CLIENT_ENTRY_POINTS);
  entry.Version = RDP_CLIENT_INTERFACE_VERSION;
  entry.ContextSize = DWORD(contextSize);
  entry.ClientNew = clientNew;
  entry.ClientFree = clientFree;
  return entry;
}

ClientBaseline::Context ClientBaseline::newContext(size_t contextSize, pRdpClientNew clientNew,
                                                   pRdpClientFree clientFree) {
  RDP_CLIENT_ENTRY_POINTS entry = entryPoints(contextSize, clientNew, clientFree);
  return Context(freerdp_client_context_new(&entry), &freerdp_client_context_free);
}

void ClientBaseline::installRefusingCallbacks(freerdp* instance) {
  instance->LoadChannels = nullptr;     // no add-ins, no static or dynamic channels
  instance->Redirect = &refuseRedirect; // the session replaces it with ConnectGuard's
  instance->PostFinalDisconnect = nullptr;
  instance->Authenticate = &refuseAuthenticate;
  instance->GatewayAuthenticate = &refuseAuthenticate;
  instance->AuthenticateEx = &refuseAuthenticateEx;
  instance->VerifyCertificateEx = &refuseCertificateEx;
  instance->VerifyChangedCertificateEx = &refuseChangedCertificateEx;
  instance->VerifyX509Certificate = nullptr; // the caller's pin check, required
  instance->PresentGatewayMessage = &refuseGatewayMessage;
  instance->LogonErrorInfo = &ignoreLogonErrorInfo;
  instance->ChooseSmartcard = &refuseSmartcard;
  instance->GetAccessToken = &refuseAccessToken;
  instance->RetryDialog = &noRetry;
}

bool ClientBaseline::apply(rdpSettings* s, const ClientTarget& target) {
  const QByteArray host = target.host.toUtf8();
  const QByteArray configDir =
      target.configDir.isEmpty() ? QByteArray(kReaderConfigDir) : QFile::encodeName(target.configDir);
  bool ok =
      freerdp_settings_set_string(s, FreeRDP_ServerHostname, host.constData()) &&
      freerdp_settings_set_uint32(s, FreeRDP_ServerPort, target.port) &&
      freerdp_settings_set_string(s, FreeRDP_ConfigPath, configDir.constData()) &&
      freerdp_settings_set_uint32(s, FreeRDP_TcpConnectTimeout, UINT32(qMax(1, target.connectTimeoutMs))) &&
      // NLA over NTLM only: the guest is reached as 127.0.0.1, for which no Kerberos ticket can
      // exist, and Kerberos would read the host's krb5 configuration (the RDP reader has no
      // files to read).
      freerdp_settings_set_string(s, FreeRDP_AuthenticationPackageList, "ntlm,!kerberos");
  const std::pair<FreeRDP_Settings_Keys_Bool, bool> bools[] = {
      // Certificate: the pin alone decides (VerifyX509Certificate); no store, no auto-accept.
      {FreeRDP_ExternalCertificateManagement, true},
      {FreeRDP_AutoAcceptCertificate, false},
      {FreeRDP_IgnoreCertificate, false},
      // TLS or NLA only.
      {FreeRDP_RdpSecurity, false},
      {FreeRDP_UseRdpSecurityLayer, false},
      {FreeRDP_TlsSecurity, true},
      {FreeRDP_NlaSecurity, true},
      {FreeRDP_ExtSecurity, false},
      {FreeRDP_RdstlsSecurity, false},
      // No channels or redirection of any kind.
      {FreeRDP_SupportDynamicChannels, false},
      {FreeRDP_SupportDisplayControl, false},
      {FreeRDP_RedirectClipboard, false},
      {FreeRDP_RedirectDrives, false},
      {FreeRDP_RedirectHomeDrive, false},
      {FreeRDP_RedirectPrinters, false},
      {FreeRDP_RedirectSmartCards, false},
      {FreeRDP_RedirectSerialPorts, false},
      {FreeRDP_RedirectParallelPorts, false},
      {FreeRDP_RedirectWebAuthN, false},
      {FreeRDP_DeviceRedirection, false},
      {FreeRDP_AudioPlayback, false},
      {FreeRDP_AudioCapture, false},
      {FreeRDP_RemoteConsoleAudio, false},
      {FreeRDP_EncomspVirtualChannel, false},
      {FreeRDP_RemdeskVirtualChannel, false},
      {FreeRDP_SupportEchoChannel, false},
      {FreeRDP_SupportSSHAgentChannel, false},
      {FreeRDP_SupportMultitransport, false},
      {FreeRDP_SupportGeometryTracking, false},
      {FreeRDP_SupportVideoOptimized, false},
      {FreeRDP_MultiTouchInput, false},
      {FreeRDP_RemoteApplicationMode, false},
      {FreeRDP_SmartcardLogon, false},
      // Nothing persisted: no bitmap cache file, no transport dumps, no reconnect cookies.
      {FreeRDP_BitmapCachePersistEnabled, false},
      {FreeRDP_TransportDump, false},
      {FreeRDP_AutoReconnectionEnabled, false},
      {FreeRDP_UseCommonStdioCallbacks, false},
      // What the validating fronts (src/rdp/front, FrontGuard) hold the guest to, advertised
      // as such: no bulk compression, no bitmap codec for surface bits (uncompressed only),
      // no drawing orders or their caches (OrderSupport is cleared below), the MCS channels
      // joined one by one (so the front knows them), no auto-detect or heartbeat.
      {FreeRDP_CompressionEnabled, false},
      {FreeRDP_RemoteFxCodec, false},
      {FreeRDP_NSCodec, false},
      {FreeRDP_JpegCodec, false},
      {FreeRDP_BitmapCacheEnabled, false},
      {FreeRDP_BitmapCacheV3Enabled, false},
      {FreeRDP_DrawNineGridEnabled, false},
      {FreeRDP_DrawGdiPlusEnabled, false},
      {FreeRDP_SupportSkipChannelJoin, false},
      {FreeRDP_NetworkAutoDetect, false},
      {FreeRDP_SupportHeartbeatPdu, false},
      // FreeRDP decodes nothing: rdp_client_connect creates no codec context (it would
      // prepare every one for the desktop's size, the probe's too) and FreeRDP registers no
      // drawing or pointer handler of its own; the session's are LegacyUpdates and
      // FrameMarking, the graphics pipeline is the console's own client.
      {FreeRDP_DeactivateClientDecoding, true},
  };
  for (const auto& [key, value] : bools)
    ok = ok && freerdp_settings_set_bool(s, key, value);
  // The requested desktop and keyboard (Client Core Data); the session judges what the server
  // presents. A layout of 0 would leave the server guessing (xrdp: km-00000000.ini).
  const std::pair<FreeRDP_Settings_Keys_UInt32, quint32> sizes[] = {
      {FreeRDP_DesktopWidth, target.desktop.width},
      {FreeRDP_DesktopHeight, target.desktop.height},
      {FreeRDP_KeyboardLayout, target.desktop.keyboardLayout},
      {FreeRDP_KeyboardType, target.desktop.keyboardType},
      {FreeRDP_KeyboardSubType, target.desktop.keyboardSubType},
      {FreeRDP_KeyboardFunctionKey, target.desktop.keyboardFunctionKey},
  };
  for (const auto& [key, value] : sizes)
    ok = ok && (value == 0 || freerdp_settings_set_uint32(s, key, value));
  // The fronts' bounds (front::Limits), advertised: fast-path reassembly, pointer cache.
  const front::Limits limits;
  const std::pair<FreeRDP_Settings_Keys_UInt32, quint32> bounds[] = {
      {FreeRDP_MultifragMaxRequestSize, limits.maxFastPathReassemblyBytes},
      {FreeRDP_PointerCacheSize, limits.maxPointerCacheEntries},
      {FreeRDP_ColorPointerCacheSize, limits.maxPointerCacheEntries},
      {FreeRDP_GlyphSupportLevel, GLYPH_SUPPORT_NONE},
      {FreeRDP_OffscreenSupportLevel, 0},
      // No multitransport: FreeRDP writes its flags into the Client Multitransport Channel
      // Data whatever SupportMultitransport says, and a server then sends an Initiate
      // Multitransport Request (FreeRDP's server: on an unallocated channel 0).
      {FreeRDP_MultitransportFlags, 0},
  };
  for (const auto& [key, value] : bounds)
    ok = ok && freerdp_settings_set_uint32(s, key, value);
  // Drawing orders off: every entry of the Order Capability Set's orderSupport.
  if (auto* orders = static_cast<BYTE*>(freerdp_settings_get_pointer_writable(s, FreeRDP_OrderSupport)))
    std::fill_n(orders, 32, BYTE(0));
  else
    ok = false;
  return ok;
}

} // namespace gc
