// Zeroing that the optimiser may not drop (a plain memset before free is dead-store
// eliminated), and QByteArray growth that leaves no stale copy behind. Used wherever frame
// pixels, their encodings or secrets are held (the console, the frame pipeline, the MCP
// relay): they must not outlive the session in our buffers. Images: privacy/SecureImage.h.
// (src/rdp/codec has its own std-only secureZero: that library uses no Qt.)
//
// Thread: any (each call works on the caller's buffer).
#pragma once

#include <QByteArray>

#include <algorithm>
#include <cstddef>
#include <string.h>

namespace gc {

inline void secureZero(void* data, std::size_t size) {
  if (data != nullptr && size > 0) {
    explicit_bzero(data, size);
  }
}

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
