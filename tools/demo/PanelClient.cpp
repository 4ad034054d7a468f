#include "tools/demo/PanelClient.h"

#include "bridge/frames/FrameReader.h"
#include "bridge/panel/PanelMessage.h"

#include <QJsonDocument>
#include <QUrl>

namespace gc::tools {

PanelClient::PanelClient(QObject* parent) : QObject(parent) {
  connect(&m_socket, &QWebSocket::connected, this, [this] {
    // The capability travels in the first message only, never in the URL.
    panel::HelloFields hello{
        m_run, m_task, m_capability.toLatin1(), QStringLiteral("demo"), QStringLiteral("1"), {}, {}};
    send(panel::hello(hello));
    hello.capabilityHex.fill('\0');
    m_capability.fill(QLatin1Char('0'));
  });
  connect(&m_socket, &QWebSocket::textMessageReceived, this, &PanelClient::onText);
  connect(&m_socket, &QWebSocket::binaryMessageReceived, this, &PanelClient::onBinary);
  connect(&m_socket, &QWebSocket::disconnected, this, [this] { m_closed = true; });
}

void PanelClient::open(quint16 port, const QString& run, const QString& task, const QString& capability) {
  m_run = run;
  m_task = task;
  m_capability = capability;
  m_socket.open(QUrl(QStringLiteral("ws://127.0.0.1:%1").arg(port)));
}

quint64 PanelClient::sendKey(quint16 scancode, bool down) {
  const quint64 seq = ++m_seq;
  send(panel::key(seq, scancode, down));
  ++m_counts.sent;
  return seq;
}

quint64 PanelClient::sendPointer(quint16 x, quint16 y, quint8 buttons, qint16 wheel) {
  const quint64 seq = ++m_seq;
  send(panel::pointer(seq, x, y, buttons, wheel));
  ++m_counts.sent;
  return seq;
}

void PanelClient::sendLock() {
  send(panel::lock());
}

void PanelClient::close() {
  if (m_socket.state() != QAbstractSocket::UnconnectedState)
    m_socket.close();
}

void PanelClient::send(QByteArray text) {
  m_socket.sendTextMessage(QString::fromUtf8(text));
  text.fill('\0'); // the hello carried the capability
}

void PanelClient::onText(const QString& text) {
  // Read with the panel protocol's one reader: drift from the console is an error here too.
  const QByteArray bytes = text.toUtf8();
  const Outcome<panel::ConsoleMessage> parsed = panel::parseConsoleMessage(bytes);
  if (!parsed.ok()) {
    m_errors.append(refusalName(parsed.code()));
    return;
  }
  const panel::ConsoleMessage& message = parsed.value();
  if (const auto* w = std::get_if<panel::Welcome>(&message)) {
    m_welcome = QJsonDocument::fromJson(bytes).object();
    m_phases.append(w->phase);
  } else if (const auto* p = std::get_if<panel::PhaseChange>(&message)) {
    m_phases.append(p->phase);
  } else if (const auto* a = std::get_if<panel::InputAck>(&message)) {
    m_counts.acknowledged = std::max(m_counts.acknowledged, a->upto);
  } else if (const auto* r = std::get_if<panel::InputRefused>(&message)) {
    ++m_counts.refused;
    ++m_counts.refusedByCode[r->code];
  } else if (const auto* d = std::get_if<panel::Drained>(&message)) {
    m_counts.drainedUpto = d->upto;
  } else if (const auto* e = std::get_if<panel::ConsoleError>(&message)) {
    m_errors.append(e->code);
  } else if (const auto* b = std::get_if<panel::Bye>(&message)) {
    m_bye = b->reason;
  }
}

void PanelClient::onBinary(const QByteArray& packet) {
  // Parsed with the one GCF1 reader (not decoded: the demo shows nothing) and acknowledged at
  // once: an unacknowledged panel would only get coalesced frames.
  const Outcome<FrameReader> frame = FrameReader::parse(packet);
  const std::optional<quint32> id = frame.ok() ? frame->frameId() : FrameReader::peekFrameId(packet);
  if (!frame.ok())
    m_errors.append(refusalName(frame.code()));
  if (!id)
    return;
  ++m_counts.frames;
  send(panel::frameAck(*id));
}

} // namespace gc::tools
