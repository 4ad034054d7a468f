#include "vm/testsupport/DomainControl.h"

#include "vm/LibvirtConnection.h"
#include "vm/LibvirtDomain.h"

#include <libvirt/libvirt.h>

namespace gc {

namespace {

template <typename Op>
Status onDomain(const LibvirtConnection& connection, const QString& uuid, const char* what, Op op) {
  LibvirtDomain domain = LibvirtDomain::lookupByUuid(connection.handle(), uuid);
  if (!domain)
    return Failure{Refusal::VmNotFound, QStringLiteral("no domain %1").arg(uuid)};
  if (op(domain.get()) < 0)
    return Failure{Refusal::Internal,
                   QStringLiteral("%1 failed: %2").arg(QLatin1String(what), LibvirtConnection::lastError())};
  return success();
}

} // namespace

Status DomainControl::destroy(const QString& uuid) {
  return onDomain(m_connection, uuid, "destroy", virDomainDestroy);
}

Status DomainControl::shutdown(const QString& uuid) {
  return onDomain(m_connection, uuid, "shutdown", virDomainShutdown);
}

Status DomainControl::suspend(const QString& uuid) {
  return onDomain(m_connection, uuid, "suspend", virDomainSuspend);
}

Status DomainControl::resume(const QString& uuid) {
  return onDomain(m_connection, uuid, "resume", virDomainResume);
}

Status DomainControl::create(const QString& uuid) {
  return onDomain(m_connection, uuid, "create", virDomainCreate);
}

Status DomainControl::undefine(const QString& uuid) {
  return onDomain(m_connection, uuid, "undefine", virDomainUndefine);
}

Status DomainControl::define(const QString& domainXml) {
  virDomainPtr domain = virDomainDefineXML(m_connection.handle(), domainXml.toUtf8().constData());
  if (!domain)
    return Failure{Refusal::Internal, QStringLiteral("define failed: ") + LibvirtConnection::lastError()};
  virDomainFree(domain);
  return success();
}

Outcome<QString> DomainControl::savedXml(const QString& uuid) {
  LibvirtDomain domain = LibvirtDomain::lookupByUuid(m_connection.handle(), uuid);
  const QString xml = domain.xml(VIR_DOMAIN_XML_INACTIVE);
  if (xml.isNull())
    return Failure{Refusal::Internal, QStringLiteral("no XML: ") + LibvirtConnection::lastError()};
  return xml;
}

Outcome<int> DomainControl::state(const QString& uuid) {
  LibvirtDomain domain = LibvirtDomain::lookupByUuid(m_connection.handle(), uuid);
  const int state = domain.state();
  if (state < 0)
    return Failure{Refusal::Internal, QStringLiteral("no state: ") + LibvirtConnection::lastError()};
  return state;
}

} // namespace gc
