// Test support only (library gc_vm_testsupport, never linked into the product): drives
// domains on a read-write test-driver connection so suites can stop, pause, undefine and
// redefine the VM a DomainWatcher or DomainBinder is looking at, without including libvirt.
// Thread: the caller's; blocking.
#pragma once

#include "common/Outcome.h"

#include <QString>

namespace gc {

class LibvirtConnection;

class DomainControl {
public:
  explicit DomainControl(const LibvirtConnection& connection) : m_connection(connection) {}

  Status destroy(const QString& uuid);
  Status shutdown(const QString& uuid);
  Status suspend(const QString& uuid);
  Status resume(const QString& uuid);
  Status create(const QString& uuid); // start a defined, shut-off domain
  Status undefine(const QString& uuid);
  Status define(const QString& domainXml);
  // The persistent configuration (VIR_DOMAIN_XML_INACTIVE).
  Outcome<QString> savedXml(const QString& uuid);
  // virDomainState as an int (1 = running, 3 = paused, 5 = shut off).
  Outcome<int> state(const QString& uuid);

private:
  const LibvirtConnection& m_connection;
};

} // namespace gc
