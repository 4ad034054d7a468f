// The GCF1 binary frame update (resources/protocol/panel-protocol.json, "binaryFrame"),
// little-endian:
//   header: magic u32 0x31464347 ('GCF1'), frame u32, width u16, height u16, rects u16
//   per rect: x u16, y u16, w u16, h u16, encoding u8 (1 PNG, 2 JPEG, 3 COPY), length u32, bytes
// A COPY record (length 4: source x u16, source y u16) moves the same-sized area at the
// source to the rect on the panel's own canvas; copies precede every image of a frame and
// are sent only to a panel whose hello asked for them (FrameReader.h has the rules).
// Encoders append their output straight into the packet between beginRect() and
// finishRect(), which patches the length: no per-rect copy. A value type.
#pragma once

#include "bridge/frames/EncoderChoice.h"

#include <QByteArray>
#include <QRect>
#include <QSize>

namespace gc {

class FramePacket {
public:
  static constexpr quint32 kMagic = 0x31464347;
  static constexpr int kHeaderBytes = 14;
  static constexpr int kRectHeaderBytes = 13;
  static constexpr int kCopyBytes = 4;
  static constexpr int kMaxRects = 0xffff;

  // `desktop` must fit u16 x u16 (checked by the pipeline).
  FramePacket(quint32 frameId, QSize desktop, qsizetype reserve = 0);

  // Writes a rect header; the encoder then appends to data(). Returns false (and writes
  // nothing) if the rect does not fit the wire types or the packet is full.
  bool beginRect(const QRect& rect, Encoding encoding);
  // A whole COPY record: `from`'s pixels go to `to` (same size). Refused (false, nothing
  // written) after an image record, or when either area does not fit the wire types.
  bool addCopy(const QRect& from, const QPoint& to);
  QByteArray& data() { return m_bytes; }
  void finishRect();
  // Drops the rect begun last (its encoder failed).
  void abortRect();

  int rectCount() const { return m_rects; }
  quint32 frameId() const { return m_frameId; }
  QByteArray take();

private:
  QByteArray m_bytes;
  quint32 m_frameId;
  int m_rects = 0;
  bool m_imageWritten = false;
  qsizetype m_open = -1; // offset of the rect header begun last
};

} // namespace gc
