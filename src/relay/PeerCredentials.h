// PeerCredentials: who is on the other end of a connected Unix socket (SO_PEERCRED, taken
// by the kernel at connect()/listen() time, so it cannot be spoofed by the peer). Both the
// console and the relay accept only a peer running as their own effective uid.
//
// Thread: stateless; call from any thread.
#pragma once

#include <QtGlobal>

#include <optional>
#include <sys/types.h>

namespace gc {

class PeerCredentials {
public:
  struct Peer {
    pid_t pid = 0;
    uid_t uid = 0;
    gid_t gid = 0;
  };
  // nullopt when fd is not a connected Unix socket.
  static std::optional<Peer> of(int fd);
};

} // namespace gc
