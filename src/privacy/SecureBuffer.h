// SecureBuffer: a fixed-capacity byte buffer for secrets (passwords, capabilities) held in
// locked, dump-excluded memory and wiped when cleared or destroyed.
//
// Why its own mapping: a private anonymous mmap can be mlock'ed (never swapped) and
// madvise(MADV_DONTDUMP)'ed (never in a core dump) without affecting neighbouring heap
// data, and it never moves: the buffer refuses to grow rather than reallocate and leave a
// stale copy behind.
//
// Thread affinity: none; a SecureBuffer is a value owned by one thread at a time.
#pragma once

#include "common/Outcome.h"

#include <QByteArrayView>

#include <cstddef>

namespace gc {

class SecureBuffer {
public:
  // An empty buffer of capacity 0 (holds no mapping).
  SecureBuffer() = default;
  ~SecureBuffer();

  SecureBuffer(const SecureBuffer&) = delete;
  SecureBuffer& operator=(const SecureBuffer&) = delete;
  SecureBuffer(SecureBuffer&& other) noexcept;
  SecureBuffer& operator=(SecureBuffer&& other) noexcept;

  // Maps, locks and dump-excludes `capacity` bytes. PRIVACY_VIOLATION when the memory
  // cannot be locked or excluded from core dumps (we refuse rather than degrade).
  static Outcome<SecureBuffer> allocate(std::size_t capacity);
  // allocate(bytes.size()) + append(bytes): for tests and for copying a secret that
  // arrives in another locked buffer. The caller still owns (and wipes) `bytes`.
  static Outcome<SecureBuffer> copyOf(QByteArrayView bytes);

  std::size_t capacity() const { return m_capacity; }
  std::size_t size() const { return m_size; }
  bool isEmpty() const { return m_size == 0; }
  const char* constData() const { return m_data; }
  char* data() { return m_data; }
  QByteArrayView view() const { return QByteArrayView(m_data, qsizetype(m_size)); }

  // Appends; false (and nothing appended) when it would exceed capacity().
  [[nodiscard]] bool append(QByteArrayView bytes);
  [[nodiscard]] bool append(char byte) { return append(QByteArrayView(&byte, 1)); }
  // Sets the size explicitly after writing into data() (e.g. a read() into the buffer).
  [[nodiscard]] bool resize(std::size_t size);

  // Wipes every byte of the capacity (secureZero: not optimised away) and empties it.
  // The mapping stays so the buffer can be refilled.
  void clear();

  // Introspection for tests: whether the kernel reports the mapping as locked ("lo")
  // and dump-excluded ("dd") in /proc/self/smaps.
  bool isLockedAndUndumpable() const;

  // Test hook: called with the mapping's bytes just before it is unmapped, so a test can
  // observe that destruction wiped them. nullptr to remove.
  using UnmapHook = void (*)(const char* bytes, std::size_t length);
  static void setUnmapHookForTesting(UnmapHook hook);

private:
  void release() noexcept;

  char* m_data = nullptr;
  std::size_t m_capacity = 0;
  std::size_t m_mappedLength = 0;
  std::size_t m_size = 0;
};

} // namespace gc
