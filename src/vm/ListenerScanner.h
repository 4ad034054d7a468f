// Which addresses listen on a TCP port, from /proc/net/tcp and /proc/net/tcp6 (the calling
// process's network namespace). Used to refuse a grant's port that is also reachable beyond
// loopback. Thread-safe (no state).
#pragma once

#include "common/Outcome.h"

#include <QByteArray>
#include <QList>
#include <QString>

namespace gc {

class ListenerScanner {
public:
  struct Listener {
    QByteArray address; // 4 (IPv4) or 16 (IPv6) bytes, network order
    quint16 port = 0;
    quint64 inode = 0; // socket inode, matches /proc/PID/fd links "socket:[inode]"

    // 127.0.0.0/8, ::1 or ::ffff:127.0.0.0/104.
    bool isLoopback() const;
    QString addressText() const;
  };

  // Sockets in LISTEN state (0A) in the text of /proc/net/tcp or /proc/net/tcp6. Lines it
  // cannot read (header, truncation, odd spacing) are skipped.
  static QList<Listener> parse(const QByteArray& procNetText);
  // Every listening TCP socket; failure (INTERNAL) if /proc/net/tcp cannot be read.
  // A missing /proc/net/tcp6 (IPv6 disabled) is not an error.
  static Outcome<QList<Listener>> listeners();
  static Outcome<QList<Listener>> listenersOn(quint16 port);
  // True if anything listens on port on a non-loopback address (0.0.0.0, ::,
  // ::ffff:0.0.0.0, any address outside 127/8 and ::1). Fails closed: true when the
  // listener table cannot be read.
  static bool hasPublicListener(quint16 port);
};

} // namespace gc
