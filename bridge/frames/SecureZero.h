// Zeroing that the optimiser may not drop (a plain memset before free is dead-store
// eliminated). Used by wipe(): frame pixels must not outlive the session in our buffers.
#pragma once

#include <cstddef>
#include <string.h>

namespace gc {

inline void secureZero(void* data, std::size_t size) {
  if (data != nullptr && size > 0) {
    explicit_bzero(data, size);
  }
}

} // namespace gc
