// PanelClient: the demo's stand-in for the VS Code panel — a real QWebSocket speaking the
// panel protocol (docs/protocol.md §2) to the console: hello with the capability from the
// ready line, key and pointer messages with increasing seq, frame acks, lock. It counts
// what it sent and what the console acknowledged or refused; it never draws anything.
//
// Thread: the main thread.
#pragma once

#include <QJsonObject>
#include <QMap>
#include <QObject>
#include <QStringList>
#include <QWebSocket>

namespace gc::tools {

class PanelClient : public QObject {
  Q_OBJECT
public:
  struct Counts {
    quint64 sent = 0;
    quint64 acknowledged = 0; // the highest input_ack upto (seq starts at 1, no gaps)
    quint64 refused = 0;
    QMap<QString, quint64> refusedByCode;
    quint64 drainedUpto = 0;
    quint64 frames = 0;
  };

  explicit PanelClient(QObject* parent = nullptr);

  // Connects to ws://127.0.0.1:port (no Origin, like the Qt viewer) and says hello.
  void open(quint16 port, const QString& run, const QString& task, const QString& capability);
  bool isWelcomed() const { return !m_welcome.isEmpty(); }
  const QJsonObject& welcome() const { return m_welcome; }
  bool isClosed() const { return m_closed; }
  QString byeReason() const { return m_bye; }
  QStringList errors() const { return m_errors; }

  // Each returns the seq it used.
  quint64 sendKey(quint16 scancode, bool down);
  quint64 sendPointer(quint16 x, quint16 y, quint8 buttons, qint16 wheel = 0);
  void sendLock();
  void close();

  const Counts& counts() const { return m_counts; }
  // Phases as the panel was told them (welcome's, then each phase message).
  const QStringList& phases() const { return m_phases; }

private:
  void onText(const QString& text);
  void onBinary(const QByteArray& packet);
  void send(QByteArray text); // wipes `text` once sent

  QWebSocket m_socket;
  QString m_run, m_task;
  QString m_capability;
  QJsonObject m_welcome;
  QStringList m_phases;
  QStringList m_errors;
  QString m_bye;
  Counts m_counts;
  quint64 m_seq = 0;
  bool m_closed = false;
};

} // namespace gc::tools
