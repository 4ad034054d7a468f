// gc::wire::decodeFromReader / decodeToReader: every datagram the RDP reader process sends the
// console (the reader parses the guest's bytes and may be compromised by them), and every one
// the console sends the reader. Only crashes and sanitizer findings count.
#include "readerwire/ReaderWire.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const QByteArrayView datagram(reinterpret_cast<const char*>(data), qsizetype(size));
  (void)gc::wire::decodeFromReader(datagram).ok();
  (void)gc::wire::decodeToReader(datagram).ok();
  return 0;
}
