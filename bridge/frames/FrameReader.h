// The one reader of GCF1 binary frame updates (resources/protocol/panel-protocol.json,
// "binaryFrame"; FramePacket writes them). Every panel written in C++ reads frames with it:
// the Qt viewer, the demo's panel, the bench's panel and the tests.
//
// parse() is strict and bounds-checked: a packet is either a whole, well-formed frame or a
// typed refusal (PROTOCOL_MALFORMED) naming what is wrong; no record is trusted before its
// size, its place on the desktop and its bytes were checked against the packet.
//
// Records: image records (PNG, JPEG) carry encoded pixels for their area; copy records
// (encoding 3, only sent to a panel whose hello asked for "copy_rect") move an area of the
// panel's own canvas: `area` is the destination, `source` the top-left of a same-sized area
// of the canvas as it stood before this record. Copies come before every image record of a
// frame and apply in order, each as if through a temporary (overlap is a scroll).
//
// apply() decodes every image first and draws only when all of them decoded, onto a copy of
// the previous frame: the result is the complete new frame or nothing, so a partial frame is
// never presented.
//
// Thread: a value type; parse() and apply() are reentrant (the viewer runs them on its
// decode thread); the images going in and out are immutable shares.
#pragma once

#include "bridge/frames/EncoderChoice.h"
#include "common/Outcome.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QImage>
#include <QList>
#include <QPoint>
#include <QRect>
#include <QSize>

#include <optional>

namespace gc {

struct FrameRecord {
  QRect area;                        // destination, inside the desktop
  Encoding encoding = Encoding::Png; // Png, Jpeg or Copy
  QPoint source;                     // Copy: top-left of the source area
  qsizetype offset = 0;              // Png/Jpeg: the encoded bytes in the packet
  qsizetype length = 0;
  bool isCopy() const { return encoding == Encoding::Copy; }
  QRect sourceArea() const { return QRect(source, area.size()); }
};

class FrameReader {
public:
  // The largest desktop side a frame may name: the largest a grant can (grant/Grant.h,
  // Desktop::kMax), so apply() never allocates a canvas larger than 8192 × 8192.
  static constexpr int kMaxSide = 8192;

  static Outcome<FrameReader> parse(const QByteArray& packet);
  // The frame id of a packet that may not parse (a panel acknowledges even a frame it cannot
  // paint, when its id is readable): the magic and the id field must be there.
  static std::optional<quint32> peekFrameId(const QByteArray& packet);

  quint32 frameId() const { return m_frameId; }
  QSize desktopSize() const { return m_desktop; }
  const QList<FrameRecord>& rects() const { return m_rects; }
  int copyCount() const { return m_copies; }
  // An image record's encoded bytes (shares the packet; valid while this reader lives).
  QByteArrayView bytes(const FrameRecord& record) const;

  // `previous` is the last presented frame (may be null or of another size: the update's
  // desktop size wins, the old picture is kept top-left). Returns the new whole frame.
  Outcome<QImage> apply(const QImage& previous) const;

  // Moves `record.sourceArea()` of `canvas` (32-bit, in place) to `record.area`, as through a
  // temporary. Both areas must lie inside the canvas (parse() checked them for its desktop).
  static void applyCopy(QImage& canvas, const FrameRecord& record);
  // Decodes one image record into RGB32 of exactly its area's size, or a refusal.
  Outcome<QImage> decode(const FrameRecord& record) const;

private:
  QByteArray m_packet; // implicitly shared with the socket's message; rect bytes live here
  quint32 m_frameId = 0;
  QSize m_desktop;
  QList<FrameRecord> m_rects;
  int m_copies = 0;
};

} // namespace gc
