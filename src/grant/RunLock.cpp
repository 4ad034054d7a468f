#include "grant/RunLock.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>

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

QString lastError() {
  return QString::fromLocal8Bit(std::strerror(errno));
}

// "<dir>" must be a real directory of ours that nobody else can write (lstat: a symlink is
// refused, so the lock cannot be redirected into someone else's tree).
// Missing parents (e.g. ~/.local/state on a fresh account) are created 0700 too.
Status ensurePrivateDir(const QString& dir) {
  const QByteArray native = QFile::encodeName(dir);
  for (qsizetype slash = native.indexOf('/', 1); slash > 0; slash = native.indexOf('/', slash + 1))
    if (::mkdir(native.left(slash).constData(), 0700) != 0 && errno != EEXIST)
      return lockFailure(QStringLiteral("cannot create %1: %2").arg(dir, lastError()));
  if (::mkdir(native.constData(), 0700) != 0 && errno != EEXIST)
    return lockFailure(QStringLiteral("cannot create %1: %2").arg(dir, lastError()));
  struct stat st {};
  if (::lstat(native.constData(), &st) != 0 || !S_ISDIR(st.st_mode))
    return lockFailure(QStringLiteral("%1 is not a directory").arg(dir));
  if (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
    return lockFailure(QStringLiteral("%1 is not ours or is writable by others").arg(dir));
  return success();
}

} // namespace

QString RunLock::lockPath(const QString& ledgerDir, const QString& runId) {
  const QByteArray hash = QCryptographicHash::hash(runId.toUtf8(), QCryptographicHash::Sha256).toHex();
  return QDir(ledgerDir).filePath(QStringLiteral("live/%1.lock").arg(QString::fromLatin1(hash)));
}

Outcome<RunLock> RunLock::acquire(const QString& ledgerDir, const QString& runId) {
  if (!QDir::isAbsolutePath(ledgerDir))
    return lockFailure(QStringLiteral("no ledger directory (the user has no home in passwd)"));
  if (Status parent = ensurePrivateDir(QDir::cleanPath(ledgerDir)); !parent.ok())
    return parent.failure();
  if (Status live = ensurePrivateDir(QDir(ledgerDir).filePath(QStringLiteral("live"))); !live.ok())
    return live.failure();
  const QString path = lockPath(ledgerDir, runId);
  const int fd =
      ::open(QFile::encodeName(path).constData(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
  if (fd < 0)
    return lockFailure(errno == ELOOP ? QStringLiteral("the run lock is a symlink; refusing it")
                                      : QStringLiteral("cannot open the run lock: %1").arg(lastError()));
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
    return lockFailure(QStringLiteral("cannot lock the run: %1").arg(lastError()));
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
