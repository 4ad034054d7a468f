// secureZero: zeroes memory that held guest pixels in a way the compiler may not drop as a
// dead store (the buffer is usually freed right after).
//
// Thread: any.
#pragma once

#include <cstddef>
#include <cstring>

namespace gc::codec {

inline void secureZero(void* p, size_t n) {
  if (p == nullptr || n == 0)
    return;
  // Calling memset through a volatile pointer: the call cannot be proven to have no effect.
  static void* (*const volatile zero)(void*, int, size_t) = std::memset;
  zero(p, 0, n);
}

} // namespace gc::codec
