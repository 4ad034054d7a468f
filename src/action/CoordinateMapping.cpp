#include "action/CoordinateMapping.h"

namespace gc {

namespace {

int centre(int v, int from, int to) {
  // floor((v + 0.5) * to / from)
  return int(((2 * qint64(v) + 1) * to) / (2 * qint64(from)));
}

int floorEdge(int v, int from, int to) {
  return int((qint64(v) * to) / from);
}

int ceilEdge(int v, int from, int to) {
  return int((qint64(v) * to + from - 1) / from);
}

QJsonArray pair(QPoint p) {
  return QJsonArray{p.x(), p.y()};
}

QJsonObject size(QSize s) {
  return QJsonObject{{QStringLiteral("width"), s.width()}, {QStringLiteral("height"), s.height()}};
}

} // namespace

CoordinateMapping CoordinateMapping::normalised(QSize desktop) {
  CoordinateMapping m(QSize(kNormalised, kNormalised), desktop);
  m.m_normalised = true;
  return m;
}

QPoint CoordinateMapping::toDesktop(QPoint p) const {
  if (m_normalised || m_space == m_desktop)
    return p;
  return QPoint(centre(p.x(), m_space.width(), m_desktop.width()),
                centre(p.y(), m_space.height(), m_desktop.height()));
}

QPoint CoordinateMapping::toSpace(QPoint desktop) const {
  if (m_normalised || m_space == m_desktop)
    return desktop;
  return QPoint(centre(desktop.x(), m_desktop.width(), m_space.width()),
                centre(desktop.y(), m_desktop.height(), m_space.height()));
}

QRect CoordinateMapping::regionToDesktop(int x0, int y0, int x1, int y1) const {
  const int W = m_desktop.width(), H = m_desktop.height(), w = m_space.width(), h = m_space.height();
  const QPoint topLeft(floorEdge(x0, w, W), floorEdge(y0, h, H));
  const QPoint end(ceilEdge(x1, w, W), ceilEdge(y1, h, H)); // exclusive
  return QRect(topLeft, QSize(end.x() - topLeft.x(), end.y() - topLeft.y()));
}

Outcome<ActionSpec> CoordinateMapping::toDesktop(const ActionSpec& spec, QJsonArray* points) const {
  using Kind = ActionSpec::Kind;
  ActionSpec out = spec;
  const auto map = [&](QPoint p, const QString& field) -> Outcome<QPoint> {
    if (m_normalised) {
      points->append(QJsonObject{{QStringLiteral("to"), pair(p)}});
      return p;
    }
    if (!contains(p))
      return Failure{Refusal::ActionInvalid,
                     QStringLiteral("%1: (%2,%3) is outside the %4x%5 capture the coordinates are in")
                         .arg(field)
                         .arg(p.x())
                         .arg(p.y())
                         .arg(m_space.width())
                         .arg(m_space.height())};
    const QPoint d = toDesktop(p);
    points->append(QJsonObject{{QStringLiteral("from"), pair(p)}, {QStringLiteral("to"), pair(d)}});
    return d;
  };
  switch (spec.kind) {
  case Kind::Click:
  case Kind::Move:
  case Kind::Scroll: {
    const Outcome<QPoint> d = map(QPoint(spec.x, spec.y), QStringLiteral("x, y"));
    if (!d)
      return d.failure();
    out.x = d->x();
    out.y = d->y();
    break;
  }
  case Kind::Drag:
    for (qsizetype i = 0; i < out.path.size(); ++i) {
      const Outcome<QPoint> d = map(out.path[i], QStringLiteral("path[%1]").arg(i));
      if (!d)
        return d.failure();
      out.path[i] = *d;
    }
    break;
  case Kind::KeyChord:
  case Kind::HoldKey:
  case Kind::TypeText:
  case Kind::Wait:
  case Kind::Done:
  case Kind::Fail:
    break;
  }
  return out;
}

QString CoordinateMapping::rule(bool normalised) {
  return normalised ? QStringLiteral("X = min(W-1, round(v*W/1000)), half up; a box is its centre")
                    : QStringLiteral("X = floor((x+0.5)*W/w), Y = floor((y+0.5)*H/h)");
}

QJsonObject CoordinateMapping::coordinateSpaceJson() const {
  QJsonObject json = size(m_space);
  if (m_normalised)
    json.insert(QStringLiteral("normalised"), true);
  return json;
}

QJsonObject CoordinateMapping::mappedToJson() const {
  return size(m_desktop);
}

QJsonObject CoordinateMapping::mappingJson(const QJsonArray& points) const {
  return QJsonObject{{QStringLiteral("rule"), rule(m_normalised)}, {QStringLiteral("points"), points}};
}

} // namespace gc
