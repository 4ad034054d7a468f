#include "widgets/CapabilityReader.h"

#include <cerrno>
#include <cstdio>
#include <termios.h>
#include <unistd.h>

namespace gc {
namespace {

Failure refused(const QString& why) {
  return Failure{Refusal::PanelUnauthorized, why};
}

// Turns terminal echo off for its lifetime (a capability typed or pasted is not shown).
class NoEcho {
public:
  explicit NoEcho(int fd) : m_fd(fd) {
    if (::isatty(fd) && ::tcgetattr(fd, &m_saved) == 0) {
      termios quiet = m_saved;
      quiet.c_lflag &= ~tcflag_t(ECHO);
      m_active = ::tcsetattr(fd, TCSAFLUSH, &quiet) == 0;
    }
  }
  ~NoEcho() {
    if (m_active) {
      ::tcsetattr(m_fd, TCSAFLUSH, &m_saved);
      std::fputc('\n', stderr);
    }
  }
  NoEcho(const NoEcho&) = delete;
  NoEcho& operator=(const NoEcho&) = delete;
  bool active() const { return m_active; }

private:
  int m_fd;
  termios m_saved{};
  bool m_active = false;
};

} // namespace

Outcome<QByteArray> CapabilityReader::parseLine(QByteArrayView line) {
  while (!line.isEmpty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' '))
    line.chop(1);
  if (line.size() != kHexDigits)
    return refused(QStringLiteral("the capability must be %1 hex digits").arg(kHexDigits));
  QByteArray hex(kHexDigits, '\0');
  for (qsizetype i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c >= '0' && c <= '9')
      hex[i] = c;
    else if (c >= 'a' && c <= 'f')
      hex[i] = c;
    else if (c >= 'A' && c <= 'F')
      hex[i] = char(c - 'A' + 'a');
    else
      return refused(QStringLiteral("the capability must be hex digits only"));
  }
  return hex;
}

Outcome<QByteArray> CapabilityReader::read(int fd) {
  NoEcho noEcho(fd);
  if (noEcho.active())
    std::fputs("panel capability (64 hex digits): ", stderr);
  // One byte at a time: nothing after the newline is consumed, and no stdio buffer keeps a copy.
  char line[kHexDigits + 8] = {};
  qsizetype used = 0;
  bool newline = false;
  while (used < qsizetype(sizeof line)) {
    char c = 0;
    const ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    if (c == '\n') {
      newline = true;
      break;
    }
    line[used++] = c;
  }
  Outcome<QByteArray> result =
      (!newline && used == qsizetype(sizeof line))
          ? Outcome<QByteArray>(refused(QStringLiteral("the capability line is too long")))
          : parseLine(QByteArrayView(line, used));
  volatile char* wipe = line;
  for (size_t i = 0; i < sizeof line; ++i)
    wipe[i] = 0;
  return result;
}

} // namespace gc
