// SharedDesktop: the memory the guest's desktop lives in, shared between the console and its
// RDP reader process: one sealed memfd of a fixed size, created by the console, mapped by
// both. The reader writes the surface of record into it (rdp/DesktopSurface.h); the console
// reads it only while it holds a lease (ReaderWire Lease/Leased/Return), so neither ever sees
// a half-written frame. Sealed against growing and shrinking before the reader gets it: a
// reader cannot truncate it under the console's mapping (which would fault on access).
// Excluded from core dumps (MADV_DONTDUMP); zeroed by the console before it is unmapped.
//
// Thread: the console's main thread (create, wipe) and whoever reads under a lease.
#pragma once

#include "common/Outcome.h"

#include <QtGlobal>

#include <span>

namespace gc {

class SharedDesktop {
public:
  SharedDesktop() = default;
  ~SharedDesktop(); // zeroes and unmaps
  SharedDesktop(SharedDesktop&& other) noexcept;
  SharedDesktop& operator=(SharedDesktop&& other) noexcept;
  SharedDesktop(const SharedDesktop&) = delete;
  SharedDesktop& operator=(const SharedDesktop&) = delete;

  // The console's side: a new memfd of `bytes`, sealed, mapped read-write (for the wipe).
  static Outcome<SharedDesktop> create(qsizetype bytes);
  // The reader's side: maps an inherited memfd (its size from fstat; it must carry the seals).
  static Outcome<SharedDesktop> adopt(int fd);

  bool isValid() const { return m_bytes != nullptr; }
  int fd() const { return m_fd; }
  qsizetype size() const { return m_size; }
  std::span<uchar> bytes() { return {m_bytes, std::size_t(m_size)}; }
  const uchar* constBytes() const { return m_bytes; }

  // Zeroes every byte (guest pixels) and reports how many.
  qsizetype wipe();
  // Closes the descriptor (the mapping stays): the console after the reader has it.
  void closeDescriptor();

private:
  void release() noexcept;

  int m_fd = -1;
  uchar* m_bytes = nullptr;
  qsizetype m_size = 0;
};

} // namespace gc
