#include "bridge/frames/FrameReader.h"

#include "bridge/frames/FramePacket.h"

#include <QBuffer>
#include <QImageReader>
#include <QPainter>
#include <QtEndian>

#include <cstring>

namespace gc {
namespace {

Failure malformed(const QString& why) {
  return Failure{Refusal::ProtocolMalformed, why};
}

// A cursor over the packet that never reads past its end.
class Cursor {
public:
  explicit Cursor(const QByteArray& bytes)
      : m_data(reinterpret_cast<const uchar*>(bytes.constData())), m_size(bytes.size()) {}
  qsizetype offset() const { return m_at; }
  qsizetype left() const { return m_size - m_at; }
  template <typename T> T take() {
    const T v = qFromLittleEndian<T>(m_data + m_at);
    m_at += qsizetype(sizeof(T));
    return v;
  }
  void skip(qsizetype n) { m_at += n; }

private:
  const uchar* m_data;
  qsizetype m_size;
  qsizetype m_at = 0;
};

} // namespace

std::optional<quint32> FrameReader::peekFrameId(const QByteArray& packet) {
  if (packet.size() < 8)
    return std::nullopt;
  const auto* p = reinterpret_cast<const uchar*>(packet.constData());
  if (qFromLittleEndian<quint32>(p) != FramePacket::kMagic)
    return std::nullopt;
  return qFromLittleEndian<quint32>(p + 4);
}

Outcome<FrameReader> FrameReader::parse(const QByteArray& packet) {
  if (packet.size() < FramePacket::kHeaderBytes)
    return malformed(QStringLiteral("frame shorter than its header"));
  Cursor in(packet);
  if (in.take<quint32>() != FramePacket::kMagic)
    return malformed(QStringLiteral("bad frame magic"));
  FrameReader frame;
  frame.m_frameId = in.take<quint32>();
  const int width = in.take<quint16>();
  const int height = in.take<quint16>();
  const int count = in.take<quint16>();
  frame.m_desktop = QSize(width, height);
  if (frame.m_desktop.isEmpty())
    return malformed(QStringLiteral("frame with an empty desktop"));
  if (width > kMaxSide || height > kMaxSide)
    return malformed(
        QStringLiteral("frame for a %1x%2 desktop, over %3 a side").arg(width).arg(height).arg(kMaxSide));
  // Each record needs at least its header: a count the packet cannot hold is refused before
  // anything is reserved for it.
  if (qsizetype(count) * FramePacket::kRectHeaderBytes > in.left())
    return malformed(QStringLiteral("frame declares %1 rectangles its length cannot hold").arg(count));
  const QRect desktop(QPoint(0, 0), frame.m_desktop);
  frame.m_packet = packet;
  frame.m_rects.reserve(count);
  bool imageSeen = false;
  for (int i = 0; i < count; ++i) {
    if (in.left() < FramePacket::kRectHeaderBytes)
      return malformed(QStringLiteral("rectangle %1: truncated header").arg(i));
    FrameRecord r;
    const int x = in.take<quint16>();
    const int y = in.take<quint16>();
    const int w = in.take<quint16>();
    const int h = in.take<quint16>();
    const quint8 encoding = in.take<quint8>();
    const quint32 length = in.take<quint32>();
    r.area = QRect(x, y, w, h);
    if (r.area.isEmpty() || !desktop.contains(r.area))
      return malformed(QStringLiteral("rectangle %1 outside the desktop").arg(i));
    if (qint64(length) > qint64(in.left()))
      return malformed(QStringLiteral("rectangle %1: truncated data").arg(i));
    switch (encoding) {
    case quint8(Encoding::Png):
    case quint8(Encoding::Jpeg):
      imageSeen = true;
      r.encoding = Encoding(encoding);
      r.offset = in.offset();
      r.length = qsizetype(length);
      in.skip(r.length);
      break;
    case quint8(Encoding::Copy): {
      if (imageSeen)
        return malformed(QStringLiteral("rectangle %1: a copy after an image").arg(i));
      if (length != quint32(FramePacket::kCopyBytes))
        return malformed(QStringLiteral("rectangle %1: a copy of %2 bytes").arg(i).arg(length));
      r.encoding = Encoding::Copy;
      const int sx = in.take<quint16>();
      const int sy = in.take<quint16>();
      r.source = QPoint(sx, sy);
      if (!desktop.contains(r.sourceArea()))
        return malformed(QStringLiteral("rectangle %1: copy source outside the desktop").arg(i));
      ++frame.m_copies;
      break;
    }
    default:
      return malformed(QStringLiteral("rectangle %1: unknown encoding %2").arg(i).arg(encoding));
    }
    frame.m_rects.append(r);
  }
  if (in.left() != 0)
    return malformed(QStringLiteral("%1 bytes after the last rectangle").arg(in.left()));
  return frame;
}

QByteArrayView FrameReader::bytes(const FrameRecord& record) const {
  if (record.isCopy() || record.offset < 0 || record.length < 0 ||
      record.offset + record.length > m_packet.size())
    return {};
  return QByteArrayView(m_packet.constData() + record.offset, record.length);
}

Outcome<QImage> FrameReader::decode(const FrameRecord& record) const {
  const QByteArrayView data = bytes(record);
  const char* format = record.encoding == Encoding::Jpeg ? "JPEG" : "PNG";
  if (record.isCopy())
    return malformed(QStringLiteral("frame %1: a copy record has no image").arg(m_frameId));
  // The image's own header is read first: an image of any other size than its record's area
  // is refused before a pixel is allocated for it.
  QByteArray raw = QByteArray::fromRawData(data.data(), data.size()); // no copy
  QBuffer buffer(&raw);
  buffer.open(QIODevice::ReadOnly);
  QImageReader reader(&buffer, format);
  const QSize declared = reader.size();
  if (!declared.isValid())
    return malformed(QStringLiteral("frame %1: a %2 rectangle does not decode").arg(m_frameId).arg(format));
  if (declared != record.area.size())
    return malformed(QStringLiteral("frame %1: a rectangle's image does not match its size").arg(m_frameId));
  QImage image;
  if (!reader.read(&image))
    return malformed(QStringLiteral("frame %1: a %2 rectangle does not decode").arg(m_frameId).arg(format));
  if (image.size() != record.area.size())
    return malformed(QStringLiteral("frame %1: a rectangle's image does not match its size").arg(m_frameId));
  if (image.format() != QImage::Format_RGB32)
    image = image.convertToFormat(QImage::Format_RGB32);
  return image;
}

void FrameReader::applyCopy(QImage& canvas, const FrameRecord& record) {
  const QRect bounds = canvas.rect();
  if (canvas.depth() != 32 || !bounds.contains(record.area) || !bounds.contains(record.sourceArea()))
    return;
  const QRect& to = record.area;
  const QPoint from = record.source;
  const size_t rowBytes = size_t(to.width()) * 4;
  // Rows in the order that never reads a row already overwritten; memmove within a row.
  const bool downwards = to.y() > from.y();
  for (int i = 0; i < to.height(); ++i) {
    const int row = downwards ? to.height() - 1 - i : i;
    uchar* dst = canvas.scanLine(to.y() + row) + size_t(to.x()) * 4;
    const uchar* src = canvas.constScanLine(from.y() + row) + size_t(from.x()) * 4;
    std::memmove(dst, src, rowBytes);
  }
}

Outcome<QImage> FrameReader::apply(const QImage& previous) const {
  // Decode everything before touching any picture.
  QList<QImage> decoded;
  decoded.reserve(m_rects.size() - m_copies);
  for (const FrameRecord& r : m_rects) {
    if (r.isCopy())
      continue;
    Outcome<QImage> image = decode(r);
    if (!image.ok())
      return image.failure();
    decoded.append(std::move(image).value());
  }
  QImage next;
  if (previous.size() == m_desktop && previous.format() == QImage::Format_RGB32) {
    next = previous.copy(); // a deep copy: `previous` may be on screen right now
  } else {
    next = QImage(m_desktop, QImage::Format_RGB32);
    next.fill(Qt::black);
    if (!previous.isNull()) {
      QPainter keep(&next);
      keep.drawImage(0, 0, previous);
    }
  }
  qsizetype image = 0;
  QPainter painter;
  for (const FrameRecord& r : m_rects) {
    if (r.isCopy()) {
      applyCopy(next, r); // copies precede every image (parse() checked)
      continue;
    }
    if (!painter.isActive()) {
      painter.begin(&next);
      painter.setCompositionMode(QPainter::CompositionMode_Source);
    }
    painter.drawImage(r.area.topLeft(), decoded[image++]);
  }
  if (painter.isActive())
    painter.end();
  return next;
}

} // namespace gc
