#include "grant/StateDir.h"

#include "common/SystemError.h"

#include <QDir>
#include <QFile>
#include <QList>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gc::statedir {

namespace {

Failure stateFailure(const QString& message) {
  return Failure{Refusal::GrantLedger, message};
}

QByteArray anchorFor(const QByteArray& dir) {
  const struct passwd* user = ::getpwuid(::geteuid());
  if (user && user->pw_dir && user->pw_dir[0] == '/') {
    const QByteArray home = QFile::encodeName(QDir::cleanPath(QFile::decodeName(user->pw_dir)));
    if (home != "/" && (dir == home || dir.startsWith(home + '/')))
      return home;
  }
  return QByteArrayLiteral("/");
}

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// `name` in `parent`, made 0700 first if missing and `create`; -1 with errno as openat (or,
// with `mkdirFailed` set, mkdirat) left it.
int openChild(int parent, const QByteArray& name, bool create, bool& mkdirFailed) {
  mkdirFailed = false;
  int fd = ::openat(parent, name.constData(), kDirFlags);
  if (fd < 0 && errno == ENOENT && create) {
    if (::mkdirat(parent, name.constData(), 0700) != 0 && errno != EEXIST) {
      mkdirFailed = true;
      return -1;
    }
    fd = ::openat(parent, name.constData(), kDirFlags);
  }
  return fd;
}

Failure openFailure(const QByteArray& path) {
  if (errno == ELOOP || errno == ENOTDIR)
    return stateFailure(
        QStringLiteral("%1 is a link or not a directory; refusing it").arg(QFile::decodeName(path)));
  return stateFailure(QStringLiteral("cannot open %1: %2").arg(QFile::decodeName(path), errnoText()));
}

} // namespace

void Fd::reset(int fd) {
  if (m_fd >= 0)
    ::close(m_fd);
  m_fd = fd;
}

Status checkDirectory(int fd, const QByteArray& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return stateFailure(QStringLiteral("cannot stat %1: %2").arg(QFile::decodeName(path), errnoText()));
  if (!S_ISDIR(st.st_mode))
    return stateFailure(QStringLiteral("%1 is not a directory").arg(QFile::decodeName(path)));
  if (st.st_uid != ::geteuid() && st.st_uid != 0)
    return stateFailure(QStringLiteral("%1 is owned by another user").arg(QFile::decodeName(path)));
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
    return stateFailure(
        QStringLiteral("%1 is writable by group or others and not sticky: another user could rename the "
                       "ledger away")
            .arg(QFile::decodeName(path)));
  return success();
}

Outcome<int> open(const QString& dir, bool create) {
  const QByteArray path = QFile::encodeName(QDir::cleanPath(QDir(dir).absolutePath()));
  const QByteArray anchor = anchorFor(path);
  Fd current(::open(anchor.constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (current.get() < 0)
    return stateFailure(QStringLiteral("cannot open %1: %2").arg(QFile::decodeName(anchor), errnoText()));
  if (Status safe = checkDirectory(current.get(), anchor); !safe)
    return safe.failure();
  QByteArray walked = anchor == "/" ? QByteArray() : anchor;
  const QList<QByteArray> parts = path.mid(anchor == "/" ? 0 : anchor.size()).split('/');
  for (const QByteArray& name : parts) {
    if (name.isEmpty())
      continue;
    walked += '/' + name;
    bool mkdirFailed = false;
    const int next = openChild(current.get(), name, create, mkdirFailed);
    if (mkdirFailed)
      return stateFailure(QStringLiteral("cannot create the state directory: %1").arg(errnoText()));
    if (next < 0 && errno == ENOENT)
      return -1;
    if (next < 0)
      return openFailure(walked);
    current.reset(next);
    if (Status safe = checkDirectory(current.get(), walked); !safe)
      return safe.failure();
  }
  return current.release();
}

Outcome<int> openPrivateChild(int parentFd, const QByteArray& name, const QByteArray& pathForMessages) {
  bool mkdirFailed = false;
  Fd child(openChild(parentFd, name, true, mkdirFailed));
  if (mkdirFailed)
    return stateFailure(
        QStringLiteral("cannot create %1: %2").arg(QFile::decodeName(pathForMessages), errnoText()));
  if (child.get() < 0)
    return openFailure(pathForMessages);
  struct stat st {};
  if (::fstat(child.get(), &st) != 0 || !S_ISDIR(st.st_mode))
    return stateFailure(QStringLiteral("%1 is not a directory").arg(QFile::decodeName(pathForMessages)));
  if (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
    return stateFailure(
        QStringLiteral("%1 is not ours or is writable by others").arg(QFile::decodeName(pathForMessages)));
  return child.release();
}

} // namespace gc::statedir
