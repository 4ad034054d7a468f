// The viewer's end of the panel protocol (DESIGN.md §7; resources/protocol/panel-protocol.json):
// a QWebSocket to ws://127.0.0.1:PORT with no Origin header (the console allows a missing
// Origin for exactly this client), hello first with the capability, then the console's
// text messages (strictly parsed) and GCF1 frame updates.
//
// Frames: packets are handled one at a time in arrival order. Each is parsed and decoded on
// a pool thread (QtConcurrent) onto a copy of the last frame; only a frame whose every
// rectangle decoded is presented (frameReady) and then acknowledged. A frame that cannot be
// used is dropped whole, counted, acknowledged when its id is readable, and followed by a
// frame_refresh, as the webview does: the console's flow control never stalls on it and the
// whole desktop comes again.
//
// Input: sendKey()/sendPointer() stamp increasing sequence numbers and refuse (return false,
// send nothing) unless the console's phase is SETUP. The phase is only ever mirrored from
// the console; the viewer never decides it.
//
// Thread: lives on the main thread. The decode job holds only immutable copies.
#pragma once

#include "bridge/panel/PanelMessage.h"

#include <QByteArray>
#include <QFutureWatcher>
#include <QImage>
#include <QJsonObject>
#include <QObject>
#include <QPoint>
#include <QQueue>
#include <QWebSocket>

namespace gc {

class ConsoleClient : public QObject {
  Q_OBJECT
public:
  struct Options {
    quint16 port = 0;
    QString run;
    QString task;
    QByteArray capabilityHex; // 64 lowercase hex digits; wiped once the hello is sent
    QJsonObject panel;        // optional grant metadata, checked by the console
    QString clientVersion;
  };

  // The result of one decode job; default-constructible for QFuture.
  struct Decoded {
    quint32 frameId = 0;
    bool parsed = false; // false: not even the frame id is known
    QImage frame;        // null when the frame is dropped
    QString error;
  };

  explicit ConsoleClient(QObject* parent = nullptr);
  ~ConsoleClient() override;

  // Connects and says hello. Takes the capability out of `options` (the caller's copy is
  // wiped when it passes an rvalue). One connection per client.
  void open(Options options);

  // "" until the welcome; then the console's phase, e.g. "SETUP".
  QString phase() const { return m_phase; }
  bool isInputOpen() const;
  bool isClosed() const { return m_closed; }
  QString closeReason() const { return m_closeReason; }
  const panel::Welcome& welcome() const { return m_welcome; }
  bool isWelcomed() const { return m_welcomed; }
  QImage frame() const { return m_front; }

  quint64 lastSeq() const { return m_seq; }
  quint64 acked() const { return m_acked; }
  quint64 refusedCount() const { return m_refused; }
  quint64 framesPresented() const { return m_framesPresented; }
  quint64 framesDropped() const { return m_framesDropped; }

  bool sendKey(quint16 scancode, bool down);
  // `desktop` in desktop pixels; buttons: bit 0 left, 1 right, 2 middle; |wheel| <= 255.
  bool sendPointer(QPoint desktop, quint8 buttons, qint16 wheel = 0);
  // Asks the console to lock (only meaningful in SETUP; the console decides).
  bool requestLock();
  // Tells the console the operator closed the viewer, then closes the socket.
  void requestClose();

signals:
  void welcomed(const gc::panel::Welcome& welcome);
  void phaseChanged(const QString& phase, const QString& reason);
  void frameReady(const QImage& frame, quint32 frameId);
  void frameDropped(const QString& why);
  void countersChanged();
  void drained(quint64 upto);
  void consoleError(const QString& code, const QString& message);
  void closed(const QString& reason);

private:
  void onConnected();
  void onText(const QString& text);
  void onBinary(const QByteArray& packet);
  void onDisconnected();
  void handle(const panel::ConsoleMessage& message);
  void setPhase(const QString& phase, const QString& reason);
  void decodeNext();
  void onDecoded();
  void sendMessage(QByteArray text); // wipes `text` once sent
  void finish(const QString& reason);
  void wipeCapability();

  QWebSocket m_socket;
  Options m_options;
  QString m_phase;
  panel::Welcome m_welcome;
  bool m_welcomed = false;
  bool m_opened = false;
  bool m_closed = false;
  QString m_closeReason;
  QString m_byeReason;
  QString m_lastError;

  QQueue<QByteArray> m_packets;
  QFutureWatcher<Decoded> m_decode;
  bool m_decoding = false;
  QImage m_front; // last presented frame; immutable once presented

  quint64 m_seq = 0;
  quint64 m_acked = 0;
  quint64 m_refused = 0;
  quint64 m_framesPresented = 0;
  quint64 m_framesDropped = 0;
};

} // namespace gc
