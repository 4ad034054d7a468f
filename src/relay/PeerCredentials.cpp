#include "relay/PeerCredentials.h"

#include <sys/socket.h>

namespace gc {

std::optional<PeerCredentials::Peer> PeerCredentials::of(int fd) {
  struct ucred cred {};
  socklen_t length = sizeof(cred);
  if (fd < 0 || ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0 || length != sizeof(cred))
    return std::nullopt;
  return Peer{cred.pid, cred.uid, cred.gid};
}

} // namespace gc
