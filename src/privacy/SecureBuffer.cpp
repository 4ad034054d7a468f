#include "privacy/SecureBuffer.h"

#include "privacy/SecureZero.h"

#include <QFile>

#include <atomic>
#include <cstring>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <utility>

namespace gc {

namespace {

std::atomic<SecureBuffer::UnmapHook> s_unmapHook{nullptr};

std::size_t pageRounded(std::size_t n) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return ((n + page - 1) / page) * page;
}

} // namespace

SecureBuffer::~SecureBuffer() {
  release();
}

SecureBuffer::SecureBuffer(SecureBuffer&& other) noexcept
    : m_data(std::exchange(other.m_data, nullptr)), m_capacity(std::exchange(other.m_capacity, 0)),
      m_mappedLength(std::exchange(other.m_mappedLength, 0)), m_size(std::exchange(other.m_size, 0)) {}

SecureBuffer& SecureBuffer::operator=(SecureBuffer&& other) noexcept {
  if (this != &other) {
    release();
    m_data = std::exchange(other.m_data, nullptr);
    m_capacity = std::exchange(other.m_capacity, 0);
    m_mappedLength = std::exchange(other.m_mappedLength, 0);
    m_size = std::exchange(other.m_size, 0);
  }
  return *this;
}

Outcome<SecureBuffer> SecureBuffer::allocate(std::size_t capacity) {
  SecureBuffer buffer;
  if (capacity == 0)
    return buffer;
  const std::size_t length = pageRounded(capacity);
  void* p = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return Failure{Refusal::PrivacyViolation, QStringLiteral("cannot map secure memory")};
  buffer.m_data = static_cast<char*>(p);
  buffer.m_mappedLength = length;
  buffer.m_capacity = capacity;
  // The raw syscall, not mlock(3): ASan intercepts mlock() as a silent no-op, and the
  // sanitizer build must lock for real too.
  if (syscall(SYS_mlock, p, length) != 0)
    return Failure{Refusal::PrivacyViolation, QStringLiteral("cannot lock secure memory (RLIMIT_MEMLOCK?)")};
  if (madvise(p, length, MADV_DONTDUMP) != 0)
    return Failure{Refusal::PrivacyViolation, QStringLiteral("cannot exclude secure memory from core dumps")};
  return buffer;
}

Outcome<SecureBuffer> SecureBuffer::copyOf(QByteArrayView bytes) {
  auto buffer = allocate(std::size_t(bytes.size()));
  if (buffer.ok() && !buffer.value().append(bytes))
    return Failure{Refusal::Internal, QStringLiteral("secure buffer copy failed")};
  return buffer;
}

bool SecureBuffer::append(QByteArrayView bytes) {
  const auto n = std::size_t(bytes.size());
  if (n > m_capacity - m_size)
    return false;
  if (n > 0)
    std::memcpy(m_data + m_size, bytes.data(), n);
  m_size += n;
  return true;
}

bool SecureBuffer::resize(std::size_t size) {
  if (size > m_capacity)
    return false;
  if (size < m_size)
    secureZero(m_data + size, m_size - size);
  m_size = size;
  return true;
}

void SecureBuffer::clear() {
  if (m_data)
    secureZero(m_data, m_mappedLength);
  m_size = 0;
}

bool SecureBuffer::isLockedAndUndumpable() const {
  if (!m_data)
    return false;
  // /proc/self/smaps lists each mapping's range, then "VmFlags: rd wr ... lo dd".
  QFile smaps(QStringLiteral("/proc/self/smaps"));
  if (!smaps.open(QIODevice::ReadOnly))
    return false;
  const auto address = reinterpret_cast<quintptr>(m_data);
  bool inMapping = false;
  // Not atEnd(): /proc files report size 0, so QFile would claim to be at the end at once.
  for (QByteArray raw = smaps.readLine(); !raw.isEmpty(); raw = smaps.readLine()) {
    const QByteArray line = raw.trimmed();
    // A mapping header starts "start-end perms ..."; attribute lines start "Name:".
    const qsizetype dash = line.indexOf('-');
    const qsizetype space = line.indexOf(' ');
    if (dash > 0 && space > dash && !line.left(space).contains(':')) {
      bool okStart = false, okEnd = false;
      const quintptr start = line.left(dash).toULongLong(&okStart, 16);
      const quintptr end = line.mid(dash + 1, space - dash - 1).toULongLong(&okEnd, 16);
      inMapping = okStart && okEnd && address >= start && address < end;
    } else if (inMapping && line.startsWith("VmFlags:")) {
      const QList<QByteArray> flags = line.mid(8).simplified().split(' ');
      return flags.contains("lo") && flags.contains("dd");
    }
  }
  return false;
}

void SecureBuffer::setUnmapHookForTesting(UnmapHook hook) {
  s_unmapHook.store(hook);
}

void SecureBuffer::release() noexcept {
  if (!m_data)
    return;
  secureZero(m_data, m_mappedLength);
  if (auto hook = s_unmapHook.load())
    hook(m_data, m_mappedLength);
  // munmap also drops the lock.
  munmap(m_data, m_mappedLength);
  m_data = nullptr;
  m_capacity = m_mappedLength = m_size = 0;
}

} // namespace gc
