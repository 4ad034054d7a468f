#include "bridge/panel/LoopbackPeer.h"

#include "common/SystemError.h"

#include <QElapsedTimer>

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace gc {

namespace {

Failure unknown(const QString& why) {
  return Failure{Refusal::PanelPeerUnknown, why};
}

// Writes an address into inet_diag's 4 x 32-bit words, in network order as the kernel keeps it.
bool putAddress(const QHostAddress& address, int family, __be32 out[4]) {
  std::memset(out, 0, 4 * sizeof(__be32));
  if (family == AF_INET) {
    bool ok = false;
    const quint32 v4 = address.toIPv4Address(&ok);
    if (!ok)
      return false;
    out[0] = htonl(v4);
    return true;
  }
  const Q_IPV6ADDR v6 = address.toIPv6Address();
  std::memcpy(out, v6.c, 16);
  return true;
}

class NetlinkSocket {
public:
  NetlinkSocket() : m_fd(::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)) {}
  ~NetlinkSocket() {
    if (m_fd >= 0)
      ::close(m_fd);
  }
  NetlinkSocket(const NetlinkSocket&) = delete;
  NetlinkSocket& operator=(const NetlinkSocket&) = delete;
  int get() const { return m_fd; }

private:
  int m_fd;
};

} // namespace

Outcome<uid_t> LoopbackPeer::uidOf(const QHostAddress& peer, quint16 peerPort, const QHostAddress& local,
                                   quint16 localPort, int timeoutMs) {
  // Both ends in one family: an IPv4 connection may show as v4-mapped IPv6 on a dual socket.
  bool peerV4 = false, localV4 = false;
  peer.toIPv4Address(&peerV4);
  local.toIPv4Address(&localV4);
  const int family = peerV4 && localV4 ? AF_INET : AF_INET6;
  if (family == AF_INET6 &&
      (peer.protocol() != QAbstractSocket::IPv6Protocol || local.protocol() != QAbstractSocket::IPv6Protocol))
    return unknown(QStringLiteral("not a TCP connection between two IP addresses"));

  struct {
    nlmsghdr header;
    inet_diag_req_v2 request;
  } query{};
  query.header.nlmsg_len = sizeof query;
  query.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  query.header.nlmsg_flags = NLM_F_REQUEST; // no NLM_F_DUMP: the one socket, looked up by its tuple
  query.header.nlmsg_seq = 1;
  query.request.sdiag_family = quint8(family);
  query.request.sdiag_protocol = IPPROTO_TCP;
  query.request.idiag_states = ~0u;
  // The socket asked about is the peer's: its source is our remote end.
  query.request.id.idiag_sport = htons(peerPort);
  query.request.id.idiag_dport = htons(localPort);
  if (!putAddress(peer, family, query.request.id.idiag_src) ||
      !putAddress(local, family, query.request.id.idiag_dst))
    return unknown(QStringLiteral("not a TCP connection between two IP addresses"));
  query.request.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
  query.request.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;

  const NetlinkSocket nl;
  if (nl.get() < 0)
    return unknown(QStringLiteral("sock_diag is not available: %1").arg(errnoText()));
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  ssize_t sent;
  do {
    sent = ::sendto(nl.get(), &query, sizeof query, 0, reinterpret_cast<const sockaddr*>(&kernel),
                    sizeof kernel);
  } while (sent < 0 && errno == EINTR);
  if (sent != ssize_t(sizeof query))
    return unknown(QStringLiteral("sock_diag query not sent: %1").arg(errnoText()));

  QElapsedTimer clock;
  clock.start();
  alignas(nlmsghdr) char buffer[8192];
  for (;;) {
    const int left = timeoutMs - int(clock.elapsed());
    if (left <= 0)
      return unknown(QStringLiteral("sock_diag gave no answer within %1 ms").arg(timeoutMs));
    pollfd p{nl.get(), POLLIN, 0};
    const int ready = ::poll(&p, 1, left);
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready < 0)
      return unknown(QStringLiteral("sock_diag poll: %1").arg(errnoText()));
    if (ready == 0)
      continue; // the deadline check above ends it
    const ssize_t n = ::recv(nl.get(), buffer, sizeof buffer, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (n < 0)
      return unknown(QStringLiteral("sock_diag receive: %1").arg(errnoText()));
    // Each message starts at a NLMSG_ALIGN'ed offset of the aligned buffer; its length is
    // checked against what was received before anything of it is read.
    const std::size_t received = std::size_t(n);
    for (std::size_t at = 0; received - at >= sizeof(nlmsghdr);) {
      auto* h = static_cast<nlmsghdr*>(static_cast<void*>(buffer + at));
      if (h->nlmsg_len < sizeof(nlmsghdr) || h->nlmsg_len > received - at)
        break;
      at += std::min<std::size_t>(NLMSG_ALIGN(h->nlmsg_len), received - at);
      if (h->nlmsg_seq != query.header.nlmsg_seq)
        continue;
      if (h->nlmsg_type == NLMSG_ERROR) {
        const auto* error = static_cast<const nlmsgerr*>(NLMSG_DATA(h));
        if (h->nlmsg_len < NLMSG_LENGTH(sizeof(nlmsgerr)))
          return unknown(QStringLiteral("sock_diag: truncated error"));
        if (error->error == -ENOENT)
          return unknown(QStringLiteral("the peer's socket is gone"));
        return unknown(
            QStringLiteral("the kernel refused the sock_diag query: %1").arg(errnoText(-error->error)));
      }
      if (h->nlmsg_type == NLMSG_DONE)
        return unknown(QStringLiteral("the peer's socket is gone"));
      if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || h->nlmsg_len < NLMSG_LENGTH(sizeof(inet_diag_msg)))
        continue;
      const auto* msg = static_cast<const inet_diag_msg*>(NLMSG_DATA(h));
      // The kernel answered for exactly the tuple asked about; check it anyway.
      if (msg->idiag_family != family || msg->id.idiag_sport != query.request.id.idiag_sport ||
          msg->id.idiag_dport != query.request.id.idiag_dport ||
          std::memcmp(msg->id.idiag_src, query.request.id.idiag_src, sizeof msg->id.idiag_src) != 0 ||
          std::memcmp(msg->id.idiag_dst, query.request.id.idiag_dst, sizeof msg->id.idiag_dst) != 0)
        return unknown(QStringLiteral("sock_diag answered for another socket"));
      // A TIME_WAIT (or request) socket has no owner any more: the kernel reports uid 0 for it,
      // which must not pass for root's connection.
      constexpr quint8 kNewSynRecv = 12; // TCP_NEW_SYN_RECV (include/net/tcp_states.h), not in libc's list
      if (msg->idiag_state == TCP_TIME_WAIT || msg->idiag_state == TCP_CLOSE ||
          msg->idiag_state == TCP_LISTEN || msg->idiag_state == kNewSynRecv)
        return unknown(
            QStringLiteral("the peer's socket is no longer a connection (state %1)").arg(msg->idiag_state));
      return uid_t(msg->idiag_uid);
    }
  }
}

} // namespace gc
