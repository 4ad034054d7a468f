#include "grant/GrantLedger.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gc {

namespace {

const char kLedgerName[] = "consumed-grants";

Failure ledgerFailure(const QString& message) {
  return Failure{Refusal::GrantLedger, message};
}

QString lastError() {
  return QString::fromLocal8Bit(std::strerror(errno));
}

// Closes the descriptor (and with it the flock) on every return path.
class Fd {
public:
  explicit Fd(int fd) : m_fd(fd) {}
  ~Fd() {
    if (m_fd >= 0)
      ::close(m_fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return m_fd; }

private:
  int m_fd;
};

// Creates the state directory (and missing parents) 0700. An existing directory is used as
// it is; only the ledger file's own safety is enforced.
Status ensureStateDir(const QString& dir) {
  const QByteArray native = QFile::encodeName(QDir::cleanPath(dir));
  QByteArray partial;
  const QList<QByteArray> parts = native.split('/');
  for (qsizetype i = 0; i < parts.size(); ++i) {
    if (i > 0)
      partial += '/';
    partial += parts[i];
    if (partial.isEmpty() || partial == "/")
      continue;
    if (::mkdir(partial.constData(), 0700) != 0 && errno != EEXIST)
      return ledgerFailure(QStringLiteral("cannot create the state directory: %1").arg(lastError()));
  }
  struct stat st {};
  if (::stat(native.constData(), &st) != 0 || !S_ISDIR(st.st_mode))
    return ledgerFailure(QStringLiteral("the state directory is not a directory"));
  return success();
}

Status checkLedgerFile(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return ledgerFailure(QStringLiteral("cannot stat the ledger: %1").arg(lastError()));
  if (!S_ISREG(st.st_mode))
    return ledgerFailure(QStringLiteral("the ledger is not a regular file"));
  if (st.st_uid != ::geteuid())
    return ledgerFailure(QStringLiteral("the ledger is owned by another user"));
  // Anyone else able to write could erase entries and re-open a consumed grant.
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return ledgerFailure(QStringLiteral("the ledger is writable by group or others"));
  return success();
}

Outcome<int> openLedger(const QString& path, int flags) {
  const int fd = ::open(QFile::encodeName(path).constData(), flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
  if (fd < 0) {
    if (errno == ELOOP)
      return ledgerFailure(QStringLiteral("the ledger is a symlink; refusing it"));
    return Failure{Refusal::GrantLedger, QStringLiteral("cannot open the ledger: %1").arg(lastError())};
  }
  return fd;
}

int lockFd(int fd, int operation) {
  int rc;
  do {
    rc = ::flock(fd, operation);
  } while (rc != 0 && errno == EINTR);
  return rc;
}

// Scans the whole ledger from the start for a line beginning with "<id> ". Reads with
// pread so the O_APPEND write position is irrelevant. `endsWithNewline` reports whether the
// last line is complete (a crash mid-append can leave a partial one).
Outcome<bool> scanFor(int fd, const QByteArray& id, bool* endsWithNewline) {
  const QByteArray prefix = id + ' ';
  QByteArray carry;
  char buffer[64 * 1024];
  off_t offset = 0;
  bool found = false;
  char last = '\n';
  for (;;) {
    const ssize_t n = ::pread(fd, buffer, sizeof buffer, offset);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return ledgerFailure(QStringLiteral("cannot read the ledger: %1").arg(lastError()));
    if (n == 0)
      break;
    offset += n;
    last = buffer[n - 1];
    carry.append(buffer, n);
    qsizetype start = 0;
    for (qsizetype nl = carry.indexOf('\n'); nl >= 0; nl = carry.indexOf('\n', start)) {
      if (QByteArrayView(carry).sliced(start, nl - start).startsWith(prefix))
        found = true;
      start = nl + 1;
    }
    carry.remove(0, start);
  }
  if (!carry.isEmpty() && carry.startsWith(prefix))
    found = true;
  if (endsWithNewline)
    *endsWithNewline = last == '\n';
  return found;
}

bool isCanonicalId(const QString& id) {
  static const QRegularExpression re(
      QStringLiteral("\\A[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\\z"));
  return re.match(id).hasMatch();
}

bool isCanonicalDigest(const QByteArray& digest) {
  static const QRegularExpression re(QStringLiteral("\\A[0-9a-f]{64}\\z"));
  return re.match(QString::fromLatin1(digest)).hasMatch();
}

} // namespace

GrantLedger::GrantLedger(QString dir) : m_dir(std::move(dir)) {}

QString GrantLedger::perUserDir() {
  const struct passwd* user = ::getpwuid(::geteuid());
  if (!user || !user->pw_dir || user->pw_dir[0] != '/')
    return {};
  return QDir::cleanPath(QFile::decodeName(user->pw_dir) + QStringLiteral("/.local/state/guest-console"));
}

QString GrantLedger::ledgerPath() const {
  return QDir(m_dir).filePath(QLatin1StringView(kLedgerName));
}

Status GrantLedger::consume(const Grant& grant) {
  // Only canonical ids and digests are ever written, so a line can never be forged by a
  // crafted field.
  if (!isCanonicalId(grant.grantId))
    return ledgerFailure(QStringLiteral("grant_id is not a lowercase UUID"));
  if (!isCanonicalDigest(grant.digestHex))
    return ledgerFailure(QStringLiteral("digest is not 64 lowercase hex digits"));
  if (m_dir.isEmpty())
    return ledgerFailure(QStringLiteral("no ledger directory (the user has no home in passwd)"));
  Status dir = ensureStateDir(m_dir);
  if (!dir)
    return dir;
  Outcome<int> opened = openLedger(ledgerPath(), O_RDWR | O_CREAT | O_APPEND);
  if (!opened)
    return opened.failure();
  const Fd fd(*opened);
  Status safe = checkLedgerFile(fd.get());
  if (!safe)
    return safe;
  if (lockFd(fd.get(), LOCK_EX) != 0)
    return ledgerFailure(QStringLiteral("cannot lock the ledger: %1").arg(lastError()));

  bool endsWithNewline = true;
  Outcome<bool> seen = scanFor(fd.get(), grant.grantId.toLatin1(), &endsWithNewline);
  if (!seen)
    return seen.failure();
  if (*seen)
    return Status(Refusal::GrantReused, QStringLiteral("grant %1 was already consumed").arg(grant.grantId));

  QByteArray line;
  if (!endsWithNewline)
    line += '\n';
  line += grant.grantId.toLatin1() + ' ' + grant.digestHex + ' ' +
          QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs).toLatin1() + '\n';
  qsizetype written = 0;
  while (written < line.size()) {
    const ssize_t n =
        ::write(fd.get(), line.constData() + written, static_cast<size_t>(line.size() - written));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return ledgerFailure(QStringLiteral("cannot append to the ledger: %1").arg(lastError()));
    written += n;
  }
  // The grant counts as consumed only once the record is durable.
  if (::fsync(fd.get()) != 0)
    return ledgerFailure(QStringLiteral("cannot sync the ledger: %1").arg(lastError()));
  return success();
}

Outcome<bool> GrantLedger::lookup(const QString& grantId) const {
  const QString id = grantId.toLower();
  if (!isCanonicalId(id))
    return ledgerFailure(QStringLiteral("grant_id is not a UUID"));
  if (m_dir.isEmpty())
    return ledgerFailure(QStringLiteral("no ledger directory (the user has no home in passwd)"));
  const int raw =
      ::open(QFile::encodeName(ledgerPath()).constData(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
  if (raw < 0 && errno == ENOENT)
    return false;
  if (raw < 0) {
    if (errno == ELOOP)
      return ledgerFailure(QStringLiteral("the ledger is a symlink; refusing it"));
    return ledgerFailure(QStringLiteral("cannot open the ledger: %1").arg(lastError()));
  }
  const Fd fd(raw);
  Status safe = checkLedgerFile(fd.get());
  if (!safe)
    return safe.failure();
  if (lockFd(fd.get(), LOCK_SH) != 0)
    return ledgerFailure(QStringLiteral("cannot lock the ledger: %1").arg(lastError()));
  return scanFor(fd.get(), id.toLatin1(), nullptr);
}

bool GrantLedger::isConsumed(const QString& grantId) const {
  const Outcome<bool> seen = lookup(grantId);
  return !seen.ok() || seen.value();
}

} // namespace gc
