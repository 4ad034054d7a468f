// BenchPanel: the benchmark's stand-in for the VS Code panel. A QWebSocket speaking the panel
// protocol (docs/protocol.md §2) that decodes every GCF1 rectangle (PNG or JPEG) and paints
// it onto a canvas before acknowledging the frame, as the webview does, and stamps what it
// sees with CLOCK_MONOTONIC so the orchestrator (tests/bench/run) can subtract the test
// guest's own t_ns stamps (same clock, same machine).
//
// Driven by JSON lines on stdin, reports JSON lines on stdout (tests/bench/README.md).
//
// Thread: the main thread only.
#pragma once

#include <QByteArray>
#include <QImage>
#include <QJsonObject>
#include <QSocketNotifier>
#include <QString>
#include <QWebSocket>

#include <cstdint>
#include <vector>

namespace gc::bench {

class BenchPanel {
public:
  BenchPanel(quint16 port, QString run, QString task);

  // Starts reading commands; the first line must carry the capability.
  void start();

  static int64_t nowNs();

private:
  struct Watch {
    qint64 id;
    int x, y;
    QRgb colour;
  };
  struct Stats {
    quint64 frames = 0, rects = 0, jpegRects = 0, pngRects = 0, copyRects = 0;
    quint64 changedFrames = 0; // frames that changed a pixel of the canvas
    quint64 binaryBytes = 0, textBytes = 0;
    int64_t decodeNs = 0; // decode + paint, summed
    int64_t firstFrameNs = 0, lastFrameNs = 0;
    quint64 inputAckUpto = 0, inputRefused = 0;
  };

  void onCommand(const QJsonObject& command);
  void onText(const QString& text);
  void onBinary(const QByteArray& packet);
  void send(QByteArray text); // wipes `text` once sent
  void ack(quint32 frame);
  void emitEvent(const QByteArray& event, QJsonObject fields);
  void readStdin();

  QWebSocket m_socket;
  QSocketNotifier m_stdin;
  QByteArray m_stdinBuffer;
  quint16 m_port;
  QString m_run, m_task;
  bool m_started = false;
  QImage m_canvas;
  Stats m_stats;
  quint64 m_seq = 0;
  bool m_acking = true;
  bool m_trace = false;
  quint32 m_lastFrame = 0;
  bool m_unackedFrame = false;
  int64_t m_resumedNs = 0; // ack resumed, waiting for the next frame
  std::vector<Watch> m_watches;
};

} // namespace gc::bench
