#include "privacy/RunSweeper.h"

#include "common/StrictJson.h"
#include "common/SystemError.h"
#include "privacy/RunDirectory.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QRegularExpression>

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace gc {
namespace {

constexpr int kMaxDepth = 16;                // a run dir is 2 levels deep; anything deeper is odd
constexpr qsizetype kMaxBindingBytes = 4096; // binding.json is ~200 bytes
constexpr qint64 kMaxPid = 4194304;          // PID_MAX_LIMIT on 64-bit Linux

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// Owns one file descriptor.
class Fd {
public:
  explicit Fd(int fd = -1) : m_fd(fd) {}
  ~Fd() {
    if (m_fd >= 0)
      ::close(m_fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& other) noexcept : m_fd(other.m_fd) { other.m_fd = -1; }
  Fd& operator=(Fd&& other) noexcept {
    std::swap(m_fd, other.m_fd);
    return *this;
  }
  int get() const { return m_fd; }
  bool valid() const { return m_fd >= 0; }

private:
  int m_fd;
};

QString nameOf(const QByteArray& raw) {
  return QFile::decodeName(raw);
}

// The names in a directory (without . and ..). Works on a duplicate so `dirfd` stays open
// and usable; rewinddir because the duplicate shares the file offset.
std::optional<std::vector<QByteArray>> listNames(int dirfd) {
  const int copy = ::fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0)
    return std::nullopt;
  DIR* dir = ::fdopendir(copy);
  if (!dir) {
    ::close(copy);
    return std::nullopt;
  }
  ::rewinddir(dir);
  std::vector<QByteArray> names;
  errno = 0;
  while (const dirent* entry = ::readdir(dir)) {
    const QByteArray name(entry->d_name);
    if (name != "." && name != "..")
      names.push_back(name);
  }
  const bool failed = errno != 0;
  ::closedir(dir);
  if (failed)
    return std::nullopt;
  return names;
}

// Opens a child directory without following a link and checks it is the inode that
// fstatat saw (nothing was swapped in between).
Fd openChildDir(int parent, const QByteArray& name, const struct stat& seen) {
  Fd fd(::openat(parent, name.constData(), kDirFlags));
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || st.st_dev != seen.st_dev || st.st_ino != seen.st_ino)
    return Fd();
  return fd;
}

// Walks a run directory before anything is removed: every entry must be ours and on the
// same file system. Links are fine here (they are removed as links, never followed).
// Returns the first problem, or nothing.
std::optional<QString> inspectTree(int dirfd, dev_t dev, int depth, const QString& relative) {
  if (depth > kMaxDepth)
    return QStringLiteral("%1 is nested too deeply").arg(relative);
  const auto names = listNames(dirfd);
  if (!names)
    return QStringLiteral("%1 cannot be listed").arg(relative);
  for (const QByteArray& name : *names) {
    const QString path = relative + QLatin1Char('/') + nameOf(name);
    struct stat st {};
    if (::fstatat(dirfd, name.constData(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      return QStringLiteral("%1: %2").arg(path, errnoText(errno));
    if (st.st_uid != ::geteuid())
      return QStringLiteral("%1 is not owned by us (uid %2)").arg(path).arg(st.st_uid);
    if (!S_ISDIR(st.st_mode))
      continue;
    if (st.st_dev != dev)
      return QStringLiteral("%1 is on another file system").arg(path);
    const Fd child = openChildDir(dirfd, name, st);
    if (!child.valid())
      return QStringLiteral("%1 changed while it was inspected").arg(path);
    if (auto problem = inspectTree(child.get(), dev, depth + 1, path))
      return problem;
  }
  return std::nullopt;
}

// Removes everything inside `dirfd`: links and files with unlinkat (a link is removed, its
// target is never touched), directories depth-first through their own descriptors.
bool removeContents(int dirfd, dev_t dev, int depth) {
  if (depth > kMaxDepth)
    return false;
  const auto names = listNames(dirfd);
  if (!names)
    return false;
  bool ok = true;
  for (const QByteArray& name : *names) {
    struct stat st {};
    if (::fstatat(dirfd, name.constData(), &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_uid != ::geteuid()) {
      ok = false;
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      const Fd child = st.st_dev == dev ? openChildDir(dirfd, name, st) : Fd();
      if (!child.valid() || !removeContents(child.get(), dev, depth + 1) ||
          ::unlinkat(dirfd, name.constData(), AT_REMOVEDIR) != 0)
        ok = false;
    } else if (::unlinkat(dirfd, name.constData(), 0) != 0) {
      ok = false;
    }
  }
  return ok;
}

struct Binding {
  QString app;
  QString run;
  qint64 pid = 0;
  quint64 startTime = 0;
};

// Reads binding.json strictly: a regular file of ours (not a link), small, exactly the
// fields RunDirectory writes, with the types it writes them in.
Outcome<Binding> readBinding(int dirfd) {
  const auto invalid = [](const QString& why) {
    return Failure{Refusal::PrivacyViolation, QStringLiteral("invalid binding: %1").arg(why)};
  };
  const Fd fd(::openat(dirfd, "binding.json", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid())
    return errno == ENOENT ? Failure{Refusal::PrivacyViolation, QStringLiteral("no binding")}
                           : invalid(QStringLiteral("binding.json: %1").arg(errnoText(errno)));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    return invalid(QStringLiteral("not a regular file"));
  if (st.st_uid != ::geteuid())
    return invalid(QStringLiteral("binding.json is not owned by us (uid %1)").arg(st.st_uid));
  if (st.st_size > kMaxBindingBytes)
    return invalid(QStringLiteral("too large"));
  QByteArray bytes(qsizetype(st.st_size) + 1, Qt::Uninitialized);
  const ssize_t n = ::read(fd.get(), bytes.data(), size_t(bytes.size()));
  if (n < 0 || n > kMaxBindingBytes)
    return invalid(QStringLiteral("unreadable"));
  bytes.truncate(n);

  const Outcome<QJsonObject> parsed = StrictJson::parseObject(bytes, kMaxBindingBytes, 2);
  if (!parsed.ok())
    return invalid(QStringLiteral("not strict JSON"));
  const QJsonObject& o = parsed.value();
  static const QStringList kFields{QStringLiteral("app"), QStringLiteral("grant_digest"),
                                   QStringLiteral("pid"), QStringLiteral("run"),
                                   QStringLiteral("start_time")};
  QStringList keys = o.keys();
  keys.sort();
  if (keys != kFields)
    return invalid(QStringLiteral("unexpected field set"));
  static const QRegularExpression digits(QStringLiteral("^[0-9]{1,20}$"));
  static const QRegularExpression hex64(QStringLiteral("^[0-9a-fA-F]{64}$"));
  const QJsonValue pid = o.value(QStringLiteral("pid"));
  const QJsonValue start = o.value(QStringLiteral("start_time"));
  if (!o.value(QStringLiteral("app")).isString() || !o.value(QStringLiteral("run")).isString() ||
      !o.value(QStringLiteral("grant_digest")).isString() || !pid.isDouble() || !start.isString())
    return invalid(QStringLiteral("wrong field types"));
  const double pidValue = pid.toDouble();
  if (pidValue != double(qint64(pidValue)) || pidValue < 1 || pidValue > double(kMaxPid))
    return invalid(QStringLiteral("pid out of range"));
  if (!digits.match(start.toString()).hasMatch())
    return invalid(QStringLiteral("start_time is not a number"));
  if (!hex64.match(o.value(QStringLiteral("grant_digest")).toString()).hasMatch())
    return invalid(QStringLiteral("grant_digest is not a SHA-256"));
  bool ok = false;
  Binding binding;
  binding.app = o.value(QStringLiteral("app")).toString();
  binding.run = o.value(QStringLiteral("run")).toString();
  binding.pid = qint64(pidValue);
  binding.startTime = start.toString().toULongLong(&ok);
  if (!ok || binding.startTime == 0)
    return invalid(QStringLiteral("start_time out of range"));
  return binding;
}

// One entry of the runs root: removed (nothing returned) or kept (the reason).
std::optional<QString> sweepEntry(int rootfd, dev_t rootDev, const QByteArray& rawName) {
  const QString name = nameOf(rawName);
  static const QRegularExpression safe(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"));
  struct stat st {};
  if (::fstatat(rootfd, rawName.constData(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return errnoText(errno);
  if (S_ISLNK(st.st_mode))
    return QStringLiteral("a symbolic link (never followed)");
  if (!S_ISDIR(st.st_mode))
    return QStringLiteral("not a directory");
  if (st.st_uid != ::geteuid())
    return QStringLiteral("not owned by us (uid %1)").arg(st.st_uid);
  if (st.st_dev != rootDev)
    return QStringLiteral("on another file system");
  if (!safe.match(name).hasMatch() || name.contains(QStringLiteral("..")))
    return QStringLiteral("not a run id");
  const Fd dir = openChildDir(rootfd, rawName, st);
  if (!dir.valid())
    return QStringLiteral("changed while it was swept");

  const Outcome<Binding> binding = readBinding(dir.get());
  if (!binding.ok())
    return binding.failure().message;
  if (binding->app != QLatin1String("guest-console"))
    return QStringLiteral("the binding is not guest-console's");
  if (binding->run != name)
    return QStringLiteral("the binding names another run");
  // Same pid and same kernel start time: that console is still running. A different start
  // time means the pid was reused by an unrelated process after the console died.
  const quint64 started = RunDirectory::processStartTime(binding->pid);
  if (started != 0 && started == binding->startTime)
    return QStringLiteral("a live console (pid %1)").arg(binding->pid);

  if (auto problem = inspectTree(dir.get(), rootDev, 1, name))
    return *problem;
  if (!removeContents(dir.get(), rootDev, 1) || ::unlinkat(rootfd, rawName.constData(), AT_REMOVEDIR) != 0)
    return QStringLiteral("removal failed: %1").arg(errnoText(errno));
  return std::nullopt;
}

// Opens one component of the root path: a real directory of ours, not writable by others.
// ENOENT is reported as an empty optional reason with an invalid fd.
struct Opened {
  Fd fd;
  std::optional<QString> problem; // set: refused; unset with !fd.valid(): absent
  dev_t dev = 0;
};

Opened openRootComponent(int parent, const char* name) {
  Opened result;
  struct stat st {};
  if (::fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno != ENOENT)
      result.problem = errnoText(errno);
    return result;
  }
  if (S_ISLNK(st.st_mode))
    result.problem = QStringLiteral("a symbolic link (never followed)");
  else if (!S_ISDIR(st.st_mode))
    result.problem = QStringLiteral("not a directory");
  else if (st.st_uid != ::geteuid())
    result.problem = QStringLiteral("not owned by us (uid %1)").arg(st.st_uid);
  else if ((st.st_mode & 0022) != 0)
    result.problem = QStringLiteral("writable by others");
  if (result.problem)
    return result;
  result.fd = openChildDir(parent, name, st);
  if (!result.fd.valid())
    result.problem = QStringLiteral("changed while it was opened");
  result.dev = st.st_dev;
  return result;
}

} // namespace

QJsonObject RunSweeper::Report::toJson() const {
  QJsonArray keptArray;
  for (const Kept& k : kept)
    keptArray.append(QJsonObject{{QStringLiteral("run"), k.run}, {QStringLiteral("reason"), k.reason}});
  QJsonObject out{{QStringLiteral("removed"), QJsonArray::fromStringList(removed)},
                  {QStringLiteral("kept"), keptArray}};
  if (refused)
    out.insert(QStringLiteral("error"), QJsonObject{{QStringLiteral("code"), refusalName(refused->code)},
                                                    {QStringLiteral("message"), refused->message}});
  return out;
}

RunSweeper::Report RunSweeper::sweep(const QString& runtimeDir) {
  Report report;
  const auto refuse = [&report](const QString& what, const QString& why) {
    report.kept.append({what, why});
    report.refused = Failure{Refusal::PrivacyViolation, QStringLiteral("%1: %2").arg(what, why)};
    return report;
  };
  if (runtimeDir.isEmpty() || !QDir::isAbsolutePath(runtimeDir))
    return refuse(runtimeDir, QStringLiteral("not an absolute runtime directory"));
  const Fd runtime(::open(QFile::encodeName(runtimeDir).constData(), kDirFlags));
  if (!runtime.valid()) {
    if (errno == ENOENT)
      return report;
    return refuse(runtimeDir,
                  QStringLiteral("cannot be opened without following links: %1").arg(errnoText(errno)));
  }
  Opened app = openRootComponent(runtime.get(), "guest-console");
  if (app.problem)
    return refuse(QStringLiteral("guest-console"), *app.problem);
  if (!app.fd.valid())
    return report;
  Opened runs = openRootComponent(app.fd.get(), "runs");
  if (runs.problem)
    return refuse(QStringLiteral("guest-console/runs"), *runs.problem);
  if (!runs.fd.valid())
    return report;

  const auto names = listNames(runs.fd.get());
  if (!names)
    return refuse(QStringLiteral("guest-console/runs"), QStringLiteral("cannot be listed"));
  for (const QByteArray& raw : *names) {
    if (auto reason = sweepEntry(runs.fd.get(), runs.dev, raw))
      report.kept.append({nameOf(raw), *reason});
    else
      report.removed.append(nameOf(raw));
  }
  report.removed.sort();
  std::sort(report.kept.begin(), report.kept.end(),
            [](const Kept& a, const Kept& b) { return a.run < b.run; });
  return report;
}

} // namespace gc
