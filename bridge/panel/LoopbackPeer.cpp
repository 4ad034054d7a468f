#include "bridge/panel/LoopbackPeer.h"

#include <QFile>

#include <cstring>

namespace gc {

namespace {

// /proc/net/tcp writes an IPv4 end as the address's four bytes in memory order, printed as
// one native-endian 32-bit hex number, then ":" and the port in hex (net/ipv4/tcp_ipv4.c).
QByteArray procEndpoint(const QHostAddress& address, quint16 port) {
  const quint32 a = address.toIPv4Address(); // host order: 127.0.0.1 == 0x7F000001
  const quint8 bytes[4] = {quint8(a >> 24), quint8(a >> 16), quint8(a >> 8), quint8(a)};
  quint32 inMemory = 0;
  static_assert(sizeof inMemory == sizeof bytes);
  std::memcpy(&inMemory, bytes, sizeof bytes);
  return QByteArray::number(inMemory, 16).toUpper().rightJustified(8, '0') + ':' +
         QByteArray::number(port, 16).toUpper().rightJustified(4, '0');
}

} // namespace

std::optional<uid_t> LoopbackPeer::uidIn(QByteArrayView procNetTcp, const QHostAddress& peer,
                                         quint16 peerPort, const QHostAddress& local, quint16 localPort) {
  bool v4 = false;
  peer.toIPv4Address(&v4);
  bool localV4 = false;
  local.toIPv4Address(&localV4);
  if (!v4 || !localV4)
    return std::nullopt;
  const QByteArray ours = procEndpoint(peer, peerPort);
  const QByteArray theirs = procEndpoint(local, localPort);
  // "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid ..."
  for (const QByteArray& line : QByteArray(procNetTcp.data(), procNetTcp.size()).split('\n')) {
    const QList<QByteArray> f = line.simplified().split(' ');
    if (f.size() < 8 || f.at(1) != ours || f.at(2) != theirs)
      continue;
    bool ok = false;
    const uint uid = f.at(7).toUInt(&ok);
    if (ok)
      return uid_t(uid);
  }
  return std::nullopt;
}

std::optional<uid_t> LoopbackPeer::uidOf(const QHostAddress& peer, quint16 peerPort,
                                         const QHostAddress& local, quint16 localPort) {
  QFile file(QStringLiteral("/proc/net/tcp"));
  if (!file.open(QIODevice::ReadOnly))
    return std::nullopt;
  return uidIn(file.readAll(), peer, peerPort, local, localPort);
}

} // namespace gc
