// One GCF1 binary frame update (resources/protocol/panel-protocol.json, "binaryFrame";
// bridge/frames/FramePacket.h writes them): parsed strictly, then applied as a whole.
//
// apply() decodes every rectangle first and draws only when all of them decoded, onto a
// copy of the previous frame: the result is either the complete new frame or nothing, so
// a partial frame can never be presented.
//
// Thread: a value type; parse() and apply() are reentrant and run on the viewer's decode
// thread (QtConcurrent); the images going in and out are immutable shares, never written
// by two threads.
#pragma once

#include "common/Outcome.h"

#include <QByteArray>
#include <QImage>
#include <QList>
#include <QRect>
#include <QSize>

namespace gc::viewer {

class FrameUpdate {
public:
  enum class Encoding : quint8 { Png = 1, Jpeg = 2 };
  struct Rect {
    QRect area;
    Encoding encoding = Encoding::Png;
    qsizetype offset = 0; // of the encoded bytes in the packet
    qsizetype length = 0;
  };

  static Outcome<FrameUpdate> parse(const QByteArray& packet);

  quint32 frameId() const { return m_frameId; }
  QSize desktopSize() const { return m_desktop; }
  const QList<Rect>& rects() const { return m_rects; }

  // `previous` is the last presented frame (may be null or of another size: the update's
  // desktop size wins, the old picture is kept top-left). Returns the new whole frame.
  Outcome<QImage> apply(const QImage& previous) const;

private:
  QByteArray m_packet; // implicitly shared with the socket's message; rect bytes live here
  quint32 m_frameId = 0;
  QSize m_desktop;
  QList<Rect> m_rects;
};

} // namespace gc::viewer
