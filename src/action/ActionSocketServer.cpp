#include "action/ActionSocketServer.h"

#include "action/ActionService.h"
#include "action/CaptureScaler.h"
#include "common/StrictJson.h"
#include "common/SystemError.h"
#include "privacy/SecureBytes.h"
#include "relay/PeerCredentials.h"
#include "relay/RelayProtocol.h"
#include "relay/RelayWire.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocalServer>
#include <QLocalSocket>
#include <QLoggingCategory>
#include <QSocketNotifier>

#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace gc {

Q_LOGGING_CATEGORY(lcActionSocket, "gc.action.socket")

namespace {

// Where the capture's base64 goes in its reply line (JSON keeps "<" and ">" as they are).
const QString kPngPlaceholder = QStringLiteral("<png>");
constexpr QByteArrayView kPngPlaceholderJson("\"<png>\"");

// Standard base64 with padding (what QByteArray::toBase64 produces), written straight into
// `out`'s reserved space: no intermediate copy of the image to wipe.
void appendBase64(QByteArray& out, QByteArrayView in) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const qsizetype at = out.size();
  out.resize(at + (in.size() + 2) / 3 * 4);
  char* o = out.data() + at;
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
  qsizetype i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    const quint32 v = quint32(p[i]) << 16 | quint32(p[i + 1]) << 8 | p[i + 2];
    *o++ = kAlphabet[v >> 18];
    *o++ = kAlphabet[(v >> 12) & 63];
    *o++ = kAlphabet[(v >> 6) & 63];
    *o++ = kAlphabet[v & 63];
  }
  if (const qsizetype rest = in.size() - i; rest > 0) {
    const quint32 v = quint32(p[i]) << 16 | (rest == 2 ? quint32(p[i + 1]) << 8 : 0);
    *o++ = kAlphabet[v >> 18];
    *o++ = kAlphabet[(v >> 12) & 63];
    *o++ = rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    *o++ = '=';
  }
}

} // namespace

ActionSocketServer::ActionSocketServer(ActionService* service, QObject* parent)
    : QObject(parent), m_service(service), m_expectedUid(::geteuid()) {}

ActionSocketServer::~ActionSocketServer() {
  stop();
}

bool ActionSocketServer::listen(const QString& path) {
  if (m_server) {
    m_error = QStringLiteral("already listening");
    return false;
  }
  const QByteArray encoded = QFile::encodeName(path);
  const QByteArray dir = QFile::encodeName(QFileInfo(path).path());
  struct stat st {};
  if (::lstat(dir.constData(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
      (st.st_mode & 0077) != 0) {
    m_error = QStringLiteral("the socket's directory is not a private directory of ours");
    return false;
  }
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (encoded.size() >= qsizetype(sizeof(address.sun_path))) {
    m_error = QStringLiteral("socket path too long");
    return false;
  }
  std::memcpy(address.sun_path, encoded.constData(), size_t(encoded.size()));
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    m_error = errnoText();
    return false;
  }
  // bind() refuses an existing path (EADDRINUSE); the 0700 directory covers the instant
  // between bind and chmod, during which only we can reach the socket anyway.
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    m_error = QStringLiteral("bind: %1").arg(errnoText());
    ::close(fd);
    return false;
  }
  if (::chmod(encoded.constData(), 0600) != 0 || ::listen(fd, 4) != 0) {
    m_error = errnoText();
    ::close(fd);
    ::unlink(encoded.constData());
    return false;
  }
  m_server = new QLocalServer(this);
  if (!m_server->listen(qintptr(fd))) {
    m_error = m_server->errorString();
    delete m_server;
    m_server = nullptr;
    ::close(fd);
    ::unlink(encoded.constData());
    return false;
  }
  m_path = path;
  connect(m_server, &QLocalServer::newConnection, this, &ActionSocketServer::onNewConnection);
  return true;
}

void ActionSocketServer::stop() {
  dropPending();
  if (m_relay) {
    QLocalSocket* relay = m_relay;
    m_relay = nullptr;
    relay->disconnect(this);
    relay->abort();
    relay->deleteLater();
  }
  if (m_server) {
    m_server->close();
    delete m_server;
    m_server = nullptr;
  }
  if (!m_path.isEmpty()) {
    ::unlink(QFile::encodeName(m_path).constData());
    m_path.clear();
  }
}

void ActionSocketServer::onNewConnection() {
  while (QLocalSocket* socket = m_server->nextPendingConnection()) {
    const std::optional<PeerCredentials::Peer> peer = PeerCredentials::of(int(socket->socketDescriptor()));
    if (!peer || peer->uid != m_expectedUid) {
      refuseSocket(socket, Refusal::McpNotAuthorized, QStringLiteral("the relay runs as another user"));
      continue;
    }
    if (m_relay) {
      refuseSocket(socket, Refusal::McpNotAuthorized,
                   QStringLiteral("another MCP relay is already connected"));
      continue;
    }
    m_relay = socket;
    m_bound = false;
    m_buffer.clear();
    connect(socket, &QLocalSocket::readyRead, this, &ActionSocketServer::onReadyRead);
    connect(socket, &QLocalSocket::disconnected, this, &ActionSocketServer::onDisconnected);
    const Grant& grant = m_service->grant();
    relay::Hello hello;
    hello.protocol = relay::kProtocol;
    hello.run = grant.runId;
    hello.server = grant.mcp.server;
    hello.tool = grant.mcp.tool;
    for (const Candidate& c : grant.candidates)
      hello.candidates << c.id;
    hello.expiresAt = grant.expiresAt.toUTC().toString(Qt::ISODateWithMs);
    writeLine(socket, relay::encode(hello));
  }
}

void ActionSocketServer::onReadyRead() {
  QLocalSocket* socket = m_relay;
  if (!socket)
    return;
  while (socket == m_relay && socket->bytesAvailable() > 0) {
    m_buffer += socket->readAll();
    qsizetype newline;
    while (m_relay == socket && (newline = m_buffer.indexOf('\n')) >= 0) {
      const QByteArray line = m_buffer.left(newline);
      m_buffer.remove(0, newline + 1);
      handleLine(line);
    }
    if (m_relay == socket && m_buffer.size() > relay::kMaxRequestBytes) {
      refuseSocket(socket, Refusal::ProtocolOversize, QStringLiteral("relay line too large"));
      return;
    }
  }
}

void ActionSocketServer::onDisconnected() {
  auto* socket = qobject_cast<QLocalSocket*>(sender());
  if (!socket || socket != m_relay)
    return;
  dropPending();
  m_relay = nullptr;
  m_bound = false;
  m_buffer.clear();
  socket->deleteLater();
  emit relayGone();
}

void ActionSocketServer::handleLine(const QByteArray& line) {
  const Outcome<QJsonObject> parsed = StrictJson::parseObject(line, relay::kMaxRequestBytes);
  if (!parsed) {
    refuseSocket(m_relay, parsed.code(), QStringLiteral("relay line is not protocol JSON"));
    return;
  }
  const Outcome<relay::FromRelay> message = relay::decodeFromRelay(parsed.value());
  if (!m_bound) {
    const Grant& grant = m_service->grant();
    const auto* bind = message.ok() ? std::get_if<relay::Bind>(&message.value()) : nullptr;
    if (!bind || bind->server != grant.mcp.server || bind->tool != grant.mcp.tool ||
        grant.mcp.tool != relay::kActionTool) {
      refuseSocket(m_relay, Refusal::McpNotAuthorized,
                   QStringLiteral("the relay does not serve the grant's MCP server and tool"));
      return;
    }
    m_bound = true;
    writeLine(m_relay, relay::encode(relay::Bound{}));
    emit relayBound();
    return;
  }
  if (!message.ok()) {
    refuseSocket(m_relay, message.code(),
                 message.code() == Refusal::ProtocolUnknownType ? QStringLiteral("unexpected relay message")
                                                                : QStringLiteral("malformed relay call"));
    return;
  }
  const auto* call = std::get_if<relay::Call>(&message.value());
  if (!call) {
    refuseSocket(m_relay, Refusal::ProtocolUnknownType, QStringLiteral("unexpected relay message"));
    return;
  }
  handleCall(*call);
}

void ActionSocketServer::handleCall(const relay::Call& call) {
  const qint64 id = call.id;
  const QString op = call.op;
  QPointer<QLocalSocket> relay = m_relay;
  auto reply = [this, relay](const QJsonObject& answer) {
    if (relay)
      writeLine(relay, answer);
  };
  if (Status admitted = m_service->admit(op); !admitted.ok())
    return reply(errorReply(id, admitted.failure()));
  if (op == relay::kOpLock || op == relay::kOpCapture || op == relay::kOpZoom) {
    // A lock's guest sync runs asynchronously in READ_ONLY: request_lock answers, and a
    // capture is taken, only once it has ended (capture started, or why not); a capture then
    // waits for the picture to settle.
    if (op == relay::kOpLock) {
      if (Status locked = m_service->requestLock(); !locked.ok())
        return reply(errorReply(id, locked.failure()));
    }
    const QJsonObject args = call.arguments;
    ActionService* const service = m_service;
    service->whenLockSettled([this, service, op, args, id, reply](const Status& settled) {
      if (op == relay::kOpLock && !settled.ok())
        return reply(errorReply(id, settled.failure()));
      if (op == relay::kOpCapture || op == relay::kOpZoom) {
        const QPointer<ActionSocketServer> self(this);
        return service->whenPictureSettled([self, op, args, id] {
          if (self)
            self->replyWithCapture(id, op, args);
        });
      }
      reply(dispatch(QString(kSettledLock), args, id));
    });
    return;
  }
  reply(dispatch(op, call.arguments, id));
}

QJsonObject ActionSocketServer::errorReply(qint64 id, const Failure& failure,
                                           std::optional<QJsonObject> receipt) {
  return relay::encode(relay::Error{id, refusalName(failure.code), failure.message, std::move(receipt)});
}

QJsonObject ActionSocketServer::dispatch(const QString& op, const QJsonObject& arguments, qint64 id) {
  auto ok = [id](const QJsonObject& result) { return relay::encode(relay::Result{id, result}); };
  auto error = [id](const Failure& failure) { return errorReply(id, failure); };
  if (op == relay::kOpStatus)
    return ok(m_service->status());
  if (op == relay::kOpPerform) {
    const Outcome<Receipt> receipt = m_service->performAction(arguments);
    if (!receipt)
      return error(receipt.failure());
    if (receipt->result == Receipt::Result::Failed)
      return errorReply(id, receipt->failure.value_or(Failure{Refusal::InputSendFailed, QString()}),
                        receipt->toJson());
    return ok(receipt->toJson());
  }
  if (op == kSettledLock) // request_lock, answered once the lock's guest sync has ended
    return ok(m_service->status());
  return error(Failure{Refusal::RouteForbidden, QStringLiteral("unknown operation")});
}

void ActionSocketServer::replyWithCapture(qint64 id, const QString& op, const QJsonObject& arguments) {
  const bool zoom = op == relay::kOpZoom;
  Outcome<ActionService::Capture> capture =
      zoom ? m_service->zoomDesktop(arguments) : m_service->captureDesktop();
  if (!m_relay)
    return;
  if (!capture) {
    writeLine(m_relay, errorReply(id, capture.failure()));
    return;
  }
  // The reply's JSON is built around a placeholder and the base64 is written into the one
  // line buffer, sized exactly: QJsonDocument and toBase64 would each keep a copy we cannot
  // wipe (QJsonValue's storage is not reachable).
  ActionService::Capture& c = capture.value();
  QJsonObject result{{QStringLiteral("png"), kPngPlaceholder},
                     {QStringLiteral("width"), c.width},
                     {QStringLiteral("height"), c.height},
                     {QStringLiteral("sha256"), QString::fromLatin1(c.sha256Hex)},
                     {QStringLiteral("lock_confirmation"), c.lockConfirmation}};
  if (zoom) {
    const QRect& r = c.requested;
    const QRect& d = c.region;
    result.insert(QStringLiteral("region"), QJsonArray{r.left(), r.top(), r.right() + 1, r.bottom() + 1});
    result.insert(QStringLiteral("desktop_region"),
                  QJsonArray{d.left(), d.top(), d.right() + 1, d.bottom() + 1});
  } else {
    result.insert(QStringLiteral("scale"),
                  QJsonObject{{QStringLiteral("from"), QJsonArray{c.from.width(), c.from.height()}},
                              {QStringLiteral("to"), QJsonArray{c.width, c.height}},
                              {QStringLiteral("filter"), QLatin1StringView(CaptureScaler::kFilter)}});
  }
  const QJsonObject reply = relay::encode(relay::Result{id, result});
  const QByteArray frame = QJsonDocument(reply).toJson(QJsonDocument::Compact);
  const qsizetype at = frame.indexOf(kPngPlaceholderJson);
  QByteArray line;
  line.reserve(frame.size() + (c.png.size() + 2) / 3 * 4 + 1);
  line.append(frame.constData(), at + 1); // through the opening quote
  appendBase64(line, c.png);
  const qsizetype tail = at + kPngPlaceholderJson.size() - 1; // the closing quote on
  line.append(frame.constData() + tail, frame.size() - tail);
  line.append('\n');
  ++m_wiped.captures;
  const qsizetype pngBytes = c.png.size();
  const qsizetype zeroed = secureWipe(c.png);
  m_wiped.bytes += zeroed;
  m_wiped.unwiped += zeroed == 0 ? pngBytes : 0;
  sendToRelay(std::move(line));
}

void ActionSocketServer::writeLine(QLocalSocket* socket, const QJsonObject& message) {
  QByteArray line = QJsonDocument(message).toJson(QJsonDocument::Compact);
  line += '\n';
  if (socket == m_relay) {
    sendToRelay(std::move(line));
    return;
  }
  socket->write(line);
  socket->flush();
}

void ActionSocketServer::sendToRelay(QByteArray line) {
  if (!m_relay) {
    m_wiped.bytes += secureWipe(line);
    return;
  }
  if (m_pending.isEmpty()) {
    m_pending = std::move(line);
    m_pendingAt = 0;
  } else {
    appendWiping(m_pending, line.constData(), line.size());
    m_wiped.bytes += secureWipe(line);
  }
  flushPending();
}

void ActionSocketServer::flushPending() {
  if (!m_relay)
    return dropPending();
  const int fd = int(m_relay->socketDescriptor());
  while (m_pendingAt < m_pending.size()) {
    const ssize_t n = ::send(fd, m_pending.constData() + m_pendingAt, size_t(m_pending.size() - m_pendingAt),
                             MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      m_pendingAt += n;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!m_writable) {
        m_writable = new QSocketNotifier(fd, QSocketNotifier::Write, this);
        connect(m_writable, &QSocketNotifier::activated, this, &ActionSocketServer::flushPending);
      }
      m_writable->setEnabled(true);
      return;
    } else {
      qCInfo(lcActionSocket) << "relay write failed:" << errnoText();
      break; // the relay is gone; its disconnect follows
    }
  }
  dropPending();
}

void ActionSocketServer::dropPending() {
  if (m_writable) {
    m_writable->setEnabled(false);
    m_writable->deleteLater();
    m_writable = nullptr;
  }
  const qsizetype size = m_pending.size();
  const qsizetype zeroed = secureWipe(m_pending);
  m_wiped.bytes += zeroed;
  m_wiped.unwiped += zeroed == 0 ? size : 0;
  m_pendingAt = 0;
}

void ActionSocketServer::refuseSocket(QLocalSocket* socket, Refusal code, const QString& message) {
  ++m_refusals[code];
  qCInfo(lcActionSocket) << "refused relay:" << refusalName(code) << message;
  emit refused(code, message);
  if (!socket)
    return;
  writeLine(socket, relay::encode(relay::Refused{refusalName(code), message}));
  const bool wasRelay = socket == m_relay;
  if (wasRelay) {
    dropPending();
    m_relay = nullptr;
    m_bound = false;
    m_buffer.clear();
  }
  socket->disconnect(this);
  socket->disconnectFromServer();
  socket->deleteLater();
  if (wasRelay)
    emit relayGone();
}

} // namespace gc
