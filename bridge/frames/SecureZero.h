// Zeroing that the optimiser may not drop (a plain memset before free is dead-store
// eliminated), and QByteArray growth that leaves no stale copy behind. Used wherever frame
// pixels or their encodings are held: they must not outlive the session in our buffers.
#pragma once

#include <QByteArray>
#include <QImage>

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

// Drops `image`, zeroing its pixels first when this is the last reference (a frame the RDP
// session's pool has already let go of is freed by whoever holds it last). A shared image is
// only released: another holder still uses it. Returns the bytes zeroed.
inline qsizetype secureDrop(QImage& image) {
  qsizetype zeroed = 0;
  if (!image.isNull() && image.isDetached()) {
    zeroed = image.sizeInBytes();
    secureZero(image.bits(), std::size_t(zeroed));
  }
  image = QImage();
  return zeroed;
}

} // namespace gc
