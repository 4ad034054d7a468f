// CoordinateMapping: from the space the model saw (the scaled capture) to
// desktop pixels, exactly and documented (docs/mcp.md "Coordinates"):
//   a point (x, y) of a w × h capture is the desktop pixel
//     X = floor((x + 0.5) · W / w),  Y = floor((y + 0.5) · H / h)
//   (the desktop pixel under the centre of the capture pixel; integer arithmetic:
//   X = ((2x + 1) · W) div (2w)); the identity when the sizes are equal.
//   a zoom region [x0, y0, x1, y1] (edges, x1 and y1 exclusive) is the desktop rectangle
//     [floor(x0 · W / w), floor(y0 · H / h)) .. [ceil(x1 · W / w), ceil(y1 · H / h))
//   (every desktop pixel the region touches).
//   a desktop point back into the space (the pointer, for dialects acting "where the pointer
//   is"): x = floor((X + 0.5) · w / W).
// UI-TARS' 0..1000 coordinates are normalised, not pixels: the dialect maps them to the desktop
// itself (round(v · W / 1000)); the mapping then only records that space.
//
// Thread: a value type; use from any thread.
#pragma once

#include "common/Outcome.h"
#include "grant/ActionSpec.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QPoint>
#include <QRect>
#include <QSize>

namespace gc {

class CoordinateMapping {
public:
  static constexpr int kNormalised = 1000; // UI-TARS

  CoordinateMapping() = default;
  CoordinateMapping(QSize space, QSize desktop) : m_space(space), m_desktop(desktop) {}
  static CoordinateMapping normalised(QSize desktop);

  QSize space() const { return m_space; }
  QSize desktop() const { return m_desktop; }
  bool isNormalised() const { return m_normalised; }
  bool isIdentity() const { return !m_normalised && m_space == m_desktop; }

  bool contains(QPoint p) const {
    return p.x() >= 0 && p.y() >= 0 && p.x() < m_space.width() && p.y() < m_space.height();
  }
  QPoint toDesktop(QPoint p) const;
  QPoint toSpace(QPoint desktop) const;
  // Region edges in the space → desktop rectangle (see above); the region must lie inside.
  QRect regionToDesktop(int x0, int y0, int x1, int y1) const;

  // Every point of `spec` (x, y of click, move, scroll; each of a drag's path) mapped to the
  // desktop; a point outside the space is ACTION_INVALID naming it ("x: 1100 is outside the
  // 1024x768 capture"). `points` receives {"from":[x,y],"to":[X,Y]} per point. A normalised
  // mapping takes the spec as already mapped (the dialect did it) and records "to" only.
  Outcome<ActionSpec> toDesktop(const ActionSpec& spec, QJsonArray* points) const;

  // The receipt's fields: coordinate_space, mapped_to, mapping {rule, points}.
  QJsonObject coordinateSpaceJson() const;
  QJsonObject mappedToJson() const;
  QJsonObject mappingJson(const QJsonArray& points) const;
  static QString rule(bool normalised);

private:
  QSize m_space;
  QSize m_desktop;
  bool m_normalised = false;
};

} // namespace gc
