#include "rdp/ConnectGuard.h"

#include "privacy/SecureBuffer.h"
#include "privacy/SecureZero.h"
#include "rdp/WLogRouter.h"

#include <QLoggingCategory>

#include <freerdp/redirection.h>
#include <freerdp/settings.h>

#include <cstring>
#include <string.h>

namespace gc {

namespace {

// Zeroes a byte-blob setting in place, then drops it.
int wipeBlob(rdpSettings* settings, FreeRDP_Settings_Keys_Pointer key,
             FreeRDP_Settings_Keys_UInt32 lengthKey) {
  const UINT32 length = freerdp_settings_get_uint32(settings, lengthKey);
  auto* data = static_cast<BYTE*>(freerdp_settings_get_pointer_writable(settings, key));
  if (data && length > 0)
    secureZero(data, length);
  freerdp_settings_set_pointer_len(settings, key, nullptr, 0);
  return data ? int(length) : 0;
}

void wipeString(rdpSettings* settings, FreeRDP_Settings_Keys_String key) {
  if (char* value = freerdp_settings_get_string_writable(settings, key))
    secureZero(value, std::strlen(value));
  freerdp_settings_set_string(settings, key, nullptr);
}

} // namespace

void ConnectGuard::allow(QString host, quint16 port) {
  m_host = std::move(host);
  m_port = port;
}

void ConnectGuard::seal() {
  m_sealed = true;
}

bool ConnectGuard::admitConnect(const char* hostname, int port) {
  const bool open = !m_sealed.load() && !m_redirected.load();
  const bool target = hostname && m_port != 0 && QLatin1StringView(hostname) == m_host && port == int(m_port);
  if (open && target) {
    ++m_admitted;
    return true;
  }
  ++m_refused;
  // The name is not logged: after a redirect it is the guest's choice of target.
  qCWarning(lcRdp) << "refused a TCP connect:"
                   << (open ? "not the granted 127.0.0.1 port"
                            : "the session is established (no reconnect, no redirect)");
  return false;
}

void ConnectGuard::refuseRedirection(rdpSettings* settings) {
  Redirection seen;
  seen.flags = freerdp_settings_get_uint32(settings, FreeRDP_RedirectionFlags);
  if (seen.flags & LB_TARGET_NET_ADDRESS)
    ++seen.targetAddresses;
  if (seen.flags & LB_TARGET_NET_ADDRESSES)
    seen.targetAddresses += int(freerdp_settings_get_uint32(settings, FreeRDP_TargetNetAddressCount));
  seen.targetNames =
      ((seen.flags & LB_TARGET_FQDN) ? 1 : 0) + ((seen.flags & LB_TARGET_NETBIOS_NAME) ? 1 : 0);

  // The password cookie: keep a locked copy as the needle for the by-value scrub of the
  // copies FreeRDP keeps where no pointer of ours reaches (its rdpRedirection, freed without
  // zeroing; the received PDU's buffer).
  SecureBuffer cookie;
  {
    const UINT32 length = freerdp_settings_get_uint32(settings, FreeRDP_RedirectionPasswordLength);
    const auto* data =
        static_cast<const char*>(freerdp_settings_get_pointer(settings, FreeRDP_RedirectionPassword));
    if (data && length > 0) {
      auto copy = SecureBuffer::copyOf(QByteArrayView(data, qsizetype(length)));
      if (copy.ok())
        cookie = std::move(copy.value());
    }
  }
  seen.cookieBytes = wipeBlob(settings, FreeRDP_RedirectionPassword, FreeRDP_RedirectionPasswordLength) +
                     wipeBlob(settings, FreeRDP_LoadBalanceInfo, FreeRDP_LoadBalanceInfoLength);
  wipeBlob(settings, FreeRDP_RedirectionTsvUrl, FreeRDP_RedirectionTsvUrlLength);
  wipeBlob(settings, FreeRDP_RedirectionGuid, FreeRDP_RedirectionGuidLength);
  for (FreeRDP_Settings_Keys_String key :
       {FreeRDP_TargetNetAddress, FreeRDP_RedirectionUsername, FreeRDP_RedirectionDomain,
        FreeRDP_RedirectionTargetFQDN, FreeRDP_RedirectionTargetNetBiosName, FreeRDP_ServerHostname})
    wipeString(settings, key);
  // rdp_client_redirect() copied the PDU's user name and domain over the login's.
  if (seen.flags & LB_USERNAME)
    wipeString(settings, FreeRDP_Username);
  if (seen.flags & LB_DOMAIN)
    wipeString(settings, FreeRDP_Domain);
  freerdp_settings_set_pointer_len(settings, FreeRDP_TargetNetAddresses, nullptr, 0);

  if (!cookie.isEmpty()) {
    const SecureBuffer* needles[] = {&cookie};
    seen.residue = ResidueScrubber::scrub(needles);
    cookie.clear();
  }
  {
    std::lock_guard lock(m_mutex);
    m_redirection = seen;
  }
  m_redirected = true;
  qCWarning(lcRdp).noquote() << "refused:" << describe();
}

ConnectGuard::Redirection ConnectGuard::redirection() const {
  std::lock_guard lock(m_mutex);
  return m_redirection;
}

QString ConnectGuard::describe() const {
  const Redirection r = redirection();
  return QStringLiteral(
             "the guest sent a Server Redirection PDU (flags 0x%1: %2 target address(es), %3 target "
             "name(s), %4 cookie byte(s) overwritten, %5 other cop(ies) wiped); no connection was "
             "opened")
      .arg(r.flags, 0, 16)
      .arg(r.targetAddresses)
      .arg(r.targetNames)
      .arg(r.cookieBytes)
      .arg(r.residue.copiesWiped);
}

} // namespace gc
