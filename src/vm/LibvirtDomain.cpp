#include "vm/LibvirtDomain.h"

#include <cstdlib>

namespace gc {

LibvirtDomain& LibvirtDomain::operator=(LibvirtDomain&& other) noexcept {
  if (this != &other) {
    if (m_domain)
      virDomainFree(m_domain);
    m_domain = std::exchange(other.m_domain, nullptr);
  }
  return *this;
}

LibvirtDomain::~LibvirtDomain() {
  if (m_domain)
    virDomainFree(m_domain);
}

LibvirtDomain LibvirtDomain::lookupByUuid(virConnectPtr conn, const QString& uuid) {
  return LibvirtDomain(virDomainLookupByUUIDString(conn, uuid.toUtf8().constData()));
}

QString LibvirtDomain::name() const {
  const char* name = m_domain ? virDomainGetName(m_domain) : nullptr;
  return name ? QString::fromUtf8(name) : QString();
}

QString LibvirtDomain::uuid() const {
  char buffer[VIR_UUID_STRING_BUFLEN] = {};
  if (!m_domain || virDomainGetUUIDString(m_domain, buffer) < 0)
    return {};
  return QString::fromLatin1(buffer);
}

QString LibvirtDomain::xml(unsigned int flags) const {
  if (!m_domain)
    return {};
  char* text = virDomainGetXMLDesc(m_domain, flags);
  if (!text)
    return {};
  QString result = QString::fromUtf8(text);
  std::free(text);
  return result;
}

int LibvirtDomain::state() const {
  int state = 0;
  int reason = 0;
  if (!m_domain || virDomainGetState(m_domain, &state, &reason, 0) < 0)
    return -1;
  return state;
}

QString domainStateName(int state) {
  switch (state) {
  case VIR_DOMAIN_NOSTATE:
    return QStringLiteral("no state");
  case VIR_DOMAIN_RUNNING:
    return QStringLiteral("running");
  case VIR_DOMAIN_BLOCKED:
    return QStringLiteral("blocked");
  case VIR_DOMAIN_PAUSED:
    return QStringLiteral("paused");
  case VIR_DOMAIN_SHUTDOWN:
    return QStringLiteral("shutting down");
  case VIR_DOMAIN_SHUTOFF:
    return QStringLiteral("shut off");
  case VIR_DOMAIN_CRASHED:
    return QStringLiteral("crashed");
  case VIR_DOMAIN_PMSUSPENDED:
    return QStringLiteral("suspended by guest power management");
  default:
    return QStringLiteral("unknown state %1").arg(state);
  }
}

} // namespace gc
