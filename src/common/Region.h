// Region: a set of pixels as disjoint rectangles, for the reader's damage and the lock's
// corner. The reader links Qt Core only (no Qt Gui, no QRegion): what it needs of a region is
// union, subtraction, intersection, translation and its rectangles.
//
// Canonical banded form: horizontal bands sorted top to bottom, none overlapping; each band a
// sorted list of disjoint, non-touching x spans; two bands that touch vertically never have
// the same spans (they are one band). So two regions of the same pixels are equal as values,
// and rects() lists each band's spans left to right, bands top to bottom.
#pragma once

#include <QPoint>
#include <QRect>

#include <vector>

namespace gc {

class Region {
public:
  Region() = default;
  explicit Region(const QRect& rect); // empty for an empty or invalid rect

  bool isEmpty() const { return m_bands.empty(); }
  QRect boundingRect() const;
  // The rectangles, band by band (top to bottom), each band's left to right.
  std::vector<QRect> rects() const;
  std::size_t rectCount() const;

  Region united(const Region& other) const;
  Region subtracted(const Region& other) const;
  Region intersected(const Region& other) const;
  Region intersected(const QRect& rect) const { return intersected(Region(rect)); }
  Region translated(QPoint delta) const;
  Region& operator+=(const QRect& rect);
  // Every pixel of `rect` is in the region.
  bool covers(const QRect& rect) const;

  bool operator==(const Region&) const = default;

private:
  // Half-open: rows [top, bottom), each span [xs[2i], xs[2i+1]).
  struct Band {
    int top = 0;
    int bottom = 0;
    std::vector<int> xs;
    bool operator==(const Band&) const = default;
  };
  enum class Op { Union, Subtract, Intersect };
  static Region combine(const Region& a, const Region& b, Op op);

  std::vector<Band> m_bands;
};

} // namespace gc
