#include "tools/demo/PanelClient.h"

#include <QJsonDocument>
#include <QUrl>
#include <QtEndian>

namespace gc::tools {

PanelClient::PanelClient(QObject* parent) : QObject(parent) {
  connect(&m_socket, &QWebSocket::connected, this, [this] {
    // The capability travels in the first message only, never in the URL.
    sendJson(QJsonObject{
        {QStringLiteral("type"), QStringLiteral("hello")},
        {QStringLiteral("run"), m_run},
        {QStringLiteral("task"), m_task},
        {QStringLiteral("capability"), m_capability},
        {QStringLiteral("client"), QJsonObject{{QStringLiteral("kind"), QStringLiteral("demo")},
                                               {QStringLiteral("version"), QStringLiteral("1")}}}});
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
  sendJson(QJsonObject{{QStringLiteral("type"), QStringLiteral("key")},
                       {QStringLiteral("seq"), qint64(seq)},
                       {QStringLiteral("scancode"), scancode},
                       {QStringLiteral("down"), down}});
  ++m_counts.sent;
  return seq;
}

quint64 PanelClient::sendPointer(quint16 x, quint16 y, quint8 buttons, qint16 wheel) {
  const quint64 seq = ++m_seq;
  sendJson(QJsonObject{{QStringLiteral("type"), QStringLiteral("pointer")},
                       {QStringLiteral("seq"), qint64(seq)},
                       {QStringLiteral("x"), x},
                       {QStringLiteral("y"), y},
                       {QStringLiteral("buttons"), buttons},
                       {QStringLiteral("wheel"), wheel}});
  ++m_counts.sent;
  return seq;
}

void PanelClient::sendLock() {
  sendJson(QJsonObject{{QStringLiteral("type"), QStringLiteral("lock")}});
}

void PanelClient::close() {
  if (m_socket.state() != QAbstractSocket::UnconnectedState)
    m_socket.close();
}

void PanelClient::sendJson(const QJsonObject& message) {
  // The protocol wants the discriminator first; QJsonObject sorts its keys, so "type" is
  // written by hand and the rest of the object follows it.
  QJsonObject rest = message;
  const QString type = rest.take(QStringLiteral("type")).toString();
  QByteArray text = "{\"type\":\"" + type.toUtf8() + '"';
  const QByteArray fields = QJsonDocument(rest).toJson(QJsonDocument::Compact);
  if (fields.size() > 2)
    text += ',' + fields.mid(1, fields.size() - 2);
  text += '}';
  m_socket.sendTextMessage(QString::fromUtf8(text));
  text.fill('\0'); // the hello carried the capability
}

void PanelClient::onText(const QString& text) {
  const QJsonObject m = QJsonDocument::fromJson(text.toUtf8()).object();
  const QString type = m.value(QStringLiteral("type")).toString();
  if (type == QLatin1String("welcome")) {
    m_welcome = m;
    m_phases.append(m.value(QStringLiteral("phase")).toString());
  } else if (type == QLatin1String("phase")) {
    m_phases.append(m.value(QStringLiteral("phase")).toString());
  } else if (type == QLatin1String("input_ack")) {
    m_counts.acknowledged =
        std::max(m_counts.acknowledged, quint64(m.value(QStringLiteral("upto")).toInteger()));
  } else if (type == QLatin1String("input_refused")) {
    ++m_counts.refused;
    ++m_counts.refusedByCode[m.value(QStringLiteral("code")).toString()];
  } else if (type == QLatin1String("drained")) {
    m_counts.drainedUpto = quint64(m.value(QStringLiteral("upto")).toInteger());
  } else if (type == QLatin1String("error")) {
    m_errors.append(m.value(QStringLiteral("code")).toString());
  } else if (type == QLatin1String("bye")) {
    m_bye = m.value(QStringLiteral("reason")).toString();
  }
}

void PanelClient::onBinary(const QByteArray& packet) {
  // GCF1 header: magic u32 | frame u32 | …, little-endian. The frame is acknowledged at once:
  // the demo shows nothing, and an unacknowledged panel would only get coalesced frames.
  if (packet.size() < 8)
    return;
  ++m_counts.frames;
  const quint32 frame = qFromLittleEndian<quint32>(packet.constData() + 4);
  sendJson(QJsonObject{{QStringLiteral("type"), QStringLiteral("frame_ack")},
                       {QStringLiteral("frame"), qint64(frame)}});
}

} // namespace gc::tools
