#include "readerwire/ReaderSocket.h"

#include "common/SystemError.h"
#include "privacy/SecureZero.h"

#include <QString>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

namespace gc {

Outcome<ReaderSocket::Pair> ReaderSocket::pair() {
  int fds[2] = {-1, -1};
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0)
    return Failure{errno == EMFILE || errno == ENFILE ? Refusal::ResourceExhausted : Refusal::Internal,
                   QStringLiteral("socketpair: %1").arg(errnoText())};
  return Pair{fds[0], fds[1]};
}

Status ReaderSocket::send(int socket, QByteArrayView datagram, int passFd) {
  iovec iov{const_cast<char*>(datagram.data()), std::size_t(datagram.size())};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (passFd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &passFd, sizeof(int));
  }
  ssize_t n = -1;
  do {
    n = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n != ssize_t(datagram.size()))
    return Status(Refusal::RdpReaderFailed,
                  QStringLiteral("cannot write to the RDP reader: %1").arg(errnoText()));
  return success();
}

Status ReaderSocket::sendAll(int socket, std::span<const QByteArray> datagrams) {
  constexpr std::size_t kPerCall = 64;
  std::array<iovec, kPerCall> iov{};
  std::array<mmsghdr, kPerCall> msgs{};
  std::size_t done = 0;
  while (done < datagrams.size()) {
    const std::size_t count = std::min(kPerCall, datagrams.size() - done);
    for (std::size_t i = 0; i < count; ++i) {
      const QByteArray& d = datagrams[done + i];
      iov[i] = iovec{const_cast<char*>(d.constData()), std::size_t(d.size())};
      msgs[i] = mmsghdr{};
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
    int n = -1;
    do {
      n = ::sendmmsg(socket, msgs.data(), unsigned(count), MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n <= 0)
      return Status(Refusal::RdpReaderFailed,
                    QStringLiteral("cannot write to the RDP reader: %1").arg(errnoText()));
    // A datagram is sent whole or not at all (SOCK_SEQPACKET); the rest goes in the next call.
    for (int i = 0; i < n; ++i)
      if (msgs[std::size_t(i)].msg_len != unsigned(datagrams[done + std::size_t(i)].size()))
        return Status(Refusal::RdpReaderFailed,
                      QStringLiteral("cannot write to the RDP reader: a short datagram"));
    done += std::size_t(n);
  }
  return success();
}

void ReaderSocket::Buffer::wipe() {
  secureZero(bytes.data(), std::size_t(size));
  size = 0;
}

ReaderSocket::Received ReaderSocket::receive(int socket, Buffer& buffer, int& passedFd, bool dontWait) {
  passedFd = -1;
  buffer.size = 0;
  iovec iov{buffer.bytes.data(), buffer.bytes.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n = -1;
  do {
    n = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC | (dontWait ? MSG_DONTWAIT : 0));
  } while (n < 0 && errno == EINTR);
  if (n < 0)
    return errno == EAGAIN || errno == EWOULDBLOCK ? Received::WouldBlock : Received::Failed;
  // Every descriptor that came is ours to close, whatever happens to the datagram.
  int fds = 0;
  bool extra = false;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
      continue;
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      if (fds++ == 0)
        passedFd = fd;
      else {
        ::close(fd);
        extra = true;
      }
    }
  }
  const auto failed = [&] {
    if (passedFd >= 0)
      ::close(passedFd);
    passedFd = -1;
    return Received::Failed;
  };
  if (extra || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
    return failed();
  if (n == 0)
    return passedFd >= 0 ? failed() : Received::Closed;
  buffer.size = qsizetype(n);
  return Received::Datagram;
}

} // namespace gc
