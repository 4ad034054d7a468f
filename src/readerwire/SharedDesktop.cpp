#include "readerwire/SharedDesktop.h"

#include "common/SystemError.h"
#include "privacy/SecureZero.h"

#include <QString>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace gc {

namespace {

constexpr int kSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

uchar* mapShared(int fd, qsizetype size) {
  void* p = ::mmap(nullptr, std::size_t(size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    return nullptr;
  ::madvise(p, std::size_t(size), MADV_DONTDUMP);
  return static_cast<uchar*>(p);
}

} // namespace

SharedDesktop::~SharedDesktop() {
  release();
}

SharedDesktop::SharedDesktop(SharedDesktop&& other) noexcept
    : m_fd(std::exchange(other.m_fd, -1)), m_bytes(std::exchange(other.m_bytes, nullptr)),
      m_size(std::exchange(other.m_size, 0)) {}

SharedDesktop& SharedDesktop::operator=(SharedDesktop&& other) noexcept {
  if (this != &other) {
    release();
    m_fd = std::exchange(other.m_fd, -1);
    m_bytes = std::exchange(other.m_bytes, nullptr);
    m_size = std::exchange(other.m_size, 0);
  }
  return *this;
}

Outcome<SharedDesktop> SharedDesktop::create(qsizetype bytes) {
  if (bytes <= 0)
    return Failure{Refusal::Internal, QStringLiteral("an empty shared desktop")};
  SharedDesktop d;
  d.m_fd = ::memfd_create("gc-desktop", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (d.m_fd < 0)
    return Failure{errno == EMFILE || errno == ENFILE ? Refusal::ResourceExhausted : Refusal::Internal,
                   QStringLiteral("memfd_create: %1").arg(errnoText())};
  if (::ftruncate(d.m_fd, off_t(bytes)) != 0 || ::fcntl(d.m_fd, F_ADD_SEALS, kSeals) != 0)
    return Failure{Refusal::ResourceExhausted,
                   QStringLiteral("cannot size the shared desktop: %1").arg(errnoText())};
  d.m_bytes = mapShared(d.m_fd, bytes);
  if (!d.m_bytes)
    return Failure{Refusal::ResourceExhausted, QStringLiteral("cannot map the shared desktop")};
  d.m_size = bytes;
  return d;
}

Outcome<SharedDesktop> SharedDesktop::adopt(int fd) {
  SharedDesktop d;
  d.m_fd = fd;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size <= 0)
    return Failure{Refusal::Internal, QStringLiteral("no shared desktop on descriptor %1").arg(fd)};
  if ((::fcntl(fd, F_GET_SEALS) & kSeals) != kSeals)
    return Failure{Refusal::Internal, QStringLiteral("the shared desktop is not sealed")};
  d.m_bytes = mapShared(fd, qsizetype(st.st_size));
  if (!d.m_bytes)
    return Failure{Refusal::ResourceExhausted, QStringLiteral("cannot map the shared desktop")};
  d.m_size = qsizetype(st.st_size);
  return d;
}

qsizetype SharedDesktop::wipe() {
  if (!m_bytes)
    return 0;
  secureZero(m_bytes, std::size_t(m_size));
  return m_size;
}

void SharedDesktop::closeDescriptor() {
  if (m_fd >= 0)
    ::close(m_fd);
  m_fd = -1;
}

void SharedDesktop::release() noexcept {
  if (m_bytes) {
    secureZero(m_bytes, std::size_t(m_size));
    ::munmap(m_bytes, std::size_t(m_size));
  }
  closeDescriptor();
  m_bytes = nullptr;
  m_size = 0;
}

} // namespace gc
