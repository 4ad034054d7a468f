// AbortSocket: RdpSession's own duplicate of the socket FreeRDP connected, so that abort()
// and finishGracefully() can act on the connection from another thread. FreeRDP 3.10 waits
// for handshake data in 100 ms poll slices without looking at its abort event
// (transport_read_layer -> BIO_wait_read); shutdown() on the duplicate ends such a wait at
// once. Being a separate descriptor, it cannot be recycled under us when FreeRDP closes its
// own.
//
// Thread: adopt() on the RDP worker (FreeRDP's TCP connect), the rest on any thread; the
// descriptor is guarded by one leaf mutex (nothing else is locked while it is held).
#pragma once

#include <atomic>
#include <mutex>

namespace gc {

class AbortSocket {
public:
  AbortSocket() = default;
  AbortSocket(const AbortSocket&) = delete;
  AbortSocket& operator=(const AbortSocket&) = delete;
  ~AbortSocket() { close(); }

  // FreeRDP connected `fd`: keep a duplicate (close-on-exec). False when none could be had
  // (abort then falls back to FreeRDP's abort event).
  bool adopt(int fd);
  // Wakes FreeRDP out of any blocking read or write: both directions shut.
  void shutdown();
  // Shuts the writing side only (FIN after every byte already written); the guest's bytes can
  // still be read. False when there is no socket.
  bool shutWriting();
  // After the worker is gone: the duplicate is closed.
  void close();
  // TCP_CORK: while held, what is written waits in the kernel and leaves as full segments;
  // releasing sends what waits at once. For a run of small writes (inputs) that the other
  // end would otherwise wake up for one by one.
  void holdSegments(bool hold);

  // A socket was ever adopted (the connect trace).
  bool everConnected() const { return m_everConnected.load(); }
  // shutWriting() happened: nothing more may be written (FreeRDP's writes are dropped).
  bool writingShut() const { return m_writingShut.load(); }

private:
  std::mutex m_mutex; // a leaf
  int m_fd = -1;
  std::atomic<bool> m_everConnected{false};
  std::atomic<bool> m_writingShut{false};
};

} // namespace gc
