#include "rdp/AbortSocket.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace gc {

bool AbortSocket::adopt(int fd) {
  const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0)
    return false;
  m_everConnected = true;
  std::lock_guard guard(m_mutex);
  if (m_fd >= 0)
    ::close(m_fd); // FreeRDP connected again (never expected: no redirects)
  m_fd = copy;
  return true;
}

void AbortSocket::shutdown() {
  std::lock_guard guard(m_mutex);
  if (m_fd >= 0)
    ::shutdown(m_fd, SHUT_RDWR);
}

bool AbortSocket::shutWriting() {
  std::lock_guard guard(m_mutex);
  if (m_fd < 0)
    return false;
  m_writingShut = true; // before the FIN: no write of FreeRDP's can slip in after it
  ::shutdown(m_fd, SHUT_WR);
  return true;
}

void AbortSocket::holdSegments(bool hold) {
  std::lock_guard guard(m_mutex);
  const int on = hold ? 1 : 0;
  if (m_fd >= 0) // best effort: without the cork every write is sent as it comes
    ::setsockopt(m_fd, IPPROTO_TCP, TCP_CORK, &on, sizeof on);
}

void AbortSocket::close() {
  std::lock_guard guard(m_mutex);
  if (m_fd >= 0)
    ::close(m_fd);
  m_fd = -1;
}

} // namespace gc
