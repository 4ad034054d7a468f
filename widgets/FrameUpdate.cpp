#include "widgets/FrameUpdate.h"

#include <QDataStream>
#include <QPainter>

namespace gc::viewer {
namespace {

constexpr quint32 kMagic = 0x31464347; // 'GCF1'
constexpr qsizetype kHeaderBytes = 14;
constexpr qsizetype kRectHeaderBytes = 13;

Failure malformed(const QString& why) {
  return Failure{Refusal::ProtocolMalformed, why};
}

} // namespace

Outcome<FrameUpdate> FrameUpdate::parse(const QByteArray& packet) {
  if (packet.size() < kHeaderBytes)
    return malformed(QStringLiteral("frame shorter than its header"));
  QDataStream in(packet);
  in.setByteOrder(QDataStream::LittleEndian);
  quint32 magic = 0;
  quint16 width = 0;
  quint16 height = 0;
  quint16 count = 0;
  FrameUpdate update;
  in >> magic >> update.m_frameId >> width >> height >> count;
  if (magic != kMagic)
    return malformed(QStringLiteral("bad frame magic"));
  update.m_packet = packet;
  update.m_desktop = QSize(width, height);
  if (update.m_desktop.isEmpty())
    return malformed(QStringLiteral("frame with an empty desktop"));
  const QRect desktop(QPoint(0, 0), update.m_desktop);
  qsizetype offset = kHeaderBytes;
  update.m_rects.reserve(count);
  for (int i = 0; i < count; ++i) {
    if (packet.size() - offset < kRectHeaderBytes)
      return malformed(QStringLiteral("truncated rectangle header"));
    quint16 x = 0;
    quint16 y = 0;
    quint16 w = 0;
    quint16 h = 0;
    quint8 encoding = 0;
    quint32 length = 0;
    in >> x >> y >> w >> h >> encoding >> length;
    offset += kRectHeaderBytes;
    Rect r;
    r.area = QRect(x, y, w, h);
    if (encoding != quint8(Encoding::Png) && encoding != quint8(Encoding::Jpeg))
      return malformed(QStringLiteral("unknown rectangle encoding %1").arg(encoding));
    r.encoding = Encoding(encoding);
    if (r.area.isEmpty() || !desktop.contains(r.area))
      return malformed(QStringLiteral("rectangle outside the desktop"));
    if (qsizetype(length) > packet.size() - offset)
      return malformed(QStringLiteral("truncated rectangle data"));
    r.offset = offset;
    r.length = length;
    if (length > 0 && in.skipRawData(int(length)) != int(length))
      return malformed(QStringLiteral("truncated rectangle data"));
    offset += length;
    update.m_rects.append(r);
  }
  if (offset != packet.size() || in.status() != QDataStream::Ok)
    return malformed(QStringLiteral("trailing bytes after the last rectangle"));
  return update;
}

Outcome<QImage> FrameUpdate::apply(const QImage& previous) const {
  // Decode everything before touching any picture.
  QList<QImage> decoded;
  decoded.reserve(m_rects.size());
  for (const Rect& r : m_rects) {
    QImage image;
    const auto* bytes = reinterpret_cast<const uchar*>(m_packet.constData() + r.offset);
    const char* format = r.encoding == Encoding::Png ? "PNG" : "JPEG";
    if (!image.loadFromData(bytes, int(r.length), format))
      return malformed(QStringLiteral("frame %1: a %2 rectangle does not decode").arg(m_frameId).arg(format));
    if (image.size() != r.area.size())
      return malformed(
          QStringLiteral("frame %1: a rectangle's image does not match its size").arg(m_frameId));
    decoded.append(std::move(image));
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
  QPainter painter(&next);
  painter.setCompositionMode(QPainter::CompositionMode_Source);
  for (qsizetype i = 0; i < m_rects.size(); ++i)
    painter.drawImage(m_rects[i].area.topLeft(), decoded[i]);
  painter.end();
  return next;
}

} // namespace gc::viewer
