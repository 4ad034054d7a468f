#include "grant/GrantLedger.h"

#include "common/SystemError.h"
#include "grant/StateDir.h"

#include <QCryptographicHash>
#include <QDateTime>
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
#include <utility>

namespace gc {

namespace {

const char kLedgerName[] = "consumed-grants";

Failure ledgerFailure(const QString& message) {
  return Failure{Refusal::GrantLedger, message};
}

using statedir::Fd;

Status checkLedgerFile(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return ledgerFailure(QStringLiteral("cannot stat the ledger: %1").arg(errnoText()));
  if (!S_ISREG(st.st_mode))
    return ledgerFailure(QStringLiteral("the ledger is not a regular file"));
  if (st.st_uid != ::geteuid())
    return ledgerFailure(QStringLiteral("the ledger is owned by another user"));
  // Anyone else able to write could erase entries and re-open a consumed grant.
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return ledgerFailure(QStringLiteral("the ledger is writable by group or others"));
  return success();
}

// O_NONBLOCK: opening a FIFO (or a device) must not wait for a writer; fstat then refuses it.
Outcome<int> openLedger(int dirFd, int flags) {
  const int fd = ::openat(dirFd, kLedgerName, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0600);
  if (fd < 0) {
    if (errno == ELOOP)
      return ledgerFailure(QStringLiteral("the ledger is a symlink; refusing it"));
    if (errno == ENXIO || errno == EISDIR)
      return ledgerFailure(QStringLiteral("the ledger is not a regular file"));
    return Failure{Refusal::GrantLedger, QStringLiteral("cannot open the ledger: %1").arg(errnoText())};
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

QByteArray checkOf(QByteArrayView fields) {
  return QCryptographicHash::hash(fields, QCryptographicHash::Sha256).toHex().left(16);
}

bool isCanonicalId(const QString& id) {
  static const QRegularExpression re(
      QStringLiteral("\\A[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\\z"));
  return re.match(id).hasMatch();
}

bool isCanonicalIdBytes(QByteArrayView id) {
  return id.size() == 36 && isCanonicalId(QString::fromLatin1(id));
}

bool isCanonicalDigest(const QByteArray& digest) {
  static const QRegularExpression re(QStringLiteral("\\A[0-9a-f]{64}\\z"));
  return re.match(QString::fromLatin1(digest)).hasMatch();
}

// The id a complete ledger line records, or empty when the line counts for nothing (torn,
// bad check, not a record).
QByteArrayView recordedId(QByteArrayView line) {
  const QList<QByteArrayView> f = [&] {
    QList<QByteArrayView> out;
    qsizetype start = 0;
    for (qsizetype i = 0; i <= line.size(); ++i) {
      if (i == line.size() || line[i] == ' ') {
        out.append(line.sliced(start, i - start));
        start = i + 1;
      }
    }
    return out;
  }();
  if (f.size() != 3 && f.size() != 4)
    return {};
  if (!isCanonicalIdBytes(f[0]) || !isCanonicalDigest(f[1].toByteArray()))
    return {};
  // Three fields: written before lines carried a check; still a consumption.
  if (f.size() == 4 && f[3] != checkOf(line.first(f[0].size() + f[1].size() + f[2].size() + 2)))
    return {};
  return f[0];
}

struct Scan {
  bool found = false;
  off_t complete = 0; // the size up to and including the last '\n'
  off_t size = 0;
};

// Scans the whole ledger from the start for a complete record of `id`. Reads with pread so
// the O_APPEND write position is irrelevant.
Outcome<Scan> scanFor(int fd, QByteArrayView id) {
  Scan scan;
  QByteArray carry;
  char buffer[64 * 1024];
  for (;;) {
    const ssize_t n = ::pread(fd, buffer, sizeof buffer, scan.size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return ledgerFailure(QStringLiteral("cannot read the ledger: %1").arg(errnoText()));
    if (n == 0)
      break;
    carry.append(buffer, n);
    qsizetype start = 0;
    for (qsizetype nl = carry.indexOf('\n'); nl >= 0; nl = carry.indexOf('\n', start)) {
      if (recordedId(QByteArrayView(carry).sliced(start, nl - start)) == id)
        scan.found = true;
      start = nl + 1;
    }
    scan.size += n;
    scan.complete = scan.size - (carry.size() - start);
    carry.remove(0, start);
  }
  return scan;
}

// Truncates the file back to `size` (a record that did not fully land must not count later).
void truncateBack(int fd, off_t size) {
  int rc;
  do {
    rc = ::ftruncate(fd, size);
  } while (rc != 0 && errno == EINTR);
  (void)::fsync(fd);
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

QByteArray GrantLedger::recordLine(const QByteArray& id, const QByteArray& digestHex,
                                   const QByteArray& time) {
  const QByteArray fields = id + ' ' + digestHex + ' ' + time;
  return fields + ' ' + checkOf(fields) + '\n';
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
  Outcome<int> dir = statedir::open(m_dir, true);
  if (!dir)
    return dir.failure();
  const Fd dirFd(*dir);
  Outcome<int> opened = openLedger(dirFd.get(), O_RDWR | O_CREAT | O_APPEND);
  if (!opened)
    return opened.failure();
  const Fd fd(*opened);
  Status safe = checkLedgerFile(fd.get());
  if (!safe)
    return safe;
  if (lockFd(fd.get(), LOCK_EX) != 0)
    return ledgerFailure(QStringLiteral("cannot lock the ledger: %1").arg(errnoText()));

  const QByteArray id = grant.grantId.toLatin1();
  Outcome<Scan> scan = scanFor(fd.get(), id);
  if (!scan)
    return scan.failure();
  if (scan->found)
    return Status(Refusal::GrantReused, QStringLiteral("grant %1 was already consumed").arg(grant.grantId));
  // A torn tail is a record whose consume never succeeded (it returns only after a whole
  // line is synced): it goes, so the new line starts on a line of its own.
  if (scan->complete != scan->size) {
    if (::ftruncate(fd.get(), scan->complete) != 0)
      return ledgerFailure(QStringLiteral("cannot drop the ledger's torn tail: %1").arg(errnoText()));
  }

  const QByteArray line =
      recordLine(id, grant.digestHex, QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs).toLatin1());
  // One write of the whole line, at the end (O_APPEND): it lands whole, or it is taken back.
  ssize_t n;
  do {
    n = ::write(fd.get(), line.constData(), size_t(line.size()));
  } while (n < 0 && errno == EINTR);
  if (n != line.size()) {
    const QString why =
        n < 0 ? errnoText() : QStringLiteral("%1 of %2 bytes written").arg(n).arg(line.size());
    truncateBack(fd.get(), scan->complete);
    return ledgerFailure(
        QStringLiteral("cannot append to the ledger (%1); the grant was not consumed").arg(why));
  }
  // The grant counts as consumed only once the record is durable.
  if (::fsync(fd.get()) != 0) {
    const QString why = errnoText();
    truncateBack(fd.get(), scan->complete);
    return ledgerFailure(QStringLiteral("cannot sync the ledger (%1); the grant was not consumed").arg(why));
  }
  if (scan->size == 0)
    (void)::fsync(dirFd.get()); // a new ledger's directory entry
  return success();
}

Outcome<bool> GrantLedger::lookup(const QString& grantId) const {
  const QString id = grantId.toLower();
  if (!isCanonicalId(id))
    return ledgerFailure(QStringLiteral("grant_id is not a UUID"));
  if (m_dir.isEmpty())
    return ledgerFailure(QStringLiteral("no ledger directory (the user has no home in passwd)"));
  Outcome<int> dir = statedir::open(m_dir, false);
  if (!dir)
    return dir.failure();
  if (*dir < 0)
    return false; // no state dir: nothing was consumed
  const Fd dirFd(*dir);
  const int raw =
      ::openat(dirFd.get(), kLedgerName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (raw < 0 && errno == ENOENT)
    return false;
  if (raw < 0) {
    if (errno == ELOOP)
      return ledgerFailure(QStringLiteral("the ledger is a symlink; refusing it"));
    return ledgerFailure(QStringLiteral("cannot open the ledger: %1").arg(errnoText()));
  }
  const Fd fd(raw);
  Status safe = checkLedgerFile(fd.get());
  if (!safe)
    return safe.failure();
  if (lockFd(fd.get(), LOCK_SH) != 0)
    return ledgerFailure(QStringLiteral("cannot lock the ledger: %1").arg(errnoText()));
  Outcome<Scan> scan = scanFor(fd.get(), id.toLatin1());
  if (!scan)
    return scan.failure();
  return scan->found;
}

bool GrantLedger::isConsumed(const QString& grantId) const {
  const Outcome<bool> seen = lookup(grantId);
  return !seen.ok() || seen.value();
}

} // namespace gc
