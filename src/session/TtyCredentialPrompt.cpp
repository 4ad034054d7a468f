#include "session/TtyCredentialPrompt.h"

#include <QFile>

#include <cerrno>
#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

namespace gc {
namespace {

constexpr std::size_t kMaxField = 512;

// Restores the terminal's echo however the read ends.
class EchoOff {
public:
  explicit EchoOff(int fd) : m_fd(fd) {
    m_ok = ::tcgetattr(fd, &m_saved) == 0;
    if (m_ok) {
      termios quiet = m_saved;
      quiet.c_lflag &= ~tcflag_t(ECHO);
      quiet.c_lflag |= ECHONL;
      m_ok = ::tcsetattr(fd, TCSAFLUSH, &quiet) == 0;
    }
  }
  ~EchoOff() {
    if (m_ok)
      ::tcsetattr(m_fd, TCSAFLUSH, &m_saved);
  }
  bool ok() const { return m_ok; }

private:
  int m_fd;
  termios m_saved{};
  bool m_ok = false;
};

void say(int fd, const QByteArray& text) {
  for (qsizetype off = 0; off < text.size();) {
    const ssize_t n = ::write(fd, text.constData() + off, size_t(text.size() - off));
    if (n <= 0 && errno != EINTR)
      return;
    off += std::max<ssize_t>(n, 0);
  }
}

// Reads one line byte by byte into locked memory (no stdio buffer holds a copy).
bool readLine(int fd, SecureBuffer& into) {
  for (;;) {
    char c = 0;
    const ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    if (c == '\n')
      return true;
    if (c != '\r' && !into.append(c)) {
      c = 0;
      return false;
    }
    c = 0;
  }
}

} // namespace

Outcome<Credentials> TtyCredentialPrompt::ask(const QString& defaultUser, const QString& defaultDomain,
                                              int attempt, const QString& ttyPath) {
  const int fd = ::open(QFile::encodeName(ttyPath).constData(), O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return Failure{Refusal::AuthCancelled, QStringLiteral("no terminal to ask for credentials on")};
  Credentials creds;
  auto bad = [fd](const QString& why) {
    ::close(fd);
    return Outcome<Credentials>(Refusal::AuthCancelled, why);
  };
  for (SecureBuffer* b : {&creds.username, &creds.password, &creds.domain}) {
    Outcome<SecureBuffer> buf = SecureBuffer::allocate(kMaxField);
    if (!buf.ok())
      return bad(buf.failure().message);
    *b = std::move(buf).value();
  }
  if (attempt > 1)
    say(fd, QByteArrayLiteral("The guest refused those credentials.\n"));
  say(fd, QStringLiteral("Guest user [%1]: ").arg(defaultUser).toUtf8());
  if (!readLine(fd, creds.username))
    return bad(QStringLiteral("cancelled"));
  if (creds.username.isEmpty() && !creds.username.append(defaultUser.toUtf8()))
    return bad(QStringLiteral("user name too long"));
  say(fd, QStringLiteral("Domain [%1]: ").arg(defaultDomain).toUtf8());
  if (!readLine(fd, creds.domain))
    return bad(QStringLiteral("cancelled"));
  if (creds.domain.isEmpty() && !creds.domain.append(defaultDomain.toUtf8()))
    return bad(QStringLiteral("domain too long"));
  {
    EchoOff quiet(fd);
    if (!quiet.ok())
      return bad(QStringLiteral("cannot turn terminal echo off"));
    say(fd, QByteArrayLiteral("Password: "));
    if (!readLine(fd, creds.password))
      return bad(QStringLiteral("cancelled"));
  }
  ::close(fd);
  return creds;
}

} // namespace gc
