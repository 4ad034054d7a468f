#include "vm/LibvirtConnection.h"

#include "common/LibvirtUriRule.h"
#include "vm/VmLog.h"

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include <mutex>
#include <utility>

namespace gc {

namespace {

// libvirt calls this instead of printing the error to stderr itself. Expected failures
// (an unknown UUID, a refused lookup) arrive here too; the caller turns them into refusals.
void routeLibvirtError(void* /*userData*/, virErrorPtr error) {
  if (!error)
    return;
  qCWarning(lcVm).noquote() << "libvirt:"
                            << QString::fromUtf8(error->message ? error->message : "(no message)")
                            << QStringLiteral("(domain %1, code %2)").arg(error->domain).arg(error->code);
}

} // namespace

void LibvirtConnection::initializeLibrary() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (virInitialize() < 0)
      qCWarning(lcVm) << "virInitialize failed";
    virSetErrorFunc(nullptr, routeLibvirtError);
  });
}

QString LibvirtConnection::lastError() {
  const char* message = virGetLastErrorMessage();
  return QString::fromUtf8(message ? message : "unknown libvirt error");
}

LibvirtConnection::LibvirtConnection(_virConnect* conn, QString uri, bool readOnly)
    : m_conn(conn), m_uri(std::move(uri)), m_readOnly(readOnly) {}

LibvirtConnection::LibvirtConnection(LibvirtConnection&& other) noexcept
    : m_conn(std::exchange(other.m_conn, nullptr)), m_uri(std::move(other.m_uri)),
      m_readOnly(other.m_readOnly) {}

LibvirtConnection& LibvirtConnection::operator=(LibvirtConnection&& other) noexcept {
  if (this != &other) {
    reset();
    m_conn = std::exchange(other.m_conn, nullptr);
    m_uri = std::move(other.m_uri);
    m_readOnly = other.m_readOnly;
  }
  return *this;
}

LibvirtConnection::~LibvirtConnection() {
  reset();
}

void LibvirtConnection::reset() {
  if (m_conn) {
    virConnectClose(m_conn);
    m_conn = nullptr;
  }
}

bool LibvirtConnection::isAlive() const {
  return m_conn && virConnectIsAlive(m_conn) == 1;
}

Outcome<LibvirtConnection> LibvirtConnection::open(const QString& uri, bool readOnly) {
  initializeLibrary();
  if (uri.isEmpty())
    return Failure{Refusal::LibvirtUnavailable, QStringLiteral("no libvirt URI given")};
  // Defence in depth: the grant loader refuses these already, but nothing may hand libvirt a
  // transport (+ext runs a program, +ssh spawns ssh) or a remote host, whoever calls.
  if (Status local = LibvirtUriRule::check(uri); !local.ok())
    return local.failure();
  const QByteArray utf8 = uri.toUtf8();
  virConnectPtr conn = readOnly ? virConnectOpenReadOnly(utf8.constData()) : virConnectOpen(utf8.constData());
  if (!conn)
    return Failure{Refusal::LibvirtUnavailable,
                   QStringLiteral("cannot open libvirt connection to %1: %2").arg(uri, lastError())};
  return LibvirtConnection(conn, uri, readOnly);
}

Outcome<LibvirtConnection> LibvirtConnection::openReadOnly(const QString& uri) {
  return open(uri, true);
}

Outcome<LibvirtConnection> LibvirtConnection::openReadWrite(const QString& uri) {
  return open(uri, false);
}

} // namespace gc
