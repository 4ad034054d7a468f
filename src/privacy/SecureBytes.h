// QByteArray growth and truncation that leave no stale copy of the bytes behind, built on
// secureZero. Used wherever frame encodings or secrets travel as QByteArray (the frame
// pipeline, the MCP relay, the reader wire).
//
// Thread: any (each call works on the caller's buffer).
#pragma once

#include "privacy/SecureZero.h"

#include <QByteArray>

#include <algorithm>
#include <cstddef>

namespace gc {

// Zeroes every byte of the block `bytes` owns (also the free space before and after the data:
// it may hold removed or truncated bytes) and empties it. Returns the bytes zeroed: 0 when the
// block is shared with another QByteArray (wiping would corrupt that holder's copy; the last
// holder must wipe it) or is not ours (fromRawData).
inline qsizetype secureWipe(QByteArray& bytes) {
  if (bytes.isNull() || !bytes.isDetached() || bytes.capacity() == 0) {
    bytes = QByteArray();
    return 0;
  }
  auto& d = bytes.data_ptr();
  const qsizetype front = d.freeSpaceAtBegin();
  const qsizetype zeroed = front + bytes.size() + d.freeSpaceAtEnd();
  secureZero(bytes.data() - front, std::size_t(zeroed));
  bytes = QByteArray();
  return zeroed;
}

// QByteArray::append grows by realloc, which frees the old block without zeroing it. This
// grows by allocate + copy + wipe instead, doubling so appends stay amortised O(1).
inline void appendWiping(QByteArray& out, const char* data, qsizetype size) {
  if (size > out.data_ptr().freeSpaceAtEnd() && out.capacity() > 0 && out.isDetached()) {
    QByteArray grown;
    grown.reserve(std::max(out.capacity() * 2, out.size() + size));
    grown.append(QByteArrayView(out));
    secureWipe(out);
    out = std::move(grown);
  }
  out.append(data, size);
}

// Shortens `bytes` to `size`, zeroing the bytes cut off (truncate() leaves them in the block).
inline void truncateWiping(QByteArray& bytes, qsizetype size) {
  if (size < bytes.size() && bytes.isDetached()) {
    secureZero(bytes.data() + size, std::size_t(bytes.size() - size));
  }
  bytes.truncate(size);
}

} // namespace gc
