#include "vm/DomainWatcher.h"

#include "vm/LibvirtConnection.h"
#include "vm/LibvirtDomain.h"
#include "vm/VmLog.h"

#include <QCryptographicHash>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include <cstdlib>
#include <cstring>
#include <iterator>
#include <mutex>

namespace gc {

// Shared between the watcher and libvirt's lifecycle registration: libvirt may call back on
// its loop thread until a deregistration completes, and frees its copy (freeRelayRef) only
// afterwards, so the watcher detaches here before it dies instead of relying on ordering.
// The close-callback registration does not share it (see DomainWatcher::start).
class DomainWatcherRelay {
public:
  std::mutex mutex;
  DomainWatcher* watcher = nullptr;

  void post(const QString& reason) {
    std::lock_guard lock(mutex);
    if (!watcher)
      return;
    // Posted while the watcher cannot be destroyed (it clears the pointer under this lock
    // first); a posted call to a destroyed receiver is discarded by Qt.
    DomainWatcher* target = watcher;
    QMetaObject::invokeMethod(
        target, [target, reason] { target->fire(reason); }, Qt::QueuedConnection);
  }
};

namespace {

// The lifecycle registration owns one reference to the relay, released by libvirt (freeRelayRef).
using RelayRef = std::shared_ptr<DomainWatcherRelay>;

void* newRelayRef(const RelayRef& relay) {
  return new RelayRef(relay);
}

void freeRelayRef(void* opaque) {
  delete static_cast<RelayRef*>(opaque);
}

DomainWatcherRelay& relayOf(void* opaque) {
  return **static_cast<RelayRef*>(opaque);
}

QString lifecycleReason(int event, int detail) {
  switch (event) {
  case VIR_DOMAIN_EVENT_STOPPED: {
    static const char* const details[] = {"shut down",
                                          "destroyed",
                                          "crashed",
                                          "migrated away",
                                          "saved",
                                          "failed",
                                          "reverted to an offline snapshot"};
    const char* what = detail >= 0 && detail < int(std::size(details)) ? details[detail] : "stopped";
    return QStringLiteral("the domain stopped (%1)").arg(QLatin1String(what));
  }
  case VIR_DOMAIN_EVENT_SHUTDOWN:
    return QStringLiteral("the domain is shutting down");
  case VIR_DOMAIN_EVENT_SUSPENDED:
    return QStringLiteral("the domain was paused");
  case VIR_DOMAIN_EVENT_PMSUSPENDED:
    return QStringLiteral("the domain was suspended by guest power management");
  case VIR_DOMAIN_EVENT_CRASHED:
    return QStringLiteral("the domain crashed");
  case VIR_DOMAIN_EVENT_UNDEFINED:
    return QStringLiteral("the domain was undefined");
  case VIR_DOMAIN_EVENT_DEFINED: {
    // UPDATED (redefined), RENAMED, FROM_SNAPSHOT, or ADDED (a running transient domain
    // made persistent): every one changes what the grant was checked against.
    static const char* const details[] = {"added", "updated", "renamed", "restored from a snapshot"};
    const char* what = detail >= 0 && detail < int(std::size(details)) ? details[detail] : "changed";
    return QStringLiteral("the domain was redefined (%1)").arg(QLatin1String(what));
  }
  default: // STARTED, RESUMED: the domain is (still) running
    return {};
  }
}

int onLifecycle(virConnectPtr, virDomainPtr, int event, int detail, void* opaque) {
  const QString reason = lifecycleReason(event, detail);
  if (!reason.isEmpty()) {
    relayOf(opaque).post(reason);
  }
  return 0;
}

// opaque: the watcher's relay itself, not an owned reference (see DomainWatcher::start).
void onConnectionClosed(virConnectPtr, int reason, void* opaque) {
  static const char* const reasons[] = {"error", "end of file", "keepalive timeout", "client closed it"};
  const char* what = reason >= 0 && reason < int(std::size(reasons)) ? reasons[reason] : "unknown";
  static_cast<DomainWatcherRelay*>(opaque)->post(
      QStringLiteral("the libvirt connection closed (%1)").arg(QLatin1String(what)));
}

} // namespace

DomainWatcher::DomainWatcher(const LibvirtConnection& connection, const QString& uuid, QObject* parent)
    : QObject(parent), m_conn(connection.handle()), m_uuid(uuid),
      m_relay(std::make_shared<DomainWatcherRelay>()) {
  m_relay->watcher = this;
  if (m_conn)
    virConnectRef(m_conn);
  m_pollTimer.setTimerType(Qt::CoarseTimer);
  connect(&m_pollTimer, &QTimer::timeout, this, &DomainWatcher::poll);
}

DomainWatcher::~DomainWatcher() {
  {
    std::lock_guard lock(m_relay->mutex);
    m_relay->watcher = nullptr;
  }
  unsubscribe();
  if (m_domain)
    virDomainFree(m_domain);
  if (m_conn)
    virConnectClose(m_conn);
}

Status DomainWatcher::start(std::chrono::milliseconds pollInterval, Sources sources) {
  if (!m_conn)
    return Failure{Refusal::LibvirtUnavailable, QStringLiteral("no libvirt connection")};
  if (!m_domain) {
    m_domain = virDomainLookupByUUIDString(m_conn, m_uuid.toUtf8().constData());
    if (!m_domain)
      return Failure{Refusal::VmNotFound, QStringLiteral("no domain with UUID %1 to watch").arg(m_uuid)};
  }
  m_persistent = virDomainIsPersistent(m_domain) == 1;
  m_config = configDigest();

  if (sources == Sources::EventsAndPoll && m_lifecycleCallback < 0) {
    // libvirt calls freeRelayRef only for a registration that succeeded.
    void* lifecycleRef = newRelayRef(m_relay);
    m_lifecycleCallback =
        virConnectDomainEventRegisterAny(m_conn, m_domain, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
                                         VIR_DOMAIN_EVENT_CALLBACK(onLifecycle), lifecycleRef, freeRelayRef);
    if (m_lifecycleCallback < 0) {
      freeRelayRef(lifecycleRef);
      return Failure{Refusal::LibvirtUnavailable,
                     QStringLiteral("cannot subscribe to the domain's lifecycle "
                                    "events (is the libvirt event loop running?): ") +
                         LibvirtConnection::lastError()};
    }
    // Not every driver reports closing (the test driver never closes); the poll covers it.
    // No free callback here, unlike above: libvirt (libvirt-host.c) hands the registration to
    // the driver only if the driver implements close callbacks (remote, vz) and otherwise
    // returns 0 and drops it, so a free callback would never run for the test driver (and
    // an owned reference would leak). The relay stays ours, kept alive by m_relay, and is
    // safe to release after unsubscribe(): a driver that keeps the registration calls back
    // under the same lock virConnectUnregisterCloseCallback takes (datatypes.c), so no call
    // is running or can follow once that returns.
    if (virConnectRegisterCloseCallback(m_conn, onConnectionClosed, m_relay.get(), nullptr) == 0) {
      m_closeCallback = true;
    } else {
      qCDebug(lcVm).noquote() << "no close callback on this connection:" << LibvirtConnection::lastError();
    }
  }
  m_pollTimer.start(pollInterval);
  QMetaObject::invokeMethod(this, &DomainWatcher::poll, Qt::QueuedConnection);
  return success();
}

void DomainWatcher::poll() {
  if (m_fired || !m_domain)
    return;
  int state = 0;
  int reason = 0;
  if (virDomainGetState(m_domain, &state, &reason, 0) < 0) {
    const virErrorPtr error = virGetLastError();
    if (error && error->code == VIR_ERR_NO_DOMAIN)
      fire(QStringLiteral("the domain no longer exists"));
    else if (virConnectIsAlive(m_conn) != 1)
      fire(QStringLiteral("the libvirt connection closed"));
    else
      fire(QStringLiteral("the domain's state cannot be read: ") + LibvirtConnection::lastError());
    return;
  }
  if (state != VIR_DOMAIN_RUNNING) {
    fire(QStringLiteral("the domain is no longer running (%1)").arg(domainStateName(state)));
    return;
  }
  const bool persistent = virDomainIsPersistent(m_domain) == 1;
  if (persistent != m_persistent) {
    fire(persistent ? QStringLiteral("the domain was redefined (made persistent)")
                    : QStringLiteral("the domain was undefined"));
    return;
  }
  if (configDigest() != m_config)
    fire(QStringLiteral("the domain was redefined (its configuration changed)"));
}

QByteArray DomainWatcher::configDigest() const {
  // A transient domain's "inactive" XML is its live XML, which changes at run time
  // (balloon, hotplug); only a persistent configuration is compared.
  if (virDomainIsPersistent(m_domain) != 1)
    return {};
  char* xml = virDomainGetXMLDesc(m_domain, VIR_DOMAIN_XML_INACTIVE);
  if (!xml)
    return QByteArrayLiteral("unreadable");
  const QByteArray digest =
      QCryptographicHash::hash(QByteArrayView(xml, qsizetype(std::strlen(xml))), QCryptographicHash::Sha256);
  std::free(xml);
  return digest;
}

void DomainWatcher::fire(const QString& reason) {
  if (m_fired)
    return;
  m_fired = true;
  m_pollTimer.stop();
  unsubscribe();
  qCInfo(lcVm).noquote() << "domain" << m_uuid << "gone:" << reason;
  emit domainGone(Refusal::VmGone, reason);
}

void DomainWatcher::unsubscribe() {
  if (m_lifecycleCallback >= 0) {
    virConnectDomainEventDeregisterAny(m_conn, m_lifecycleCallback);
    m_lifecycleCallback = -1;
  }
  if (m_closeCallback) {
    virConnectUnregisterCloseCallback(m_conn, onConnectionClosed);
    m_closeCallback = false;
  }
}

} // namespace gc
