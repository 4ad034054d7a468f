#include "widgets/ConsoleClient.h"

#include "bridge/frames/FrameReader.h"
#include "bridge/panel/PanelMessage.h"

#include <QJsonDocument>
#include <QLoggingCategory>
#include <QUrl>
#include <QtConcurrent/QtConcurrentRun>

#include <cstdlib>

namespace gc {

Q_LOGGING_CATEGORY(lcViewer, "gc.viewer")

namespace {

// A full 8192x8192 PNG frame stays below this; anything larger is not a frame we sent.
constexpr qint64 kMaxBinaryMessageBytes = 256 * 1024 * 1024;

void wipe(QByteArray& bytes) {
  bytes.fill('\0');
  bytes.clear();
}

ConsoleClient::Decoded decode(const QByteArray& packet, const QImage& previous) {
  ConsoleClient::Decoded result;
  const Outcome<FrameReader> update = FrameReader::parse(packet);
  if (!update.ok()) {
    // Acknowledged too when its id is readable (protocol rule), so flow control goes on.
    if (const auto id = FrameReader::peekFrameId(packet)) {
      result.parsed = true;
      result.frameId = *id;
    }
    result.error = update.failure().message;
    return result;
  }
  result.parsed = true;
  result.frameId = update->frameId();
  Outcome<QImage> frame = update->apply(previous);
  if (frame.ok())
    result.frame = std::move(frame).value();
  else
    result.error = frame.failure().message;
  return result;
}

} // namespace

ConsoleClient::ConsoleClient(QObject* parent)
    : QObject(parent), m_socket(QString(), QWebSocketProtocol::VersionLatest) {
  m_socket.setMaxAllowedIncomingMessageSize(kMaxBinaryMessageBytes);
  m_socket.setMaxAllowedIncomingFrameSize(kMaxBinaryMessageBytes);
  connect(&m_socket, &QWebSocket::connected, this, &ConsoleClient::onConnected);
  connect(&m_socket, &QWebSocket::textMessageReceived, this, &ConsoleClient::onText);
  connect(&m_socket, &QWebSocket::binaryMessageReceived, this, &ConsoleClient::onBinary);
  connect(&m_socket, &QWebSocket::disconnected, this, &ConsoleClient::onDisconnected);
  connect(&m_socket, qOverload<QAbstractSocket::SocketError>(&QWebSocket::error), this,
          [this](QAbstractSocket::SocketError) {
            if (m_socket.state() == QAbstractSocket::UnconnectedState)
              finish(m_socket.errorString());
          });
  connect(&m_decode, &QFutureWatcher<Decoded>::finished, this, &ConsoleClient::onDecoded);
}

ConsoleClient::~ConsoleClient() {
  m_socket.disconnect(this);
  m_decode.disconnect(this);
  m_decode.waitForFinished();
  m_socket.abort();
  wipeCapability();
}

void ConsoleClient::open(Options options) {
  if (m_opened)
    return;
  m_opened = true;
  m_options = std::move(options);
  // A QUrl with nothing but host and port: the capability never goes near it.
  QUrl url;
  url.setScheme(QStringLiteral("ws"));
  url.setHost(QStringLiteral("127.0.0.1"));
  url.setPort(m_options.port);
  m_socket.open(url);
}

bool ConsoleClient::isInputOpen() const {
  return !m_closed && m_phase == QLatin1String("SETUP") &&
         m_socket.state() == QAbstractSocket::ConnectedState;
}

void ConsoleClient::wipeCapability() {
  wipe(m_options.capabilityHex);
}

void ConsoleClient::sendMessage(QByteArray out) {
  QString text = QString::fromUtf8(out);
  m_socket.sendTextMessage(text);
  // The hello carries the capability: leave no copy of ours behind (Qt's own frame buffer
  // is out of reach).
  wipe(out);
  text.fill(QChar(u'\0'));
}

void ConsoleClient::onConnected() {
  panel::HelloFields hello{m_options.run,
                           m_options.task,
                           m_options.capabilityHex,
                           QStringLiteral("qt-viewer"),
                           m_options.clientVersion,
                           m_options.panel,
                           // The view applies copy records from its own canvas (FrameReader).
                           {QString::fromLatin1(panel::kFeatureCopyRect)}};
  sendMessage(panel::hello(hello));
  wipe(hello.capabilityHex);
  wipeCapability();
}

void ConsoleClient::onText(const QString& text) {
  if (m_closed)
    return;
  const Outcome<panel::ConsoleMessage> message = panel::parseConsoleMessage(text.toUtf8());
  if (!message.ok()) {
    // Protocol drift is loud in a debugging viewer: stop rather than guess.
    finish(refusalName(message.code()) + QStringLiteral(": console sent ") + message.failure().message);
    return;
  }
  handle(message.value());
}

void ConsoleClient::handle(const panel::ConsoleMessage& message) {
  if (const auto* w = std::get_if<panel::Welcome>(&message)) {
    m_welcome = *w;
    m_welcomed = true;
    emit welcomed(m_welcome);
    setPhase(w->phase, QString());
  } else if (const auto* p = std::get_if<panel::PhaseChange>(&message)) {
    setPhase(p->phase, p->reason);
  } else if (const auto* a = std::get_if<panel::InputAck>(&message)) {
    if (a->upto > m_acked) {
      m_acked = a->upto;
      emit countersChanged();
    }
  } else if (std::holds_alternative<panel::InputRefused>(message)) {
    ++m_refused;
    emit countersChanged();
  } else if (const auto* d = std::get_if<panel::Drained>(&message)) {
    emit drained(d->upto);
  } else if (const auto* e = std::get_if<panel::ConsoleError>(&message)) {
    m_lastError = e->code + QStringLiteral(": ") + e->message;
    emit consoleError(e->code, e->message);
  } else if (const auto* b = std::get_if<panel::Bye>(&message)) {
    m_byeReason = b->reason;
    finish(b->reason);
  }
}

void ConsoleClient::setPhase(const QString& phase, const QString& reason) {
  if (m_closed || phase == m_phase)
    return;
  if (phase == QLatin1String("CLOSED")) {
    finish(reason.isEmpty() ? QStringLiteral("the console closed") : reason);
    return;
  }
  m_phase = phase;
  emit phaseChanged(m_phase, reason);
}

bool ConsoleClient::sendKey(quint16 scancode, bool down) {
  if (!isInputOpen())
    return false;
  sendMessage(panel::key(++m_seq, scancode, down));
  return true;
}

bool ConsoleClient::sendPointer(QPoint desktop, quint8 buttons, qint16 wheel) {
  if (!isInputOpen() || desktop.x() < 0 || desktop.y() < 0 || desktop.x() > 0xFFFF || desktop.y() > 0xFFFF ||
      std::abs(int(wheel)) > 255 || buttons > 7)
    return false;
  sendMessage(panel::pointer(++m_seq, quint16(desktop.x()), quint16(desktop.y()), buttons, wheel));
  return true;
}

bool ConsoleClient::requestLock() {
  if (!isInputOpen())
    return false;
  sendMessage(panel::lock());
  return true;
}

void ConsoleClient::requestClose() {
  if (m_closed)
    return;
  if (m_socket.state() == QAbstractSocket::ConnectedState) {
    sendMessage(panel::close());
    m_socket.flush();
  }
  finish(QStringLiteral("closed by the viewer"));
}

void ConsoleClient::onBinary(const QByteArray& packet) {
  if (m_closed)
    return;
  // A console honours flow control (at most kMaxUnackedFrames unacknowledged); one that does
  // not would grow this queue without bound.
  if (m_packets.size() >= 2 * panel::kMaxUnackedFrames) {
    finish(QStringLiteral("PROTOCOL_MALFORMED: console sent frames beyond flow control"));
    return;
  }
  m_packets.enqueue(packet);
  decodeNext();
}

void ConsoleClient::decodeNext() {
  if (m_decoding || m_packets.isEmpty() || m_closed)
    return;
  m_decoding = true;
  m_decode.setFuture(QtConcurrent::run(decode, m_packets.dequeue(), m_front));
}

void ConsoleClient::onDecoded() {
  m_decoding = false;
  const Decoded result = m_decode.result();
  if (m_closed)
    return;
  if (!result.frame.isNull()) {
    m_front = result.frame;
    ++m_framesPresented;
    emit frameReady(m_front, result.frameId);
  } else {
    ++m_framesDropped;
    qCWarning(lcViewer) << "frame dropped:" << result.error;
    emit frameDropped(result.error);
  }
  if (result.parsed)
    sendMessage(panel::frameAck(result.frameId));
  // The picture may now be stale: ask for the whole desktop (0 when the id was unreadable).
  if (result.frame.isNull())
    sendMessage(panel::frameRefresh(result.parsed ? result.frameId : 0));
  emit countersChanged();
  decodeNext();
}

void ConsoleClient::onDisconnected() {
  QString reason = m_byeReason;
  if (reason.isEmpty())
    reason = m_lastError;
  if (reason.isEmpty())
    reason = m_socket.closeReason();
  if (reason.isEmpty())
    reason = QStringLiteral("connection to the console closed");
  finish(reason);
}

void ConsoleClient::finish(const QString& reason) {
  if (m_closed)
    return;
  m_closed = true;
  m_closeReason = reason;
  m_phase = QStringLiteral("CLOSED");
  m_packets.clear();
  m_front = QImage(); // nothing of the guest is kept after the close
  wipeCapability();
  if (m_socket.state() != QAbstractSocket::UnconnectedState)
    m_socket.close(QWebSocketProtocol::CloseCodeNormal);
  emit phaseChanged(m_phase, reason);
  emit closed(reason);
}

} // namespace gc
