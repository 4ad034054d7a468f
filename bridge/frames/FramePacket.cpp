#include "bridge/frames/FramePacket.h"

#include "privacy/SecureBytes.h"

#include <QtEndian>

namespace gc {
namespace {

template <typename T> void put(QByteArray& bytes, T value) {
  char le[sizeof(T)];
  qToLittleEndian(value, le);
  appendWiping(bytes, le, sizeof(T));
}

template <typename T> void patch(QByteArray& bytes, qsizetype at, T value) {
  qToLittleEndian(value, bytes.data() + at);
}

bool fitsU16(int v) {
  return v >= 0 && v <= 0xffff;
}

bool fitsWire(const QRect& rect) {
  return !rect.isEmpty() && fitsU16(rect.x()) && fitsU16(rect.y()) && fitsU16(rect.width()) &&
         fitsU16(rect.height()) && fitsU16(rect.right()) && fitsU16(rect.bottom());
}

} // namespace

FramePacket::FramePacket(quint32 frameId, QSize desktop, qsizetype reserve) : m_frameId(frameId) {
  m_bytes.reserve(qMax<qsizetype>(reserve, kHeaderBytes));
  put<quint32>(m_bytes, kMagic);
  put<quint32>(m_bytes, frameId);
  put<quint16>(m_bytes, quint16(desktop.width()));
  put<quint16>(m_bytes, quint16(desktop.height()));
  put<quint16>(m_bytes, 0);
}

bool FramePacket::beginRect(const QRect& rect, Encoding encoding) {
  if (m_rects >= kMaxRects || m_open >= 0 || encoding == Encoding::Copy || !fitsWire(rect)) {
    return false;
  }
  m_imageWritten = true;
  m_open = m_bytes.size();
  put<quint16>(m_bytes, quint16(rect.x()));
  put<quint16>(m_bytes, quint16(rect.y()));
  put<quint16>(m_bytes, quint16(rect.width()));
  put<quint16>(m_bytes, quint16(rect.height()));
  put<quint8>(m_bytes, quint8(encoding));
  put<quint32>(m_bytes, 0);
  return true;
}

bool FramePacket::addCopy(const QRect& from, const QPoint& to) {
  const QRect dest(to, from.size());
  if (m_rects >= kMaxRects || m_open >= 0 || m_imageWritten || !fitsWire(from) || !fitsWire(dest)) {
    return false;
  }
  put<quint16>(m_bytes, quint16(dest.x()));
  put<quint16>(m_bytes, quint16(dest.y()));
  put<quint16>(m_bytes, quint16(dest.width()));
  put<quint16>(m_bytes, quint16(dest.height()));
  put<quint8>(m_bytes, quint8(Encoding::Copy));
  put<quint32>(m_bytes, quint32(kCopyBytes));
  put<quint16>(m_bytes, quint16(from.x()));
  put<quint16>(m_bytes, quint16(from.y()));
  ++m_rects;
  patch<quint16>(m_bytes, 12, quint16(m_rects));
  return true;
}

void FramePacket::finishRect() {
  if (m_open < 0) {
    return;
  }
  const qsizetype length = m_bytes.size() - m_open - kRectHeaderBytes;
  patch<quint32>(m_bytes, m_open + 9, quint32(length));
  ++m_rects;
  patch<quint16>(m_bytes, 12, quint16(m_rects));
  m_open = -1;
}

void FramePacket::abortRect() {
  if (m_open >= 0) {
    truncateWiping(m_bytes, m_open);
    m_open = -1;
  }
}

QByteArray FramePacket::take() {
  abortRect();
  return std::exchange(m_bytes, QByteArray());
}

} // namespace gc
