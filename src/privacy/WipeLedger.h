// WipeLedger: what the console's teardown zeroed, owner by owner, and what it could not, so
// the closing evidence states buffers_wiped from what happened instead of asserting it.
//
// Each owner of private bytes (frame pipeline, capture replies, input queue, session frames)
// reports after its wipe: the bytes it zeroed, or why some were not (still shared with a
// holder the console does not own). buffers_wiped is true only when no owner reported a gap.
//
// Thread affinity: main thread (the console's teardown).
#pragma once

#include <QJsonObject>
#include <QString>

namespace gc {

class WipeLedger {
public:
  // `owner` zeroed `bytes` (0 is a valid report: it held nothing).
  void wiped(const QString& owner, qint64 bytes);
  // `owner` could not zero `bytes` bytes, for `reason` (e.g. shared with another holder).
  void notWiped(const QString& owner, qint64 bytes, const QString& reason);

  bool isEmpty() const { return m_wiped.isEmpty() && m_notWiped.isEmpty(); }
  bool complete() const { return !isEmpty() && m_notWiped.isEmpty(); }
  // {"buffers_wiped": bool, "wiped": {owner: bytes}, "not_wiped": {owner: {bytes, reason}}}
  QJsonObject toJson() const;

private:
  QJsonObject m_wiped;
  QJsonObject m_notWiped;
};

} // namespace gc
