#include "grant/RunLock.h"

#include "common/SystemError.h"
#include "grant/StateDir.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace gc {

namespace {

Failure lockFailure(const QString& message) {
  return Failure{Refusal::GrantLedger, message};
}

} // namespace

QString RunLock::lockPath(const QString& ledgerDir, const QString& runId) {
  const QByteArray hash = QCryptographicHash::hash(runId.toUtf8(), QCryptographicHash::Sha256).toHex();
  return QDir(ledgerDir).filePath(QStringLiteral("live/%1.lock").arg(QString::fromLatin1(hash)));
}

Outcome<RunLock> RunLock::acquire(const QString& ledgerDir, const QString& runId) {
  if (!QDir::isAbsolutePath(ledgerDir))
    return lockFailure(QStringLiteral("no ledger directory (the user has no home in passwd)"));
  // The ledger's directory by the ledger's rules (every ancestor checked on the descriptor that
  // is then used), "live" below it private to us; the lock is opened relative to that descriptor.
  Outcome<int> parent = statedir::open(ledgerDir, true);
  if (!parent)
    return parent.failure();
  const statedir::Fd parentFd(*parent);
  const QByteArray livePath = QFile::encodeName(QDir(ledgerDir).filePath(QStringLiteral("live")));
  Outcome<int> live = statedir::openPrivateChild(parentFd.get(), QByteArrayLiteral("live"), livePath);
  if (!live)
    return live.failure();
  const statedir::Fd liveFd(*live);
  const QByteArray name = QFile::encodeName(QFileInfo(lockPath(ledgerDir, runId)).fileName());
  const int fd =
      ::openat(liveFd.get(), name.constData(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
  if (fd < 0)
    return lockFailure(errno == ELOOP ? QStringLiteral("the run lock is a symlink; refusing it")
                                      : QStringLiteral("cannot open the run lock: %1").arg(errnoText()));
  RunLock lock(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid())
    return lockFailure(QStringLiteral("the run lock is not a regular file of ours"));
  int rc;
  do {
    rc = ::flock(fd, LOCK_EX | LOCK_NB);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0 && errno == EWOULDBLOCK)
    return Failure{Refusal::RunAlreadyOpen,
                   QStringLiteral("a console for run %1 is already open").arg(runId.left(128))};
  if (rc != 0)
    return lockFailure(QStringLiteral("cannot lock the run: %1").arg(errnoText()));
  return lock;
}

RunLock::RunLock(RunLock&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}

RunLock& RunLock::operator=(RunLock&& other) noexcept {
  if (this != &other) {
    release();
    m_fd = std::exchange(other.m_fd, -1);
  }
  return *this;
}

RunLock::~RunLock() {
  release();
}

void RunLock::release() {
  if (m_fd >= 0)
    ::close(std::exchange(m_fd, -1)); // closing the only descriptor drops the flock
}

} // namespace gc
