// Owns one virDomainPtr (virDomainFree on destruction). Internal to src/vm: this header
// includes <libvirt/libvirt.h>, so no other part may include it.
#pragma once

#include <QString>

#include <libvirt/libvirt.h>

#include <utility>

namespace gc {

class LibvirtDomain {
public:
  LibvirtDomain() = default;
  explicit LibvirtDomain(virDomainPtr domain) : m_domain(domain) {}
  LibvirtDomain(LibvirtDomain&& other) noexcept : m_domain(std::exchange(other.m_domain, nullptr)) {}
  LibvirtDomain& operator=(LibvirtDomain&& other) noexcept;
  LibvirtDomain(const LibvirtDomain&) = delete;
  LibvirtDomain& operator=(const LibvirtDomain&) = delete;
  ~LibvirtDomain();

  static LibvirtDomain lookupByUuid(virConnectPtr conn, const QString& uuid);

  virDomainPtr get() const { return m_domain; }
  explicit operator bool() const { return m_domain != nullptr; }

  QString name() const;
  QString uuid() const;
  // The domain XML (flags: 0 = live, VIR_DOMAIN_XML_INACTIVE = persistent config);
  // a null QString on failure.
  QString xml(unsigned int flags = 0) const;
  // virDomainState, or -1 on failure.
  int state() const;

private:
  virDomainPtr m_domain = nullptr;
};

// "running", "paused", "shut off", … for messages.
QString domainStateName(int state);

} // namespace gc
