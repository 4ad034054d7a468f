// FrameUpdate: a frame of the guest's desktop as the console holds it (console side only; the
// reader process never builds one, so it links no Qt Gui).
#pragma once

#include <QImage>
#include <QList>
#include <QMetaType>
#include <QPoint>
#include <QRect>

#include <utility>

namespace gc {

// One step of the guest desktop as the console sees it.
struct FrameUpdate {
  // Full-desktop snapshot (Format_RGB32 = BGRX in memory). Implicitly shared and never
  // written while anyone else holds it: the console's frame pool (DesktopFrames) reuses a
  // frame only once every receiver has dropped it.
  QImage frame;
  QList<QRect> dirty; // what changed since the previous FrameUpdate, in desktop coordinates
  // The guest's own moves behind this frame (RDPGFX SurfaceToSurface, CacheToSurface), in
  // order, each as (source area, target top-left), inside the desktop; for the panel encoder
  // to send as copies when the frame shows them. Empty when there were more than the reader
  // keeps (the damage covers them).
  QList<std::pair<QRect, QPoint>> moves;
  // The guest's serial of this frame: the newest lease it holds, strictly increasing per
  // session. "The panel presented it" goes back to the reader as this number.
  quint64 serial = 0;
};

} // namespace gc

Q_DECLARE_METATYPE(gc::FrameUpdate)
