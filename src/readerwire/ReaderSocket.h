// ReaderSocket: one end of the socketpair between the console and its RDP reader process
// (SOCK_SEQPACKET: datagrams that keep their boundaries, in order, never merged or split),
// with at most one descriptor passed beside a datagram (SCM_RIGHTS). ReaderWire says what
// the datagrams mean.
//
// Thread: one thread at a time per end.
#pragma once

#include "common/Outcome.h"

#include <QByteArray>
#include <QByteArrayView>

#include <array>
#include <span>

namespace gc {

class ReaderSocket {
public:
  // A connected pair, both ends close-on-exec (the spawn maps the reader's end to fd 3).
  struct Pair {
    int console = -1;
    int reader = -1;
  };
  static Outcome<Pair> pair();

  // Sends one datagram (blocking), with `passFd` beside it when >= 0 (not closed here).
  static Status send(int socket, QByteArrayView datagram, int passFd = -1);
  // Sends each datagram in order (blocking) with as few system calls as the kernel allows
  // (sendmmsg): a run of inputs or their answers costs one call, not one each.
  static Status sendAll(int socket, std::span<const QByteArray> datagrams);

  enum class Received { Datagram, WouldBlock, Closed, Failed };
  // Receives one datagram into `buffer` (at most its capacity: ReaderWire::kMaxMessage; a
  // longer one is Failed). A descriptor that came with it lands in `passedFd` (close-on-exec),
  // else -1; more than one descriptor is Failed (and they are closed). Non-blocking with
  // `dontWait`.
  struct Buffer {
    std::array<char, 64 * 1024> bytes;
    qsizetype size = 0;
    QByteArrayView view() const { return QByteArrayView(bytes.data(), size); }
    void wipe(); // zeroes what the last datagram used (it may have carried credentials)
  };
  static Received receive(int socket, Buffer& buffer, int& passedFd, bool dontWait);
};

} // namespace gc
