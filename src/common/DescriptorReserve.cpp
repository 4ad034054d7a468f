#include "common/DescriptorReserve.h"

#include "common/SystemError.h"

#include <QList>

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

namespace gc {

namespace {

QList<int>& reserve() {
  static QList<int> fds;
  return fds;
}

} // namespace

void DescriptorReserve::hold() {
  replenish();
}

void DescriptorReserve::replenish() {
  QList<int>& fds = reserve();
  while (fds.size() < kReserved) {
    const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return; // at the limit still: try again later
    fds.append(fd);
  }
}

bool DescriptorReserve::release() {
  QList<int>& fds = reserve();
  if (fds.isEmpty())
    return false;
  ::close(fds.takeLast());
  return true;
}

int DescriptorReserve::held() {
  return int(reserve().size());
}

Outcome<long> DescriptorReserve::freeDescriptors() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0)
    return Failure{Refusal::ResourceExhausted, QStringLiteral("getrlimit: %1").arg(errnoText())};
  DIR* dir = ::opendir("/proc/self/fd");
  if (!dir)
    return Failure{Refusal::ResourceExhausted,
                   QStringLiteral("cannot count open descriptors: %1").arg(errnoText())};
  long open = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.')
      ++open;
  }
  ::closedir(dir);
  --open; // the directory's own descriptor
  if (limit.rlim_cur == RLIM_INFINITY)
    return long(1) << 30;
  return long(limit.rlim_cur) - open;
}

Status DescriptorReserve::ensureFree(long needed) {
  const Outcome<long> free = freeDescriptors();
  if (!free.ok())
    return free.failure();
  if (*free < needed)
    return Status(
        Refusal::ResourceExhausted,
        QStringLiteral("%1 descriptors free under RLIMIT_NOFILE, a run needs %2").arg(*free).arg(needed));
  return success();
}

} // namespace gc
