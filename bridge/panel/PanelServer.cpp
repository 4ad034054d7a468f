#include "bridge/panel/PanelServer.h"

#include "bridge/panel/LoopbackPeer.h"
#include "common/DescriptorReserve.h"

#include <QElapsedTimer>
#include <QLoggingCategory>
#include <QTcpServer>
#include <QTcpSocket>
#include <QWebSocket>
#include <QWebSocketCorsAuthenticator>
#include <QWebSocketServer>

#include <openssl/crypto.h>

#include <algorithm>
#include <unistd.h>
#include <utility>

namespace gc {

Q_LOGGING_CATEGORY(lcPanel, "gc.panel")

namespace {

qint64 monotonicMs() {
  static QElapsedTimer clock = [] {
    QElapsedTimer t;
    t.start();
    return t;
  }();
  return clock.elapsed();
}

// Hard cap on what Qt buffers for one incoming message. Between the protocol limit and this
// cap a message is refused with PROTOCOL_OVERSIZE; beyond it Qt drops the connection.
constexpr qint64 kTransportCapBytes = 64 * 1024;

} // namespace

PanelServer::PanelServer(PanelPolicy policy, QObject* parent)
    : QObject(parent), m_policy(std::move(policy)),
      // No server name: the handshake does not announce the product to whoever connects.
      m_server(new QWebSocketServer(QString(), QWebSocketServer::NonSecureMode, this)),
      m_tcp(new QTcpServer(this)) {
  connect(m_tcp, &QTcpServer::newConnection, this, &PanelServer::onTcpConnection);
  connect(m_tcp, &QTcpServer::acceptError, this, &PanelServer::onAcceptError);
  // Handshaken sockets are taken at once (onNewConnection); the bound that matters is ours.
  m_server->setMaxPendingConnections(std::max(1, m_policy.maxPendingPanels));
  // A TCP connection that never completes the WebSocket handshake is dropped as fast as one
  // that never says hello.
  m_server->setHandshakeTimeout(std::max(1, m_policy.helloDeadlineMs));
  connect(m_server, &QWebSocketServer::newConnection, this, &PanelServer::onNewConnection);
  // Refuse a foreign Origin in the handshake itself: the socket never opens.
  connect(m_server, &QWebSocketServer::originAuthenticationRequired, this,
          [this](QWebSocketCorsAuthenticator* auth) {
            const bool ok = m_policy.originAllowed(auth->origin());
            auth->setAllowed(ok);
            if (!ok) {
              ++m_refusals[Refusal::PanelOrigin];
              emit refused(Refusal::PanelOrigin, QStringLiteral("origin not allowed"));
            }
          });
}

PanelServer::~PanelServer() {
  stop();
}

bool PanelServer::listen() {
  // A deep accept queue (Qt's default is 50; the kernel caps it at net.core.somaxconn): while
  // another uid floods the port with connect/close, the genuine panel's SYN is queued behind
  // theirs (each sorted out within microseconds) instead of dropped and retried seconds later.
  m_tcp->setListenBacklogSize(4096);
  if (!m_tcp->listen(QHostAddress::LocalHost, 0)) {
    m_error = m_tcp->errorString();
    return false;
  }
  return true;
}

quint16 PanelServer::port() const {
  return m_tcp->serverPort();
}

int PanelServer::handshakingCount() const {
  return int(std::count_if(m_handshaking.cbegin(), m_handshaking.cend(), [](const Handshaking& h) {
    return h.socket && h.socket->state() == QAbstractSocket::ConnectedState;
  }));
}

void PanelServer::onTcpConnection() {
  while (QTcpSocket* tcp = m_tcp->nextPendingConnection()) {
    // Whose process is connecting: asked of the kernel for this one socket, bounded.
    const Outcome<uid_t> uid =
        LoopbackPeer::uidOf(tcp->peerAddress(), tcp->peerPort(), tcp->localAddress(), tcp->localPort());
    if (!uid.ok()) {
      ++m_refusals[Refusal::PanelPeerUnknown];
      emit refused(Refusal::PanelPeerUnknown, uid.failure().message);
      qCInfo(lcPanel) << "refused connection:" << refusalName(Refusal::PanelPeerUnknown)
                      << uid.failure().message;
      tcp->abort();
      tcp->deleteLater();
      continue;
    }
    const bool foreign = *uid != ::geteuid();
    m_handshaking.removeIf([](const Handshaking& h) {
      return !h.socket || h.socket->state() != QAbstractSocket::ConnectedState;
    });
    if (m_handshaking.size() >= kMaxHandshaking) {
      QList<bool> ranks;
      for (const Handshaking& h : std::as_const(m_handshaking))
        ranks.append(h.foreign);
      const int victim = pickEviction(ranks, foreign);
      const QString message =
          QStringLiteral("%1 connections are in the WebSocket handshake").arg(m_handshaking.size());
      ++m_refusals[Refusal::PanelBusy];
      emit refused(Refusal::PanelBusy, message);
      if (victim < 0) {
        tcp->abort();
        tcp->deleteLater();
        continue;
      }
      QTcpSocket* old = m_handshaking.takeAt(victim).socket;
      old->abort(); // QWebSocketServer lets go of it on disconnected
      old->deleteLater();
    }
    m_handshaking.append(Handshaking{tcp, tcp->peerPort(), foreign});
    // No Nagle: the panel's messages are small and come in runs (drained, then two phases; an
    // ack after a frame). With it, each write after the first waits for the ACK of the one
    // before, which the peer delays by up to 40 ms: measured as 40 ms from lock to CAPTURING.
    tcp->setSocketOption(QAbstractSocket::LowDelayOption, 1);
    m_server->handleConnection(tcp);
  }
  // Whatever the accept loop borrowed from the reserve is free again once excess is closed.
  DescriptorReserve::replenish();
}

// EMFILE/ENFILE: Qt pauses accepting. One reserved descriptor goes back to the process so the
// backlog is accepted and sorted (another user's excess closed at once), then accepting resumes.
void PanelServer::onAcceptError() {
  const bool released = DescriptorReserve::release();
  qCWarning(lcPanel) << "accept failed:" << m_tcp->errorString()
                     << (released ? "(a reserved descriptor was released)" : "");
  ++m_refusals[Refusal::ResourceExhausted];
  emit refused(Refusal::ResourceExhausted, QStringLiteral("accept: %1").arg(m_tcp->errorString()));
  // Not at once: with nothing left to release, a busy loop on the listening socket would follow.
  QTimer::singleShot(released ? 0 : 100, m_tcp, [tcp = m_tcp] { tcp->resumeAccepting(); });
}

void PanelServer::stop() {
  if (m_panel) {
    m_panel->disconnect(this);
    m_panel->abort();
    m_panel->deleteLater();
  }
  m_foreign.clear();
  for (const Handshaking& h : std::exchange(m_handshaking, {})) {
    if (h.socket) {
      h.socket->abort();
      h.socket->deleteLater();
    }
  }
  for (QWebSocket* socket : std::exchange(m_pending, {})) {
    socket->disconnect(this);
    socket->abort();
    socket->deleteLater();
  }
  m_tcp->close();
  m_server->close();
}

void PanelServer::refuseSocket(QWebSocket* socket, Refusal code, const QString& message) {
  ++m_refusals[code];
  emit refused(code, message);
  qCInfo(lcPanel) << "refused connection:" << refusalName(code) << message;
  socket->sendTextMessage(QString::fromUtf8(panel::error(code, message)));
  socket->close(QWebSocketProtocol::CloseCodePolicyViolated, refusalName(code));
  socket->deleteLater();
}

int PanelServer::pickEviction(const QList<bool>& pendingForeign, bool newcomerForeign) {
  const qsizetype oldestForeign = pendingForeign.indexOf(true);
  if (oldestForeign >= 0)
    return int(oldestForeign);
  if (newcomerForeign || pendingForeign.isEmpty())
    return -1;
  return 0;
}

void PanelServer::refusePending(QWebSocket* socket, Refusal code, const QString& message) {
  m_pending.removeOne(socket);
  m_foreign.remove(socket);
  socket->disconnect(this); // nothing it still sends is looked at
  refuseSocket(socket, code, message);
}

void PanelServer::onNewConnection() {
  while (QWebSocket* socket = m_server->nextPendingConnection()) {
    // Whose process is connecting (asked at accept): another user's can never push one of ours out.
    bool foreign = true;
    for (qsizetype i = 0; i < m_handshaking.size(); ++i) {
      if (m_handshaking.at(i).peerPort == socket->peerPort()) {
        foreign = m_handshaking.takeAt(i).foreign;
        break;
      }
    }
    if (m_panel || m_used) {
      refuseSocket(socket, Refusal::PanelBusy, QStringLiteral("this console already has its panel"));
      continue;
    }
    // Defence in depth: the handshake already checked it.
    if (!m_policy.originAllowed(socket->origin())) {
      refuseSocket(socket, Refusal::PanelOrigin, QStringLiteral("origin not allowed"));
      continue;
    }
    if (m_pending.size() >= std::max(1, m_policy.maxPendingPanels)) {
      QList<bool> ranks;
      for (QWebSocket* p : std::as_const(m_pending))
        ranks.append(m_foreign.contains(p));
      const int victim = pickEviction(ranks, foreign);
      if (victim < 0) {
        refuseSocket(socket, Refusal::PanelBusy,
                     QStringLiteral("%1 connections of this user await hello").arg(m_pending.size()));
        continue;
      }
      refusePending(m_pending.at(victim), Refusal::PanelBusy,
                    QStringLiteral("%1 connections were awaiting hello: the oldest%2 was closed")
                        .arg(m_pending.size())
                        .arg(ranks.at(victim) ? QStringLiteral(" of another user") : QString()));
    }
    socket->setMaxAllowedIncomingMessageSize(kTransportCapBytes);
    socket->setMaxAllowedIncomingFrameSize(kTransportCapBytes);
    connect(socket, &QWebSocket::textMessageReceived, this, &PanelServer::onText);
    connect(socket, &QWebSocket::binaryMessageReceived, this, &PanelServer::onBinary);
    connect(socket, &QWebSocket::disconnected, this, &PanelServer::onDisconnected);
    // Its own deadline: a child of the socket, gone with it.
    auto* deadline = new QTimer(socket);
    deadline->setSingleShot(true);
    connect(deadline, &QTimer::timeout, this, [this, socket] {
      if (m_pending.contains(socket))
        refusePending(socket, Refusal::PanelTimeout, QStringLiteral("no hello within the deadline"));
    });
    deadline->start(m_policy.helloDeadlineMs);
    m_pending.append(socket);
    if (foreign)
      m_foreign.insert(socket);
  }
}

void PanelServer::refuse(Refusal code, const QString& message, bool closeSocket) {
  ++m_refusals[code];
  emit refused(code, message);
  if (!m_panel)
    return;
  m_panel->sendTextMessage(QString::fromUtf8(panel::error(code, message)));
  if (closeSocket)
    m_panel->close(QWebSocketProtocol::CloseCodePolicyViolated, refusalName(code));
}

bool PanelServer::takeToken() {
  const qint64 now = monotonicMs();
  const double rate = m_policy.maxMessagesPerSecond;
  m_tokens = std::min(rate, m_tokens + double(now - m_lastRefillMs) * rate / 1000.0);
  m_lastRefillMs = now;
  if (m_tokens < 1.0)
    return false;
  m_tokens -= 1.0;
  return true;
}

void PanelServer::onPendingText(QWebSocket* socket, const QString& text) {
  // One message decides a pending connection: it is a valid hello or the socket is closed.
  const Outcome<panel::Message> message = panel::parse(text.toUtf8());
  if (!message.ok() || !std::holds_alternative<panel::Hello>(message.value())) {
    refusePending(socket, Refusal::PanelUnauthorized, QStringLiteral("the first message must be hello"));
    return;
  }
  handleHello(socket, std::get<panel::Hello>(message.value()));
}

void PanelServer::onText(const QString& text) {
  auto* socket = qobject_cast<QWebSocket*>(sender());
  if (socket && m_pending.contains(socket))
    return onPendingText(socket, text);
  if (!socket || socket != m_panel)
    return;
  if (!takeToken()) {
    // Count every dropped message; tell the panel at most once a second.
    ++m_refusals[Refusal::Flood];
    const qint64 now = monotonicMs();
    if (now - m_lastFloodReportMs >= 1000) {
      m_lastFloodReportMs = now;
      emit refused(Refusal::Flood,
                   QStringLiteral("message rate above %1/s").arg(m_policy.maxMessagesPerSecond));
      m_panel->sendTextMessage(QString::fromUtf8(panel::error(Refusal::Flood, QStringLiteral("slow down"))));
    }
    return;
  }
  const QByteArray bytes = text.toUtf8();
  const Outcome<panel::Message> message = panel::parse(bytes);
  if (!message.ok()) {
    refuse(message.code(), message.failure().message, false);
    return;
  }
  std::visit(
      [this](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, panel::Hello>)
          refuse(Refusal::ProtocolMalformed, QStringLiteral("hello was already said"), false);
        else if constexpr (std::is_same_v<T, panel::Key>)
          emit keyReceived(m);
        else if constexpr (std::is_same_v<T, panel::Pointer>)
          emit pointerReceived(m);
        else if constexpr (std::is_same_v<T, panel::FrameAck>)
          emit frameAcked(m.frame);
        else if constexpr (std::is_same_v<T, panel::FrameRefresh>)
          emit frameRefreshRequested(m.frame);
        else if constexpr (std::is_same_v<T, panel::Lock>)
          emit lockRequested();
        else if constexpr (std::is_same_v<T, panel::Close>)
          emit closeRequested();
      },
      message.value());
}

void PanelServer::handleHello(QWebSocket* socket, const panel::Hello& hello) {
  const bool capabilityOk =
      hello.capability.size() == m_policy.capability.size() && m_policy.capability.size() == 32 &&
      CRYPTO_memcmp(hello.capability.constData(), m_policy.capability.constData(), 32) == 0;
  if (!capabilityOk) {
    refusePending(socket, Refusal::PanelUnauthorized, QStringLiteral("wrong capability"));
    return;
  }
  if (hello.run != m_policy.run || hello.task != m_policy.task) {
    refusePending(socket, Refusal::PanelMismatch, QStringLiteral("run or task differ from the grant"));
    return;
  }
  for (auto it = hello.panel.begin(); it != hello.panel.end(); ++it) {
    if (m_policy.panelMetadata.value(it.key()) != it.value()) {
      refusePending(socket, Refusal::PanelMismatch, QStringLiteral("panel metadata differ from the grant"));
      return;
    }
  }
  m_pending.removeOne(socket);
  m_foreign.remove(socket);
  qDeleteAll(socket->findChildren<QTimer*>(Qt::FindDirectChildrenOnly)); // its hello deadline
  m_panel = socket;
  m_authorized = true;
  m_used = true;
  m_tokens = m_policy.maxMessagesPerSecond;
  m_lastRefillMs = monotonicMs();
  // The slot is taken: whoever else is still waiting to say hello is turned away.
  while (!m_pending.isEmpty())
    refusePending(m_pending.constFirst(), Refusal::PanelBusy,
                  QStringLiteral("another panel said hello first"));
  qCInfo(lcPanel) << "panel authorized:" << hello.clientKind << hello.clientVersion;
  emit panelAuthorized(hello);
}

void PanelServer::onBinary(const QByteArray& data) {
  Q_UNUSED(data);
  auto* socket = qobject_cast<QWebSocket*>(sender());
  if (socket && m_pending.contains(socket)) {
    refusePending(socket, Refusal::PanelUnauthorized, QStringLiteral("the first message must be hello"));
    return;
  }
  if (!socket || socket != m_panel)
    return;
  refuse(Refusal::ProtocolBinary, QStringLiteral("the panel sends text messages only"), false);
}

void PanelServer::onDisconnected() {
  auto* socket = qobject_cast<QWebSocket*>(sender());
  if (!socket)
    return;
  const bool pending = m_pending.removeOne(socket);
  m_foreign.remove(socket);
  if (!pending && socket != m_panel)
    return;
  if (socket->closeCode() == QWebSocketProtocol::CloseCodeTooMuchData) {
    ++m_refusals[Refusal::ProtocolOversize];
    emit refused(Refusal::ProtocolOversize, QStringLiteral("message over the transport cap"));
  }
  if (pending) {
    socket->deleteLater();
    return;
  }
  const bool wasAuthorized = m_authorized;
  m_panel = nullptr;
  m_authorized = false;
  socket->deleteLater();
  if (wasAuthorized)
    emit panelGone();
}

void PanelServer::sendText(const QByteArray& message) {
  if (hasPanel())
    m_panel->sendTextMessage(QString::fromUtf8(message));
}

void PanelServer::flush() {
  if (hasPanel())
    m_panel->flush();
}

void PanelServer::sendBinary(const QByteArray& packet) {
  if (hasPanel())
    m_panel->sendBinaryMessage(packet);
}

void PanelServer::closePanel(const QString& reason) {
  if (!m_panel)
    return;
  m_panel->sendTextMessage(QString::fromUtf8(panel::bye(reason)));
  m_panel->flush();
  m_panel->close(QWebSocketProtocol::CloseCodeNormal, reason.left(100));
}

} // namespace gc
