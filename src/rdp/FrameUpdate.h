// One step of the guest desktop as seen by the main thread.
#pragma once

#include <QImage>
#include <QList>
#include <QMetaType>
#include <QRect>

namespace gc {

struct FrameUpdate {
  // Full-desktop snapshot (Format_RGB32 = BGRX in memory). Implicitly shared and never
  // written while anyone else holds it: the session's frame pool (DesktopFrames) reuses a
  // frame only once every receiver has dropped it.
  QImage frame;
  QList<QRect> dirty; // what changed since the previous FrameUpdate, in desktop coordinates
  quint64 serial = 0; // strictly increasing per session
};

} // namespace gc

Q_DECLARE_METATYPE(gc::FrameUpdate)
