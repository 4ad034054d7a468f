#include "relay/RelayConnection.h"

#include "common/StrictJson.h"
#include "common/SystemError.h"
#include "privacy/SecureBytes.h"
#include "relay/PeerCredentials.h"
#include "relay/RelayProtocol.h"
#include "relay/RelayWire.h"

#include <QDeadlineTimer>
#include <QFile>
#include <QFileInfo>
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
    return Status(Refusal::Internal, errnoText());
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

  const Outcome<relay::ToRelay> hello = readMessage(timeout);
  if (!hello) {
    closeFd();
    return Status(hello.failure());
  }
  if (const auto* refused = std::get_if<relay::Refused>(&hello.value())) {
    const std::optional<Refusal> code = refusalFromName(refused->code);
    closeFd();
    return Status(code.value_or(Refusal::McpNotAuthorized), refused->message);
  }
  const auto* h = std::get_if<relay::Hello>(&hello.value());
  if (!h || h->protocol != relay::kProtocol) {
    closeFd();
    return Status(Refusal::ProtocolMalformed, QStringLiteral("the console did not say hello"));
  }
  m_hello.run = h->run;
  m_hello.server = h->server;
  m_hello.tool = h->tool;
  m_hello.candidateIds = h->candidates;
  m_hello.expiresAt = QDateTime::fromString(h->expiresAt, Qt::ISODateWithMs);
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

  if (Status s = writeLine(relay::encode(relay::Bind{m_hello.server, m_hello.tool})); !s.ok()) {
    closeFd();
    return s;
  }
  const Outcome<relay::ToRelay> bound = readMessage(timeout);
  if (!bound || !std::holds_alternative<relay::Bound>(bound.value())) {
    const auto* refused = bound ? std::get_if<relay::Refused>(&bound.value()) : nullptr;
    const Refusal code = refused ? refusalFromName(refused->code).value_or(Refusal::McpNotAuthorized)
                         : bound ? Refusal::McpNotAuthorized
                                 : bound.code();
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
  if (Status s = writeLine(relay::encode(relay::Call{id, op, arguments})); !s.ok()) {
    closeFd();
    reply.failure = consoleClosed();
    return reply;
  }
  const Outcome<relay::ToRelay> message = readMessage(m_callTimeout);
  if (!message) {
    closeFd();
    reply.failure = message.failure();
    return reply;
  }
  if (const auto* result = std::get_if<relay::Result>(&message.value()); result && result->id == id) {
    reply.ok = true;
    reply.result = result->result;
    return reply;
  }
  if (const auto* error = std::get_if<relay::Error>(&message.value()); error && error->id == id) {
    reply.failure = Failure{refusalFromName(error->code).value_or(Refusal::Internal), error->message};
    reply.receipt = error->receipt.value_or(QJsonObject());
    return reply;
  }
  closeFd();
  const auto* refused = std::get_if<relay::Refused>(&message.value());
  reply.failure = refused
                      ? Failure{refusalFromName(refused->code).value_or(Refusal::Internal), refused->message}
                      : Failure{Refusal::ProtocolMalformed, QStringLiteral("unexpected console reply")};
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

Outcome<relay::ToRelay> RelayConnection::readMessage(std::chrono::milliseconds timeout) {
  const Outcome<QJsonObject> line = readLine(timeout);
  if (!line)
    return line.failure();
  return relay::decodeToRelay(line.value());
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
