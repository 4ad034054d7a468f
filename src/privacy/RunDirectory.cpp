#include "privacy/RunDirectory.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

#include <cerrno>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gc {
namespace {

QByteArray encode(const QString& path) {
  return QFile::encodeName(path);
}

// mkdir with exact mode; refuses anything already there (a link, a planted directory).
bool makePrivateDir(const QString& path) {
  if (::mkdir(encode(path).constData(), 0700) != 0)
    return false;
  return ::chmod(encode(path).constData(), 0700) == 0;
}

// A directory we may create children in: exists, is a real directory (not a link), is
// ours and not writable by others.
bool isSafeParent(const QString& path) {
  struct stat st {};
  if (::lstat(encode(path).constData(), &st) != 0)
    return false;
  return S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() && (st.st_mode & 0022) == 0;
}

bool ensurePrivateDir(const QString& path) {
  if (isSafeParent(path))
    return true;
  return makePrivateDir(path) && isSafeParent(path);
}

int removeEntry(const char* path, const struct stat*, int type, struct FTW*) {
  // FTW_PHYS: links are reported as links (FTW_SL) and removed as links, never followed.
  if (type == FTW_DP)
    return ::rmdir(path) == 0 ? 0 : -1;
  return ::unlink(path) == 0 ? 0 : -1;
}

} // namespace

RunDirectory::~RunDirectory() {
  (void)remove();
}

QString RunDirectory::runsRoot(const QString& runtimeDir) {
  return QDir(runtimeDir).filePath(QStringLiteral("guest-console/runs"));
}

quint64 RunDirectory::processStartTime(qint64 pid) {
  QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
  if (!stat.open(QIODevice::ReadOnly))
    return 0;
  const QByteArray line = stat.readAll();
  // The command name (field 2) may contain spaces and parentheses: count from the last ')'.
  const qsizetype close = line.lastIndexOf(')');
  if (close < 0)
    return 0;
  const QList<QByteArray> fields = line.mid(close + 2).split(' ');
  // fields[0] is field 3 (state); field 22 (starttime) is fields[19].
  return fields.size() > 19 ? fields[19].toULongLong() : 0;
}

Status RunDirectory::create(const QString& runtimeDir, const QString& runId, const QString& grantDigest) {
  static const QRegularExpression safe(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"));
  if (!safe.match(runId).hasMatch() || runId.contains(QStringLiteral("..")))
    return Status(Refusal::PrivacyViolation, QStringLiteral("run id is not a safe directory name"));
  if (runtimeDir.isEmpty() || !QDir::isAbsolutePath(runtimeDir))
    return Status(Refusal::PrivacyViolation, QStringLiteral("no absolute runtime directory"));
  const QString app = QDir(runtimeDir).filePath(QStringLiteral("guest-console"));
  const QString root = runsRoot(runtimeDir);
  if (!ensurePrivateDir(app) || !ensurePrivateDir(root))
    return Status(Refusal::PrivacyViolation, QStringLiteral("the runtime root %1 is not private").arg(root));
  const QString dir = QDir(root).filePath(runId);
  if (!makePrivateDir(dir))
    return Status(Refusal::PrivacyViolation,
                  QStringLiteral("run directory %1 exists or cannot be created").arg(dir));
  m_path = dir;
  if (!makePrivateDir(freerdpConfigDir())) {
    (void)remove();
    return Status(Refusal::PrivacyViolation, QStringLiteral("cannot create the FreeRDP config dir"));
  }
  const qint64 pid = QCoreApplication::applicationPid();
  const QJsonObject binding{{QStringLiteral("app"), QStringLiteral("guest-console")},
                            {QStringLiteral("run"), runId},
                            {QStringLiteral("pid"), pid},
                            {QStringLiteral("start_time"), QString::number(processStartTime(pid))},
                            {QStringLiteral("grant_digest"), grantDigest}};
  const QByteArray bytes = QJsonDocument(binding).toJson(QJsonDocument::Compact) + '\n';
  const int fd = ::open(encode(QDir(dir).filePath(QStringLiteral("binding.json"))).constData(),
                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  const bool written = fd >= 0 && ::write(fd, bytes.constData(), size_t(bytes.size())) == bytes.size();
  if (fd >= 0)
    ::close(fd);
  if (!written) {
    (void)remove();
    return Status(Refusal::PrivacyViolation, QStringLiteral("cannot write the run binding"));
  }
  return success();
}

QString RunDirectory::freerdpConfigDir() const {
  return QDir(m_path).filePath(QStringLiteral("freerdp"));
}

QString RunDirectory::mcpSocketPath() const {
  return QDir(m_path).filePath(QStringLiteral("mcp.sock"));
}

bool RunDirectory::exists() const {
  struct stat st {};
  return !m_path.isEmpty() && ::lstat(encode(m_path).constData(), &st) == 0;
}

Status RunDirectory::remove() {
  if (m_path.isEmpty() || !exists())
    return success();
  const int rc = ::nftw(encode(m_path).constData(), removeEntry, 8, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
  if (rc != 0 && exists())
    return Status(Refusal::PrivacyViolation,
                  QStringLiteral("run directory %1 not fully removed").arg(m_path));
  return success();
}

} // namespace gc
