#include "tools/issuegrant/ExclusiveFile.h"

#include "common/SystemError.h"

#include <QFile>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gc::tools {

namespace {

Failure failed(const QString& what, const QString& path, int error) {
  return Failure{Refusal::Internal, QStringLiteral("%1 %2: %3").arg(what, path, errnoText(error))};
}

} // namespace

Status ExclusiveFile::write(const QString& path, const QByteArray& bytes) {
  const QByteArray native = QFile::encodeName(path);
  const int fd = ::open(native.constData(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return failed(QStringLiteral("cannot create"), path, errno);

  int error = 0;
  // The umask can only clear bits; fchmod makes 0600 exact whatever it is.
  if (::fchmod(fd, 0600) != 0)
    error = errno;
  qsizetype done = 0;
  while (error == 0 && done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.constData() + done, size_t(bytes.size() - done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      error = n < 0 ? errno : EIO;
    else
      done += n;
  }
  if (error == 0 && ::fsync(fd) != 0)
    error = errno;
  if (::close(fd) != 0 && error == 0)
    error = errno;
  if (error != 0) {
    ::unlink(native.constData());
    return failed(QStringLiteral("cannot write"), path, error);
  }
  return success();
}

} // namespace gc::tools
