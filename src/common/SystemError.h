// errnoText: the one way a system call's failure becomes words (strerror in the locale's
// encoding), for messages and logs.
//
// Thread: any (strerror's buffer is per thread in glibc).
#pragma once

#include <QString>

#include <cerrno>
#include <cstring>

namespace gc {

inline QString errnoText(int error = errno) {
  return QString::fromLocal8Bit(std::strerror(error));
}

} // namespace gc
