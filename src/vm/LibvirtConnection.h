// Owns one libvirt connection (virConnectPtr). Movable, not copyable; closing happens in the
// destructor. The handle type is only forward-declared so this header stays free of
// <libvirt/...>; code outside src/vm never touches the handle.
// Thread: a connection may be used from any thread (libvirt serializes per connection), but
// the wrapper itself is not synchronized: own it on one thread.
#pragma once

#include "common/Outcome.h"

#include <QString>

struct _virConnect; // libvirt's virConnect

namespace gc {

class LibvirtConnection {
public:
  // The product's connection. Failure: LIBVIRT_URI_FORBIDDEN (LibvirtUriRule, checked before
  // libvirt is called), LIBVIRT_UNAVAILABLE.
  static Outcome<LibvirtConnection> openReadOnly(const QString& uri);
  // Tests only (the test driver needs read-write to destroy/suspend/undefine domains).
  static Outcome<LibvirtConnection> openReadWrite(const QString& uri);

  // Once per process, before any other libvirt call: initializes libvirt and installs the
  // error handler that routes libvirt's reports to the gc.vm category instead of letting
  // libvirt print to stderr. Called by open*() and LibvirtEventLoop; idempotent, thread-safe.
  static void initializeLibrary();
  // The calling thread's last libvirt error message (for Failure texts).
  static QString lastError();

  LibvirtConnection(LibvirtConnection&& other) noexcept;
  LibvirtConnection& operator=(LibvirtConnection&& other) noexcept;
  LibvirtConnection(const LibvirtConnection&) = delete;
  LibvirtConnection& operator=(const LibvirtConnection&) = delete;
  ~LibvirtConnection();

  _virConnect* handle() const { return m_conn; }
  const QString& uri() const { return m_uri; }
  bool isReadOnly() const { return m_readOnly; }
  // False once libvirt reports the connection dead (e.g. libvirtd restarted).
  bool isAlive() const;

private:
  LibvirtConnection(_virConnect* conn, QString uri, bool readOnly);
  static Outcome<LibvirtConnection> open(const QString& uri, bool readOnly);
  void reset();

  _virConnect* m_conn = nullptr;
  QString m_uri;
  bool m_readOnly = true;
};

} // namespace gc
