#include "relay/RelayConnection.h"

#include "common/StrictJson.h"
#include "privacy/SecureBytes.h"
#include "relay/PeerCredentials.h"
#include "relay/RelayProtocol.h"

#include <QDeadlineTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>

#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace gc {
namespace {

Failure consoleClosed() {
  return Failure{Refusal::RunNotFound, QStringLiteral("the console has closed")};
}

QString text(const QJsonObject& o, const char* key) {
  return o.value(QLatin1StringView(key)).toString();
}

} // namespace

RelayConnection::~RelayConnection() {
  closeFd();
}

void RelayConnection::closeFd() {
  if (m_fd >= 0)
    ::close(m_fd);
  m_fd = -1;
  m_buffer.clear();
}

Status RelayConnection::open(const QString& socketPath, uid_t expectedPeerUid,
                             std::chrono::milliseconds timeout) {
  const QByteArray path = QFile::encodeName(socketPath);
  const QByteArray dir = QFile::encodeName(QFileInfo(socketPath).path());
  struct stat st {};
  if (::lstat(dir.constData(), &st) != 0)
    return Status(Refusal::RunNotFound, QStringLiteral("no run directory for this run"));
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 0077) != 0)
    return Status(Refusal::McpNotAuthorized,
                  QStringLiteral("the run directory is not a private directory of ours"));
  if (::lstat(path.constData(), &st) != 0)
    return Status(Refusal::RunNotFound, QStringLiteral("no console is listening for this run"));
  if (!S_ISSOCK(st.st_mode) || st.st_uid != ::geteuid())
    return Status(Refusal::McpNotAuthorized, QStringLiteral("the run's socket is not a socket of ours"));

  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= qsizetype(sizeof(address.sun_path)))
    return Status(Refusal::RunNotFound, QStringLiteral("socket path too long"));
  std::memcpy(address.sun_path, path.constData(), size_t(path.size()));
  m_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (m_fd < 0)
    return Status(Refusal::Internal, QString::fromLocal8Bit(std::strerror(errno)));
  if (::connect(m_fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    closeFd();
    // A socket file nobody listens on is a console that is gone.
    return Status(Refusal::RunNotFound, QStringLiteral("no console is listening for this run"));
  }
  const std::optional<PeerCredentials::Peer> peer = PeerCredentials::of(m_fd);
  if (!peer || peer->uid != expectedPeerUid) {
    closeFd();
    return Status(Refusal::McpNotAuthorized, QStringLiteral("the socket's owner is another user"));
  }

  const Outcome<QJsonObject> hello = readLine(timeout);
  if (!hello) {
    closeFd();
    return Status(hello.failure());
  }
  if (text(*hello, "type") == u"refused") {
    const std::optional<Refusal> code = refusalFromName(text(*hello, "code"));
    closeFd();
    return Status(code.value_or(Refusal::McpNotAuthorized), text(*hello, "message"));
  }
  if (text(*hello, "type") != u"hello" ||
      hello->value(QStringLiteral("protocol")).toInt() != relay::kProtocol) {
    closeFd();
    return Status(Refusal::ProtocolMalformed, QStringLiteral("the console did not say hello"));
  }
  m_hello.run = text(*hello, "run");
  m_hello.server = text(*hello, "server");
  m_hello.tool = text(*hello, "tool");
  for (const QJsonValue& id : hello->value(QStringLiteral("candidates")).toArray())
    m_hello.candidateIds.append(id.toString());
  m_hello.expiresAt = QDateTime::fromString(text(*hello, "expires_at"), Qt::ISODateWithMs);
  if (m_hello.server.isEmpty() || m_hello.server.size() > 128) {
    closeFd();
    return Status(Refusal::McpNotAuthorized, QStringLiteral("the grant names no usable MCP server"));
  }
  if (m_hello.tool != relay::kActionTool) {
    closeFd();
    return Status(Refusal::McpNotAuthorized,
                  QStringLiteral("the grant authorizes tool \"%1\", which this server does not implement")
                      .arg(m_hello.tool.left(128)));
  }

  if (Status s = writeLine({{QStringLiteral("type"), QStringLiteral("bind")},
                            {QStringLiteral("server"), m_hello.server},
                            {QStringLiteral("tool"), m_hello.tool}});
      !s.ok()) {
    closeFd();
    return s;
  }
  const Outcome<QJsonObject> bound = readLine(timeout);
  if (!bound || text(*bound, "type") != u"bound") {
    const Refusal code =
        bound ? refusalFromName(text(*bound, "code")).value_or(Refusal::McpNotAuthorized) : bound.code();
    closeFd();
    return Status(code, QStringLiteral("the console did not accept this relay"));
  }
  return success();
}

ConsoleLink::Reply RelayConnection::call(const QString& op, const QJsonObject& arguments) {
  Reply reply;
  if (m_fd < 0) {
    reply.failure = consoleClosed();
    return reply;
  }
  if (m_hello.expiresAt.isValid() && QDateTime::currentDateTimeUtc() >= m_hello.expiresAt) {
    reply.failure = Failure{Refusal::Expired, QStringLiteral("the grant has expired")};
    return reply;
  }
  const qint64 id = m_nextId++;
  if (Status s = writeLine({{QStringLiteral("type"), QStringLiteral("call")},
                            {QStringLiteral("id"), id},
                            {QStringLiteral("op"), op},
                            {QStringLiteral("arguments"), arguments}});
      !s.ok()) {
    closeFd();
    reply.failure = consoleClosed();
    return reply;
  }
  const Outcome<QJsonObject> line = readLine(m_callTimeout);
  if (!line) {
    closeFd();
    reply.failure = line.failure();
    return reply;
  }
  const QJsonObject& message = line.value();
  const QString type = text(message, "type");
  if ((type != u"result" && type != u"error") || message.value(QStringLiteral("id")).toInteger(-1) != id) {
    closeFd();
    reply.failure = type == u"refused"
                        ? Failure{refusalFromName(text(message, "code")).value_or(Refusal::Internal),
                                  text(message, "message")}
                        : Failure{Refusal::ProtocolMalformed, QStringLiteral("unexpected console reply")};
    return reply;
  }
  if (type == u"result") {
    reply.ok = true;
    reply.result = message.value(QStringLiteral("result")).toObject();
    return reply;
  }
  reply.failure =
      Failure{refusalFromName(text(message, "code")).value_or(Refusal::Internal), text(message, "message")};
  reply.receipt = message.value(QStringLiteral("receipt")).toObject();
  return reply;
}

Status RelayConnection::writeLine(const QJsonObject& message) {
  const QByteArray line = QJsonDocument(message).toJson(QJsonDocument::Compact) + '\n';
  qsizetype done = 0;
  while (done < line.size()) {
    const ssize_t n = ::send(m_fd, line.constData() + done, size_t(line.size() - done), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return Status(consoleClosed());
    done += n;
  }
  return success();
}

Outcome<QJsonObject> RelayConnection::readLine(std::chrono::milliseconds timeout) {
  const QDeadlineTimer deadline(timeout);
  for (;;) {
    if (const qsizetype newline = m_buffer.indexOf('\n'); newline >= 0) {
      // A capture's reply carries the image: zero the raw line once parsed, and what the
      // buffer held (QJsonValue's own copy lives on in the reply, beyond our reach).
      QByteArray line = m_buffer.left(newline);
      QByteArray rest = m_buffer.mid(newline + 1);
      secureWipe(m_buffer);
      m_buffer = std::move(rest);
      Outcome<QJsonObject> parsed = StrictJson::parseObject(line, relay::kMaxReplyBytes, 64);
      secureWipe(line);
      return parsed;
    }
    if (m_buffer.size() > relay::kMaxReplyBytes)
      return Failure{Refusal::ProtocolOversize, QStringLiteral("console reply too large")};
    pollfd pfd{m_fd, POLLIN, 0};
    const int remaining = int(qMin<qint64>(deadline.remainingTime(), 1 << 30));
    const int ready = ::poll(&pfd, 1, remaining);
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready == 0)
      return Failure{Refusal::RunNotFound, QStringLiteral("the console did not answer in time")};
    char chunk[65536];
    const ssize_t n = ::recv(m_fd, chunk, sizeof(chunk), 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return consoleClosed();
    appendWiping(m_buffer, chunk, n);
    secureZero(chunk, size_t(n));
  }
}

} // namespace gc
