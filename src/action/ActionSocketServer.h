// ActionSocketServer: the console's end of the MCP relay socket (<run dir>/mcp.sock, file
// 0600 in the 0700 run directory). Lives on the main thread, owns its sockets and only
// routes: the relay's calls go to ActionService, which decides everything.
//
// Accepts ONE relay at a time, and only a peer whose SO_PEERCRED uid equals ours. On
// accept it tells the relay the grant's MCP server and tool (and candidate ids); the relay
// must answer with a bind naming exactly those before any call is routed. Line-delimited
// JSON, the messages of relay/RelayWire.h.
#pragma once

#include "common/Refusal.h"
#include "relay/RelayWire.h"

#include <QJsonObject>
#include <QLocalSocket>
#include <QMap>
#include <QObject>
#include <QPointer>

#include <sys/types.h>

class QLocalServer;
class QSocketNotifier;

namespace gc {

class ActionService;

class ActionSocketServer : public QObject {
  Q_OBJECT
public:
  explicit ActionSocketServer(ActionService* service, QObject* parent = nullptr);
  ~ActionSocketServer() override; // stops and unlinks the socket

  // Binds and listens at `path`, whose directory must be ours and private (0700). Refuses
  // an existing path (never unlinks what it did not create). false + errorString().
  bool listen(const QString& path);
  QString socketPath() const { return m_path; }
  QString errorString() const { return m_error; }
  bool hasRelay() const { return m_relay != nullptr; }
  // Disconnects any relay, closes and unlinks the socket. Idempotent.
  void stop();

  const QMap<Refusal, quint64>& refusals() const { return m_refusals; }

  // What the capture replies left in this process, for the closing evidence. Each capture's
  // PNG and its reply line (the base64 text) are zeroed once written; a line still unsent is
  // zeroed by stop(). Qt's socket buffers never see them: the relay's lines are written to
  // the descriptor directly (QLocalSocket's write buffer frees its chunks without zeroing).
  struct Wiped {
    int captures = 0;
    qint64 bytes = 0;   // PNG + reply lines zeroed
    qint64 unwiped = 0; // bytes shared with another holder when dropped (not zeroed)
  };
  Wiped wiped() const { return m_wiped; }

  // Test seam: the uid a peer must have (default: our effective uid). A test cannot
  // easily connect as another uid, so it changes the expectation instead.
  void setExpectedPeerUidForTest(uid_t uid) { m_expectedUid = uid; }

signals:
  void relayBound();
  void relayGone();
  // Every refused connection or line, for the evidence counts (no payloads).
  void refused(gc::Refusal code, const QString& message);

private:
  void onNewConnection();
  void onReadyRead();
  void onDisconnected();
  void handleLine(const QByteArray& line);
  void handleCall(const relay::Call& call);
  QJsonObject dispatch(const QString& op, const QJsonObject& arguments, qint64 id);
  static QJsonObject errorReply(qint64 id, const Failure& failure, std::optional<QJsonObject> receipt = {});
  static constexpr QLatin1StringView kSettledLock{"request_lock:settled"}; // dispatch() only
  void writeLine(QLocalSocket* socket, const QJsonObject& message);
  // capture_desktop, or zoom_desktop with its arguments: the image line.
  void replyWithCapture(qint64 id, const QString& op, const QJsonObject& arguments);
  // Writes `line` to the relay without Qt's write buffer; what the socket does not take at
  // once waits in m_pending (ours, zeroed when sent) for a write notification.
  void sendToRelay(QByteArray line);
  void flushPending();
  void dropPending();
  void refuseSocket(QLocalSocket* socket, Refusal code, const QString& message);

  ActionService* m_service;
  QLocalServer* m_server = nullptr;
  QPointer<QLocalSocket> m_relay;
  bool m_bound = false;
  QByteArray m_buffer;
  QByteArray m_pending; // relay bytes not yet written (from m_pendingAt)
  qsizetype m_pendingAt = 0;
  QSocketNotifier* m_writable = nullptr; // on the relay's descriptor while m_pending waits
  Wiped m_wiped;
  QString m_path;
  QString m_error;
  uid_t m_expectedUid;
  QMap<Refusal, quint64> m_refusals;
};

} // namespace gc
