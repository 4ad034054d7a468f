// Watches the bound domain while the console is open and says, once, when it is gone:
// stopped, shut down, crashed, paused or suspended, undefined or (re)defined, or the libvirt
// connection closed. Two sources, whichever comes first: libvirt's lifecycle events (needs a
// running LibvirtEventLoop) and a low-rate poll of the domain's state, persistence and saved
// configuration, so a missed event cannot leave the console open.
//
// Thread: lives on the thread that creates it (the main thread; needs its Qt event loop).
// libvirt callbacks run on the event-loop thread and only post to this object (queued);
// domainGone is always emitted on the watcher's thread.
// The watcher holds its own reference to the connection, so the LibvirtConnection wrapper
// may be destroyed first.
#pragma once

#include "common/Outcome.h"
#include "common/Refusal.h"

#include <QByteArray>
#include <QObject>
#include <QString>
#include <QTimer>

#include <chrono>
#include <memory>

struct _virConnect;
struct _virDomain;

namespace gc {

class LibvirtConnection;
class DomainWatcherRelay;

class DomainWatcher : public QObject {
  Q_OBJECT
public:
  enum class Sources {
    EventsAndPoll, // the product
    PollOnly,      // tests: proves the backstop alone closes the console
  };

  DomainWatcher(const LibvirtConnection& connection, const QString& uuid, QObject* parent = nullptr);
  ~DomainWatcher() override;

  // Subscribes and starts polling; the first poll runs at once (queued), so a domain that
  // stopped between binding and watching is reported too. Failure: VM_NOT_FOUND if the
  // domain does not exist, LIBVIRT_UNAVAILABLE if events cannot be subscribed.
  Status start(std::chrono::milliseconds pollInterval = std::chrono::seconds(1),
               Sources sources = Sources::EventsAndPoll);
  bool hasFired() const { return m_fired; }
  // One poll now, outside the schedule (may emit domainGone before it returns).
  void checkNow() { poll(); }

signals:
  // Emitted at most once per watcher; code is Refusal::VmGone.
  void domainGone(gc::Refusal code, const QString& reason);

private:
  friend class DomainWatcherRelay;

  void poll();
  void fire(const QString& reason);
  void unsubscribe();
  // SHA-256 of the persistent configuration; empty for a transient domain.
  QByteArray configDigest() const;

  _virConnect* m_conn = nullptr;
  _virDomain* m_domain = nullptr;
  QString m_uuid;
  // Shared with the lifecycle registration; the close callback borrows it until unsubscribe().
  std::shared_ptr<DomainWatcherRelay> m_relay;
  int m_lifecycleCallback = -1;
  bool m_closeCallback = false;
  bool m_persistent = false;
  QByteArray m_config;
  QTimer m_pollTimer;
  bool m_fired = false;
};

} // namespace gc
