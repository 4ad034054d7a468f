// secureZero: the one zeroing function. A store the optimiser may not drop (a plain memset
// before free is dead-store eliminated), for every buffer that held guest pixels, their
// encodings, input or secrets, in both processes. Standard library only, so the codecs (which
// use no Qt) call the same one. QByteArray helpers: privacy/SecureBytes.h; images:
// privacy/SecureImage.h.
//
// Thread: any (each call works on the caller's buffer).
#pragma once

#include <cstddef>
#include <string.h>

namespace gc {

inline void secureZero(void* data, std::size_t size) {
  if (data != nullptr && size > 0)
    explicit_bzero(data, size);
}

} // namespace gc
