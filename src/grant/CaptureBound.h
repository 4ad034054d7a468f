// CaptureBound: the grant's `capture` section: the size of the image the
// model sees, and so the coordinate space of its actions and zoom regions.
//   absent               the desktop's own size (no scaling: the capture's bytes as before)
//   {"size": [w, h]}     exactly w × h (e.g. XGA 1024×768, WXGA 1280×800); never larger than
//                        the desktop, never distorting one axis against the other by more than
//                        kMaxDistortion
//   {"long_edge": N}     the desktop scaled down, aspect kept, so its longer edge is N; a
//                        desktop that already fits is not scaled
// The same bound limits zoom_desktop: a zoom returns at most as many desktop pixels as the
// bound lets a capture have (a fixed size: w × h; a long edge: N on either axis).
//
// Thread: a value type; use from any thread.
#pragma once

#include "common/Outcome.h"

#include <QJsonObject>
#include <QSize>

namespace gc {

struct CaptureBound {
  enum class Mode : quint8 { Desktop, Size, LongEdge };
  static constexpr int kMinEdge = 64;
  static constexpr int kMaxEdge = 8192;
  // max(W/w, H/h) / min(W/w, H/h): how much more one axis may be scaled than the other.
  static constexpr int kMaxDistortionNum = 3; // 1.5 = 3/2
  static constexpr int kMaxDistortionDen = 2;

  Mode mode = Mode::Desktop;
  QSize size;       // Mode::Size
  int longEdge = 0; // Mode::LongEdge

  bool scales() const { return mode != Mode::Desktop; }
  // The capture's size for a desktop of `desktop`. OBSERVATION_INVALID when a fixed size is
  // larger than the desktop or distorts it beyond the bound (a grant whose desktop comes from
  // the server can only be judged once the server has said its size).
  Outcome<QSize> spaceFor(QSize desktop) const;
  // The same judgement with a message for GRANT_SCHEMA ("" when the size fits `desktop`).
  QString misfit(QSize desktop) const;
  // Whether a zoom of `desktopRegion` desktop pixels stays within the bound.
  bool admitsZoom(QSize desktopRegion, QSize desktop) const;
  // {} / {"size":[w,h]} / {"long_edge":N}, as status reports it.
  QJsonObject toJson() const;

  friend bool operator==(const CaptureBound&, const CaptureBound&) = default;
};

} // namespace gc
