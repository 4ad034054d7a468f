// The loopback WebSocket the panel connects to (DESIGN.md §7). Lives on the main thread,
// owns its sockets and only routes: it authorizes one panel, parses its messages and emits
// them as typed signals; it never decides about phases or input (the Console does).
//
// One panel per console lifetime. Connecting claims nothing: up to maxPendingPanels
// connections may wait for their hello at once, each under its own deadline, and the first
// valid hello takes the slot; the other pending connections are then closed (PANEL_BUSY).
// A connection beyond the bound makes room by closing the oldest pending one (PANEL_BUSY),
// taking one from another local user first (LoopbackPeer: the uid owning the peer socket);
// another user's newcomer never pushes out one of this user's, it is turned away instead.
// So a squatter of another uid, however fast it reconnects, cannot evict the genuine panel
// before its hello; one of this user's that connects without saying hello only evicts its
// own stale sockets while the genuine panel says hello within milliseconds of connecting.
// (Refusing every newcomer instead would let 8 idle sockets starve every genuine panel.) A bad Origin, a
// missing or wrong hello, or a hello that comes late is refused and closed. Every refusal
// is counted. The handshake names no product (no Server: value).
//
// Before any of that, the TCP connection itself: PanelServer accepts it on its own
// QTcpServer, asks the kernel whose it is (LoopbackPeer, one sock_diag query: the cost does not
// grow with the host's TCP table) and only then hands it to QWebSocketServer for the handshake.
// At most kMaxHandshaking connections may be in the handshake at once, under the same rule
// (another user's newcomer beyond the bound is closed at once; ours closes their oldest), so
// another uid's idle connections cannot pile up descriptors in the console. A connection whose
// owner the kernel cannot name is closed at once (PANEL_PEER_UNKNOWN: fail closed). When accept
// hits the descriptor limit, one descriptor of the DescriptorReserve is given back so the
// backlog can still be accepted and sorted.
#pragma once

#include "bridge/panel/PanelMessage.h"
#include "bridge/panel/PanelPolicy.h"
#include "common/Refusal.h"

#include <QMap>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QTimer>
#include <QWebSocket>

class QTcpServer;
class QTcpSocket;
class QWebSocketServer;

namespace gc {

class PanelServer : public QObject {
  Q_OBJECT
public:
  explicit PanelServer(PanelPolicy policy, QObject* parent = nullptr);
  ~PanelServer() override;

  // Listens on 127.0.0.1, ephemeral port. false + errorString() on failure.
  bool listen();
  quint16 port() const;
  QString errorString() const { return m_error; }

  bool hasPanel() const { return m_panel && m_authorized; }
  int pendingCount() const { return int(m_pending.size()); } // connections awaiting hello
  int handshakingCount() const;                              // TCP connections before the upgrade
  static constexpr int kMaxHandshaking = 16;
  void sendText(const QByteArray& message);
  // Hands what is queued to the socket now, for a message that must not wait for the event
  // loop (the lock barrier's `drained`, sent before the asynchronous guest sync starts).
  void flush();
  void sendBinary(const QByteArray& packet);
  // Says bye (with the reason) and closes the panel connection; no new panel may follow.
  void closePanel(const QString& reason);
  void stop();

  const QMap<Refusal, quint64>& refusals() const { return m_refusals; }

  // The eviction rule, for a full set of pending connections listed oldest first (true: from
  // another uid): the index to close for the newcomer, or -1 to turn the newcomer away.
  static int pickEviction(const QList<bool>& pendingForeign, bool newcomerForeign);

signals:
  void panelAuthorized(const gc::panel::Hello& hello);
  // The authorized panel's connection ended (closed by it, by us, or dropped).
  void panelGone();
  void keyReceived(const gc::panel::Key& key);
  void pointerReceived(const gc::panel::Pointer& pointer);
  void frameAcked(quint32 frame);
  // The panel could not paint `frame` (0: unreadable) and needs the whole desktop again.
  void frameRefreshRequested(quint32 frame);
  void lockRequested();
  void closeRequested();
  // Every refusal, for the evidence counts. Never carries message payloads.
  void refused(gc::Refusal code, const QString& message);

private:
  void onTcpConnection();
  void onAcceptError();
  void onNewConnection();
  void onText(const QString& text);
  void onBinary(const QByteArray& data);
  void onDisconnected();
  void onPendingText(QWebSocket* socket, const QString& text);
  void handleHello(QWebSocket* socket, const panel::Hello& hello);
  void refuse(Refusal code, const QString& message, bool closeSocket);
  void refuseSocket(QWebSocket* socket, Refusal code, const QString& message);
  void refusePending(QWebSocket* socket, Refusal code, const QString& message);
  bool takeToken();

  PanelPolicy m_policy;
  // m_server first: it (and the sockets it upgraded) goes before the TCP server that accepted them.
  QWebSocketServer* m_server; // does the handshake of what m_tcp accepted; never listens itself
  QTcpServer* m_tcp;
  struct Handshaking {
    QPointer<QTcpSocket> socket;
    quint16 peerPort = 0; // finds it again once upgraded (all peers are 127.0.0.1)
    bool foreign = true;
  };
  QList<Handshaking> m_handshaking; // accepted, before the WebSocket upgrade; oldest first
  QPointer<QWebSocket> m_panel;     // the authorized panel only
  bool m_authorized = false;
  bool m_used = false;          // a panel was authorized once: no other may follow
  QList<QWebSocket*> m_pending; // awaiting hello, oldest first; each has its own deadline timer
  QSet<QWebSocket*> m_foreign;  // those of m_pending whose peer is another uid (or unknown)
  QMap<Refusal, quint64> m_refusals;
  QString m_error;
  double m_tokens = 0;
  qint64 m_lastRefillMs = 0;
  qint64 m_lastFloodReportMs = -1000;
};

} // namespace gc
