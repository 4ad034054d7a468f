#include "tests/bench/panel/BenchPanel.h"

#include "bridge/frames/FrameReader.h"
#include "bridge/panel/PanelMessage.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QPainter>
#include <QUrl>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <unistd.h>

namespace gc::bench {

namespace {

// A watched pixel counts as painted when every channel is within this of the colour: the
// rect may arrive as JPEG (4:2:0), which shifts flat colours by a few units.
constexpr int kColourTolerance = 40;

bool near(QRgb a, QRgb b) {
  return std::abs(qRed(a) - qRed(b)) <= kColourTolerance &&
         std::abs(qGreen(a) - qGreen(b)) <= kColourTolerance &&
         std::abs(qBlue(a) - qBlue(b)) <= kColourTolerance;
}

// Whether painting `image` at (x, y) changes any pixel of `canvas` (RGB32): the "changed
// frame" count, the same test gc-bench-probe applies to xfreerdp3's window.
bool differs(const QImage& canvas, const QImage& decoded, int x, int y) {
  const QImage image = decoded.format() == QImage::Format_RGB32 || decoded.format() == QImage::Format_ARGB32
                           ? decoded
                           : decoded.convertToFormat(QImage::Format_RGB32);
  const int w = std::min(image.width(), canvas.width() - x),
            h = std::min(image.height(), canvas.height() - y);
  for (int r = 0; r < h; ++r) {
    const auto* a = reinterpret_cast<const QRgb*>(canvas.constScanLine(y + r)) + x;
    const auto* b = reinterpret_cast<const QRgb*>(image.constScanLine(r));
    for (int c = 0; c < w; ++c)
      if ((a[c] ^ b[c]) & 0x00ffffffu)
        return true;
  }
  return false;
}

} // namespace

int64_t BenchPanel::nowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

BenchPanel::BenchPanel(quint16 port, QString run, QString task)
    : m_stdin(STDIN_FILENO, QSocketNotifier::Read), m_port(port), m_run(std::move(run)),
      m_task(std::move(task)) {
  QObject::connect(&m_socket, &QWebSocket::textMessageReceived, [this](const QString& t) { onText(t); });
  QObject::connect(&m_socket, &QWebSocket::binaryMessageReceived,
                   [this](const QByteArray& p) { onBinary(p); });
  QObject::connect(&m_socket, &QWebSocket::disconnected, [this] {
    emitEvent("disconnected", {{QStringLiteral("t_ns"), qint64(nowNs())}});
  });
  QObject::connect(&m_stdin, &QSocketNotifier::activated, [this] { readStdin(); });
}

void BenchPanel::start() {
  m_stdin.setEnabled(true);
}

void BenchPanel::readStdin() {
  char buffer[4096];
  const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
  if (n <= 0) {
    m_stdin.setEnabled(false);
    m_socket.close();
    QCoreApplication::quit();
    return;
  }
  m_stdinBuffer.append(buffer, n);
  qsizetype nl;
  while ((nl = m_stdinBuffer.indexOf('\n')) >= 0) {
    const QByteArray line = m_stdinBuffer.left(nl);
    m_stdinBuffer.remove(0, nl + 1);
    if (!line.trimmed().isEmpty())
      onCommand(QJsonDocument::fromJson(line).object());
  }
}

void BenchPanel::onCommand(const QJsonObject& c) {
  const QString cmd = c.value(QStringLiteral("cmd")).toString();
  const auto stamp = [](QJsonObject o) {
    o.insert(QStringLiteral("t_ns"), qint64(nowNs()));
    return o;
  };
  if (!m_started) {
    // Line 1: the capability (a secret: stdin only, never argv). It goes out in hello.
    m_started = true;
    const QByteArray capability = c.value(QStringLiteral("capability")).toString().toLatin1();
    // Copy records unless the orchestrator asks for the old stream ("copy_rect": false), to
    // measure both on the same workload.
    const bool copyRect = c.value(QStringLiteral("copy_rect")).toBool(true);
    QObject::connect(&m_socket, &QWebSocket::connected, [this, capability, copyRect] {
      panel::HelloFields hello{m_run, m_task, capability, QStringLiteral("bench"), QStringLiteral("1"),
                               {},    {}};
      if (copyRect)
        hello.features = QStringList{QString::fromLatin1(panel::kFeatureCopyRect)};
      send(panel::hello(hello));
    });
    m_socket.open(QUrl(QStringLiteral("ws://127.0.0.1:%1").arg(m_port)));
    return;
  }
  if (cmd == QLatin1String("key")) {
    const quint64 seq = ++m_seq;
    const int64_t t = nowNs();
    send(panel::key(seq, quint16(c.value(QStringLiteral("scancode")).toInt()),
                    c.value(QStringLiteral("down")).toBool()));
    emitEvent("sent", {{QStringLiteral("seq"), qint64(seq)}, {QStringLiteral("t_ns"), qint64(t)}});
  } else if (cmd == QLatin1String("pointer") || cmd == QLatin1String("burst")) {
    // burst: n pointer moves back to back (to fill the input queue before a lock).
    const int n = cmd == QLatin1String("burst") ? c.value(QStringLiteral("n")).toInt() : 1;
    const int x0 = c.value(QStringLiteral("x")).toInt(200), y = c.value(QStringLiteral("y")).toInt(200);
    int64_t first = 0, t = 0;
    for (int i = 0; i < n; ++i) {
      const quint64 seq = ++m_seq;
      t = nowNs();
      if (i == 0)
        first = t;
      send(panel::pointer(seq, quint16(x0 + (i % 200)), quint16(y), 0, 0));
    }
    m_socket.flush();
    emitEvent("sent", {{QStringLiteral("seq"), qint64(m_seq)},
                       {QStringLiteral("n"), n},
                       {QStringLiteral("first_t_ns"), qint64(first)},
                       {QStringLiteral("t_ns"), qint64(t)}});
  } else if (cmd == QLatin1String("lock")) {
    const int64_t t = nowNs();
    send(panel::lock());
    m_socket.flush();
    emitEvent("sent",
              {{QStringLiteral("what"), QStringLiteral("lock")}, {QStringLiteral("t_ns"), qint64(t)}});
  } else if (cmd == QLatin1String("ack")) {
    m_acking = c.value(QStringLiteral("on")).toBool();
    if (m_acking && m_unackedFrame) {
      m_resumedNs = nowNs();
      ack(m_lastFrame);
    }
    emitEvent("ack", stamp({{QStringLiteral("on"), m_acking}}));
  } else if (cmd == QLatin1String("trace")) {
    m_trace = c.value(QStringLiteral("on")).toBool();
  } else if (cmd == QLatin1String("watch")) {
    const Watch w{c.value(QStringLiteral("id")).toInteger(), c.value(QStringLiteral("x")).toInt(),
                  c.value(QStringLiteral("y")).toInt(),
                  QColor::fromString(c.value(QStringLiteral("color")).toString()).rgb()};
    // Already on the canvas (a static screen sends no further frame): seen at once.
    if (w.x >= 0 && w.y >= 0 && w.x < m_canvas.width() && w.y < m_canvas.height() &&
        near(m_canvas.pixel(w.x, w.y), w.colour))
      emitEvent("seen", {{QStringLiteral("id"), w.id},
                         {QStringLiteral("frame"), qint64(m_lastFrame)},
                         {QStringLiteral("t_ns"), qint64(nowNs())}});
    else
      m_watches.push_back(w);
  } else if (cmd == QLatin1String("stats")) {
    emitEvent("stats", stamp({{QStringLiteral("frames"), qint64(m_stats.frames)},
                              {QStringLiteral("changed_frames"), qint64(m_stats.changedFrames)},
                              {QStringLiteral("rects"), qint64(m_stats.rects)},
                              {QStringLiteral("png_rects"), qint64(m_stats.pngRects)},
                              {QStringLiteral("jpeg_rects"), qint64(m_stats.jpegRects)},
                              {QStringLiteral("copy_rects"), qint64(m_stats.copyRects)},
                              {QStringLiteral("binary_bytes"), qint64(m_stats.binaryBytes)},
                              {QStringLiteral("text_bytes"), qint64(m_stats.textBytes)},
                              {QStringLiteral("decode_ns"), qint64(m_stats.decodeNs)},
                              {QStringLiteral("first_frame_ns"), qint64(m_stats.firstFrameNs)},
                              {QStringLiteral("last_frame_ns"), qint64(m_stats.lastFrameNs)},
                              {QStringLiteral("input_ack_upto"), qint64(m_stats.inputAckUpto)},
                              {QStringLiteral("input_refused"), qint64(m_stats.inputRefused)}}));
    if (c.value(QStringLiteral("reset")).toBool())
      m_stats = Stats{};
  } else if (cmd == QLatin1String("close")) {
    send(panel::close());
  }
}

void BenchPanel::onText(const QString& text) {
  const int64_t t = nowNs();
  m_stats.textBytes += quint64(text.toUtf8().size());
  // Validated with the panel protocol's one reader; the orchestrator gets the fields.
  if (const auto parsed = panel::parseConsoleMessage(text.toUtf8()); !parsed.ok()) {
    emitEvent("bad_text",
              {{QStringLiteral("error"), parsed.failure().message}, {QStringLiteral("t_ns"), qint64(t)}});
    return;
  }
  QJsonObject m = QJsonDocument::fromJson(text.toUtf8()).object();
  const QString type = m.value(QStringLiteral("type")).toString();
  if (type == QLatin1String("input_ack")) {
    m_stats.inputAckUpto = quint64(m.value(QStringLiteral("upto")).toInteger());
    return;
  }
  if (type == QLatin1String("input_refused")) {
    ++m_stats.inputRefused;
    return;
  }
  if (type == QLatin1String("welcome")) {
    m.remove(QStringLiteral("identity"));
    m.remove(QStringLiteral("run"));
    m.remove(QStringLiteral("task"));
  }
  m.insert(QStringLiteral("t_ns"), qint64(t));
  m.remove(QStringLiteral("type"));
  emitEvent(type.toUtf8(), m);
}

void BenchPanel::onBinary(const QByteArray& packet) {
  // Read with the one GCF1 reader (bridge/frames/FrameReader.h); copies move pixels of the
  // canvas, then every image rectangle is decoded and painted (protocol rule: all of a frame
  // before it is "presented").
  const int64_t t0 = nowNs();
  const qsizetype size = packet.size();
  const Outcome<FrameReader> parsed = FrameReader::parse(packet);
  if (!parsed.ok()) {
    emitEvent("bad_frame",
              {{QStringLiteral("size"), qint64(size)}, {QStringLiteral("error"), parsed.failure().message}});
    if (const auto id = FrameReader::peekFrameId(packet); id && m_acking)
      ack(*id);
    return;
  }
  const FrameReader& reader = parsed.value();
  const quint32 frame = reader.frameId();
  const int width = reader.desktopSize().width(), height = reader.desktopSize().height();
  const int rects = int(reader.rects().size());
  if (m_canvas.size() != reader.desktopSize()) {
    m_canvas = QImage(reader.desktopSize(), QImage::Format_RGB32);
    m_canvas.fill(Qt::black);
  }
  int jpeg = 0;
  const int copies = reader.copyCount();
  bool changed = false;
  {
    QPainter painter;
    for (const FrameRecord& r : reader.rects()) {
      if (r.isCopy()) {
        changed = changed || r.area.topLeft() != r.source;
        FrameReader::applyCopy(m_canvas, r);
        continue;
      }
      const Outcome<QImage> image = reader.decode(r);
      if (!image.ok()) {
        emitEvent("bad_rect",
                  {{QStringLiteral("frame"), qint64(frame)}, {QStringLiteral("encoding"), int(r.encoding)}});
        continue;
      }
      if (!changed)
        changed = differs(m_canvas, image.value(), r.area.x(), r.area.y());
      if (!painter.isActive()) {
        painter.begin(&m_canvas);
        painter.setCompositionMode(QPainter::CompositionMode_Source);
      }
      painter.drawImage(r.area.topLeft(), image.value());
      jpeg += r.encoding == Encoding::Jpeg ? 1 : 0;
    }
  }
  const int64_t t1 = nowNs();
  ++m_stats.frames;
  m_stats.changedFrames += changed ? 1 : 0;
  m_stats.rects += quint64(rects);
  m_stats.jpegRects += quint64(jpeg);
  m_stats.copyRects += quint64(copies);
  m_stats.pngRects += quint64(rects - jpeg - copies);
  m_stats.binaryBytes += quint64(size);
  m_stats.decodeNs += t1 - t0;
  if (m_stats.firstFrameNs == 0)
    m_stats.firstFrameNs = t1;
  m_stats.lastFrameNs = t1;
  m_lastFrame = frame;
  if (m_resumedNs != 0) {
    emitEvent("resumed_frame", {{QStringLiteral("frame"), qint64(frame)},
                                {QStringLiteral("t_ns"), qint64(t1)},
                                {QStringLiteral("latency_ns"), qint64(t1 - m_resumedNs)}});
    m_resumedNs = 0;
  }
  if (m_trace)
    emitEvent("frame", {{QStringLiteral("frame"), qint64(frame)},
                        {QStringLiteral("t_ns"), qint64(t1)},
                        {QStringLiteral("bytes"), qint64(size)},
                        {QStringLiteral("rects"), rects},
                        {QStringLiteral("jpeg"), jpeg},
                        {QStringLiteral("copies"), copies},
                        {QStringLiteral("decode_ns"), qint64(t1 - t0)}});
  for (auto it = m_watches.begin(); it != m_watches.end();) {
    if (it->x < width && it->y < height && near(m_canvas.pixel(it->x, it->y), it->colour)) {
      emitEvent("seen", {{QStringLiteral("id"), it->id},
                         {QStringLiteral("frame"), qint64(frame)},
                         {QStringLiteral("t_ns"), qint64(t1)}});
      it = m_watches.erase(it);
    } else {
      ++it;
    }
  }
  if (m_acking)
    ack(frame);
  else
    m_unackedFrame = true;
}

void BenchPanel::ack(quint32 frame) {
  m_unackedFrame = false;
  send(panel::frameAck(frame));
}

void BenchPanel::send(QByteArray text) {
  m_socket.sendTextMessage(QString::fromUtf8(text));
  text.fill('\0'); // the hello carried the capability
}

void BenchPanel::emitEvent(const QByteArray& event, QJsonObject fields) {
  fields.insert(QStringLiteral("event"), QString::fromUtf8(event));
  const QByteArray line = QJsonDocument(fields).toJson(QJsonDocument::Compact) + '\n';
  std::fwrite(line.constData(), 1, size_t(line.size()), stdout);
  std::fflush(stdout);
}

} // namespace gc::bench
