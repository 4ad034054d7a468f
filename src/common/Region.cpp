#include "common/Region.h"

#include <algorithm>
#include <climits>

namespace gc {

namespace {

// One band's spans combined with another's: a sweep over both lists of edges, in or out of
// each side between them. The result is canonical (touching spans are one).
template <typename Keep>
std::vector<int> combineSpans(const std::vector<int>& a, const std::vector<int>& b, Keep keep) {
  std::vector<int> out;
  std::size_t i = 0, j = 0;
  bool inA = false, inB = false, in = false;
  while (i < a.size() || j < b.size()) {
    const int x = std::min(i < a.size() ? a[i] : INT_MAX, j < b.size() ? b[j] : INT_MAX);
    if (i < a.size() && a[i] == x) {
      inA = !inA;
      ++i;
    }
    if (j < b.size() && b[j] == x) {
      inB = !inB;
      ++j;
    }
    if (keep(inA, inB) != in) {
      in = !in;
      out.push_back(x);
    }
  }
  return out;
}

} // namespace

Region::Region(const QRect& rect) {
  if (rect.isEmpty())
    return;
  m_bands.push_back(Band{rect.top(), rect.top() + rect.height(), {rect.left(), rect.left() + rect.width()}});
}

QRect Region::boundingRect() const {
  if (m_bands.empty())
    return {};
  int left = INT_MAX, right = INT_MIN;
  for (const Band& b : m_bands) {
    left = std::min(left, b.xs.front());
    right = std::max(right, b.xs.back());
  }
  return QRect(left, m_bands.front().top, right - left, m_bands.back().bottom - m_bands.front().top);
}

std::vector<QRect> Region::rects() const {
  std::vector<QRect> out;
  out.reserve(rectCount());
  for (const Band& b : m_bands) {
    for (std::size_t k = 0; k + 1 < b.xs.size(); k += 2)
      out.emplace_back(b.xs[k], b.top, b.xs[k + 1] - b.xs[k], b.bottom - b.top);
  }
  return out;
}

std::size_t Region::rectCount() const {
  std::size_t n = 0;
  for (const Band& b : m_bands)
    n += b.xs.size() / 2;
  return n;
}

Region Region::combine(const Region& a, const Region& b, Op op) {
  // Every row edge of either side, in order; between two of them each side is one band (or
  // none) throughout.
  std::vector<int> ys;
  ys.reserve(2 * (a.m_bands.size() + b.m_bands.size()));
  for (const Region* r : {&a, &b}) {
    for (const Band& band : r->m_bands) {
      ys.push_back(band.top);
      ys.push_back(band.bottom);
    }
  }
  std::sort(ys.begin(), ys.end());
  ys.erase(std::unique(ys.begin(), ys.end()), ys.end());

  const auto keep = [op](bool inA, bool inB) {
    switch (op) {
    case Op::Union:
      return inA || inB;
    case Op::Subtract:
      return inA && !inB;
    case Op::Intersect:
      return inA && inB;
    }
    return false;
  };
  static const std::vector<int> kNone;
  Region out;
  std::size_t ia = 0, ib = 0;
  for (std::size_t k = 0; k + 1 < ys.size(); ++k) {
    const int top = ys[k], bottom = ys[k + 1];
    while (ia < a.m_bands.size() && a.m_bands[ia].bottom <= top)
      ++ia;
    while (ib < b.m_bands.size() && b.m_bands[ib].bottom <= top)
      ++ib;
    const bool hasA = ia < a.m_bands.size() && a.m_bands[ia].top <= top;
    const bool hasB = ib < b.m_bands.size() && b.m_bands[ib].top <= top;
    std::vector<int> xs =
        combineSpans(hasA ? a.m_bands[ia].xs : kNone, hasB ? b.m_bands[ib].xs : kNone, keep);
    if (xs.empty())
      continue;
    if (!out.m_bands.empty() && out.m_bands.back().bottom == top && out.m_bands.back().xs == xs)
      out.m_bands.back().bottom = bottom; // the same spans as the band above: one band
    else
      out.m_bands.push_back(Band{top, bottom, std::move(xs)});
  }
  return out;
}

Region Region::united(const Region& other) const {
  if (other.isEmpty())
    return *this;
  if (isEmpty())
    return other;
  return combine(*this, other, Op::Union);
}

Region Region::subtracted(const Region& other) const {
  if (isEmpty() || other.isEmpty())
    return *this;
  return combine(*this, other, Op::Subtract);
}

Region Region::intersected(const Region& other) const {
  if (isEmpty() || other.isEmpty())
    return {};
  return combine(*this, other, Op::Intersect);
}

Region Region::translated(QPoint delta) const {
  Region out = *this;
  for (Band& b : out.m_bands) {
    b.top += delta.y();
    b.bottom += delta.y();
    for (int& x : b.xs)
      x += delta.x();
  }
  return out;
}

Region& Region::operator+=(const QRect& rect) {
  if (rect.isEmpty())
    return *this;
  // Decoders paint top to bottom: a rectangle wholly below the last band is a band of its own
  // (or grows the last one), without a sweep.
  const int top = rect.top(), bottom = rect.top() + rect.height();
  if (!m_bands.empty() && top >= m_bands.back().bottom) {
    std::vector<int> xs{rect.left(), rect.left() + rect.width()};
    if (top == m_bands.back().bottom && m_bands.back().xs == xs)
      m_bands.back().bottom = bottom;
    else
      m_bands.push_back(Band{top, bottom, std::move(xs)});
    return *this;
  }
  *this = united(Region(rect));
  return *this;
}

bool Region::covers(const QRect& rect) const {
  return rect.isEmpty() || intersected(rect) == Region(rect);
}

} // namespace gc
