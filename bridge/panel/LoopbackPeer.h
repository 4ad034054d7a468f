// LoopbackPeer: which local user owns the other end of a loopback TCP connection.
//
// Why: the panel port is on 127.0.0.1, which every local user can reach. The console cannot
// tell the genuine panel from a squatter before its hello, but it can tell whose process is
// connecting: the kernel lists every TCP socket of the network namespace in /proc/net/tcp
// with its owner's uid, so the peer's socket is the entry whose local end is our remote end
// (and whose remote end is our local end). PanelServer uses it to rank pending connections:
// one from another uid can never evict one from ours.
//
// Thread: stateless; any thread. Reads /proc/net/tcp once per call (IPv4 only: the panel
// listens on 127.0.0.1).
#pragma once

#include <QHostAddress>

#include <optional>
#include <sys/types.h>

namespace gc {

class LoopbackPeer {
public:
  // The uid owning the socket at `peer`:`peerPort` connected to `local`:`localPort`, or
  // nullopt when it is not listed (gone already, not IPv4, /proc unreadable).
  static std::optional<uid_t> uidOf(const QHostAddress& peer, quint16 peerPort, const QHostAddress& local,
                                    quint16 localPort);
  // The same, from one /proc/net/tcp text (for tests).
  static std::optional<uid_t> uidIn(QByteArrayView procNetTcp, const QHostAddress& peer, quint16 peerPort,
                                    const QHostAddress& local, quint16 localPort);
};

} // namespace gc
