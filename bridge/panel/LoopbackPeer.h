// LoopbackPeer: which local user owns the other end of a loopback TCP connection.
//
// Why: the panel port is on 127.0.0.1, which every local user can reach. The console cannot
// tell the genuine panel from a squatter before its hello, but it can tell whose process is
// connecting: the peer's socket is the one whose local end is our remote end and whose
// remote end is our local end, and the kernel knows its owner. PanelServer uses it to rank
// pending connections: one from another uid can never evict one from ours.
//
// How: one sock_diag request (NETLINK_SOCK_DIAG, SOCK_DIAG_BY_FAMILY, no dump)
// names the exact 4-tuple and INET_DIAG_NOCOOKIE, so the kernel looks that one socket up in
// its hash table and answers with its uid. The cost does not depend on how many sockets
// other users keep (the old /proc/net/tcp scan read every one of them, TIME_WAIT included,
// on the main thread). The receive is bounded by a timeout. When the kernel refuses or does
// not answer, the caller refuses the connection (PANEL_PEER_UNKNOWN): there is no fallback
// to a table scan.
//
// Thread: stateless; any thread. One netlink socket per call, closed before it returns.
#pragma once

#include "common/Outcome.h"

#include <QHostAddress>

#include <sys/types.h>

namespace gc {

class LoopbackPeer {
public:
  // The uid owning the socket at `peer`:`peerPort` connected to `local`:`localPort` (IPv4
  // or IPv6), or PANEL_PEER_UNKNOWN: no such socket (gone already), the kernel refused the
  // query, or no answer within `timeoutMs`.
  static Outcome<uid_t> uidOf(const QHostAddress& peer, quint16 peerPort, const QHostAddress& local,
                              quint16 localPort, int timeoutMs = 250);
};

} // namespace gc
