#include "grant/CaptureBound.h"

#include <QJsonArray>

#include <algorithm>

namespace gc {

QString CaptureBound::misfit(QSize desktop) const {
  if (mode != Mode::Size)
    return QString();
  const int w = size.width(), h = size.height();
  const int W = desktop.width(), H = desktop.height();
  if (w > W || h > H)
    return QStringLiteral("%1x%2 is larger than the desktop %3x%4 (a capture is only scaled down)")
        .arg(w)
        .arg(h)
        .arg(W)
        .arg(H);
  // W/w against H/h, cross-multiplied: no rounding.
  const qint64 a = qint64(W) * h, b = qint64(H) * w;
  if (std::max(a, b) * kMaxDistortionDen > std::min(a, b) * kMaxDistortionNum)
    return QStringLiteral("%1x%2 distorts the desktop %3x%4 by more than %5:%6 between the axes")
        .arg(w)
        .arg(h)
        .arg(W)
        .arg(H)
        .arg(kMaxDistortionNum)
        .arg(kMaxDistortionDen);
  return QString();
}

Outcome<QSize> CaptureBound::spaceFor(QSize desktop) const {
  if (desktop.isEmpty())
    return Failure{Refusal::Internal, QStringLiteral("no desktop size to capture")};
  switch (mode) {
  case Mode::Desktop:
    return desktop;
  case Mode::Size:
    if (const QString why = misfit(desktop); !why.isEmpty())
      return Failure{Refusal::ObservationInvalid, QStringLiteral("capture.size: ") + why};
    return size;
  case Mode::LongEdge: {
    const int W = desktop.width(), H = desktop.height();
    const int edge = std::max(W, H);
    if (edge <= longEdge)
      return desktop;
    // The long edge becomes N; the short one round(short * N / long), half up, at least 1.
    const auto shortEdge = [this, edge](int s) {
      return std::max(1, int((2 * qint64(s) * longEdge + edge) / (2 * qint64(edge))));
    };
    return W >= H ? QSize(longEdge, shortEdge(H)) : QSize(shortEdge(W), longEdge);
  }
  }
  return desktop;
}

bool CaptureBound::admitsZoom(QSize desktopRegion, QSize desktop) const {
  switch (mode) {
  case Mode::Desktop:
    return desktopRegion.width() <= desktop.width() && desktopRegion.height() <= desktop.height();
  case Mode::Size:
    return desktopRegion.width() <= size.width() && desktopRegion.height() <= size.height();
  case Mode::LongEdge:
    return std::max(desktopRegion.width(), desktopRegion.height()) <= longEdge;
  }
  return false;
}

QJsonObject CaptureBound::toJson() const {
  switch (mode) {
  case Mode::Desktop:
    break;
  case Mode::Size:
    return QJsonObject{{QStringLiteral("size"), QJsonArray{size.width(), size.height()}}};
  case Mode::LongEdge:
    return QJsonObject{{QStringLiteral("long_edge"), longEdge}};
  }
  return QJsonObject{};
}

} // namespace gc
