#include "vm/ListenerScanner.h"

#include <QFile>

#include <cstring>

namespace gc {

namespace {

// /proc/net files report a size of 0, so read until EOF with a bound.
constexpr qint64 kMaxProcBytes = 64 * 1024 * 1024;

bool hexValue(QByteArrayView text, quint64* out) {
  if (text.isEmpty() || text.size() > 16)
    return false;
  quint64 value = 0;
  for (char c : text) {
    int digit;
    if (c >= '0' && c <= '9')
      digit = c - '0';
    else if (c >= 'a' && c <= 'f')
      digit = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      digit = c - 'A' + 10;
    else
      return false;
    value = (value << 4) | quint64(digit);
  }
  *out = value;
  return true;
}

// The kernel prints each 32-bit word of the address with %08X of its in-memory (network
// order) bytes read as a host-order integer; copying the host-order value back yields the
// network-order bytes.
bool parseAddress(QByteArrayView hex, QByteArray* address) {
  if (hex.size() != 8 && hex.size() != 32)
    return false;
  QByteArray bytes;
  for (qsizetype i = 0; i < hex.size(); i += 8) {
    quint64 word = 0;
    if (!hexValue(hex.sliced(i, 8), &word))
      return false;
    const quint32 host = quint32(word);
    char raw[4];
    std::memcpy(raw, &host, sizeof raw);
    bytes.append(raw, sizeof raw);
  }
  *address = bytes;
  return true;
}

QByteArray readProc(const QString& path, bool* ok) {
  *ok = false;
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly | QIODevice::Unbuffered))
    return {};
  // In chunks: QIODevice::read(max) on a file of unknown size reserves `max` up front (a
  // 64 MB allocation that also raised glibc's mmap threshold for the rest of the process).
  QByteArray data;
  char chunk[16 * 1024];
  for (;;) {
    const qint64 n = file.read(chunk, sizeof chunk);
    if (n < 0)
      return {};
    if (n == 0)
      break;
    if (data.size() + n > kMaxProcBytes)
      return {}; // never parse a truncated table: a listener could be missed
    data.append(chunk, n);
  }
  *ok = true;
  return data;
}

} // namespace

bool ListenerScanner::Listener::isLoopback() const {
  const auto* b = reinterpret_cast<const unsigned char*>(address.constData());
  if (address.size() == 4)
    return b[0] == 127;
  if (address.size() != 16)
    return false;
  static const unsigned char loop6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  if (std::memcmp(b, loop6, 16) == 0)
    return true;
  static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(b, mapped, 12) == 0 && b[12] == 127;
}

QString ListenerScanner::Listener::addressText() const {
  const auto* b = reinterpret_cast<const unsigned char*>(address.constData());
  if (address.size() == 4)
    return QStringLiteral("%1.%2.%3.%4").arg(b[0]).arg(b[1]).arg(b[2]).arg(b[3]);
  if (address.size() != 16)
    return QStringLiteral("?");
  QStringList groups;
  for (int i = 0; i < 16; i += 2)
    groups.append(QString::number((b[i] << 8) | b[i + 1], 16));
  return groups.join(QLatin1Char(':'));
}

QList<ListenerScanner::Listener> ListenerScanner::parse(const QByteArray& procNetText) {
  QList<Listener> result;
  for (const QByteArray& line : procNetText.split('\n')) {
    const QList<QByteArray> fields = line.simplified().split(' ');
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
    if (fields.size() < 4 || !fields.at(0).endsWith(':'))
      continue;
    if (fields.at(3).compare("0A", Qt::CaseInsensitive) != 0)
      continue;
    const QByteArray& local = fields.at(1);
    const qsizetype colon = local.indexOf(':');
    if (colon < 0)
      continue;
    Listener listener;
    quint64 port = 0;
    if (!parseAddress(QByteArrayView(local).first(colon), &listener.address) ||
        !hexValue(QByteArrayView(local).sliced(colon + 1), &port) || port > 65535)
      continue;
    listener.port = quint16(port);
    if (fields.size() > 9) {
      bool ok = false;
      listener.inode = fields.at(9).toULongLong(&ok);
      if (!ok)
        listener.inode = 0;
    }
    result.append(listener);
  }
  return result;
}

Outcome<QList<ListenerScanner::Listener>> ListenerScanner::listeners() {
  bool ok4 = false;
  bool ok6 = false;
  const QByteArray tcp = readProc(QStringLiteral("/proc/net/tcp"), &ok4);
  const QByteArray tcp6 = readProc(QStringLiteral("/proc/net/tcp6"), &ok6);
  if (!ok4)
    return Failure{Refusal::Internal, QStringLiteral("/proc/net/tcp cannot be read")};
  QList<Listener> all = parse(tcp);
  if (ok6)
    all.append(parse(tcp6));
  return all;
}

Outcome<QList<ListenerScanner::Listener>> ListenerScanner::listenersOn(quint16 port) {
  auto all = listeners();
  if (!all)
    return all.failure();
  QList<Listener> on;
  for (const Listener& listener : all.value())
    if (listener.port == port)
      on.append(listener);
  return on;
}

bool ListenerScanner::hasPublicListener(quint16 port) {
  const auto on = listenersOn(port);
  if (!on)
    return true;
  for (const Listener& listener : on.value())
    if (!listener.isLoopback())
      return true;
  return false;
}

} // namespace gc
