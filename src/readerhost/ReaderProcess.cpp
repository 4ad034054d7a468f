#include "readerhost/ReaderProcess.h"

#include "common/SystemError.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace gc {

namespace {

// The reader's fixed descriptor numbers (src/reader/reader_main.cpp).
constexpr int kReaderSocketFd = 3;
constexpr int kDesktopFd = 4;

// The sanitizers' options pass to the reader (diagnostics, not secrets); nothing else of the
// console's environment does. LeakSanitizer cannot run inside the reader's sandbox (it needs
// ptrace and /proc at exit): the reader's leaks are checked where RdpSession runs in-process.
std::vector<QByteArray> readerEnvironment() {
  // FreeRDP derives its default configuration path from HOME and refuses to create a context
  // without one; the reader's is a directory that does not exist (it may open nothing anyway).
  std::vector<QByteArray> env{QByteArrayLiteral("HOME=/nonexistent/guest-console-rdp")};
  for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"}) {
    QByteArray value = qgetenv(name);
    if (QByteArrayView(name) == QByteArrayView("ASAN_OPTIONS"))
      value += value.isEmpty() ? "detect_leaks=0" : ":detect_leaks=0";
    if (!value.isEmpty())
      env.push_back(QByteArray(name) + '=' + value);
  }
  return env;
}

} // namespace

QString ReaderProcess::defaultProgram() {
  const QString beside =
      QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("guest-console-rdp"));
  QStringList candidates{beside, QStringLiteral(GC_READER_INSTALL_PATH)};
#ifdef GC_READER_BUILD_PATH
  candidates << QStringLiteral(GC_READER_BUILD_PATH);
#endif
  for (const QString& c : candidates) {
    const QFileInfo info(c);
    if (info.isFile() && info.isExecutable())
      return info.absoluteFilePath();
  }
  return QStringLiteral(GC_READER_INSTALL_PATH);
}

ReaderProcess::ReaderProcess(QObject* parent) : QObject(parent) {}

ReaderProcess::~ReaderProcess() {
  stop(false, {});
}

Status ReaderProcess::start(const QString& program, int readerEnd, int desktopFd) {
  if (m_pid > 0 || !m_exitStatus.isEmpty())
    return Status(Refusal::Internal, QStringLiteral("the RDP reader was started already"));
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  // stdin and stdout: /dev/null, read-only both (the reader writes nowhere but stderr; the
  // console opens no file for writing that it does not account for).
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, readerEnd, kReaderSocketFd);
  posix_spawn_file_actions_adddup2(&actions, desktopFd, kDesktopFd);
  posix_spawn_file_actions_addclosefrom_np(&actions, kDesktopFd + 1);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  const QByteArray path = QFile::encodeName(program);
  std::vector<QByteArray> env = readerEnvironment();
  std::vector<char*> envp;
  for (QByteArray& e : env)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  char* argv[] = {const_cast<char*>(path.constData()), nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, path.constData(), &actions, &attr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    errno = rc;
    return Status(rc == EAGAIN || rc == ENOMEM || rc == EMFILE ? Refusal::ResourceExhausted
                                                               : Refusal::RdpReaderFailed,
                  QStringLiteral("cannot start the RDP reader %1: %2").arg(program, errnoText()));
  }
  m_pid = pid;
  m_pidfd = int(::syscall(SYS_pidfd_open, pid, 0));
  if (m_pidfd >= 0) {
    m_exitNotifier = std::make_unique<QSocketNotifier>(m_pidfd, QSocketNotifier::Read);
    connect(m_exitNotifier.get(), &QSocketNotifier::activated, this, [this] {
      m_exitNotifier->setEnabled(false);
      reap(false);
      if (m_pid <= 0)
        emit exited();
    });
  }
  return success();
}

void ReaderProcess::stop(bool graceful, std::chrono::milliseconds bound) {
  if (m_pid > 0) {
    QElapsedTimer clock;
    clock.start();
    while (graceful && m_pid > 0 && clock.elapsed() < bound.count()) {
      if (m_pidfd >= 0) {
        pollfd p{m_pidfd, POLLIN, 0};
        ::poll(&p, 1, int(bound.count() - clock.elapsed()));
      }
      reap(false);
      if (m_pidfd < 0)
        break;
    }
    if (m_pid > 0) {
      ::kill(pid_t(m_pid), SIGKILL);
      reap(true);
    }
  }
  m_exitNotifier.reset();
  if (m_pidfd >= 0) {
    ::close(m_pidfd);
    m_pidfd = -1;
  }
}

void ReaderProcess::reap(bool wait) {
  if (m_pid <= 0)
    return;
  int status = 0;
  const pid_t r = ::waitpid(pid_t(m_pid), &status, wait ? 0 : WNOHANG);
  if (r != pid_t(m_pid))
    return;
  m_pid = -1;
  m_exitStatus = WIFEXITED(status)     ? QStringLiteral("exit %1").arg(WEXITSTATUS(status))
                 : WIFSIGNALED(status) ? QStringLiteral("signal %1").arg(WTERMSIG(status))
                                       : QStringLiteral("status %1").arg(status);
}

} // namespace gc
