#include "action/CaptureScaler.h"

#include "privacy/SecureZero.h"

#include <algorithm>
#include <vector>

namespace gc {

namespace {

// The source pixels one output pixel covers along one axis, with their weights (areas in
// units of 1/out of a source pixel: they sum to `in`).
struct Span {
  int first = 0;
  std::vector<quint32> weights;
};

std::vector<Span> spans(int in, int out) {
  std::vector<Span> result(static_cast<size_t>(out));
  for (int o = 0; o < out; ++o) {
    const qint64 lo = qint64(o) * in, hi = qint64(o + 1) * in; // in units of 1/out
    Span& s = result[size_t(o)];
    s.first = int(lo / out);
    const int last = int((hi - 1) / out);
    for (int i = s.first; i <= last; ++i) {
      const qint64 from = std::max<qint64>(qint64(i) * out, lo);
      const qint64 to = std::min<qint64>(qint64(i + 1) * out, hi);
      s.weights.push_back(quint32(to - from));
    }
  }
  return result;
}

template <typename T> void wipe(std::vector<T>& v) {
  secureZero(v.data(), v.size() * sizeof(T));
}

} // namespace

QImage CaptureScaler::scaled(const QImage& frame, QSize to) {
  if (frame.isNull() || to.isEmpty() || frame.size() == to || frame.depth() != 32 ||
      to.width() > frame.width() || to.height() > frame.height())
    return frame.size() == to ? frame : QImage();
  const int W = frame.width(), H = frame.height(), w = to.width(), h = to.height();
  const std::vector<Span> xs = spans(W, w), ys = spans(H, h);
  const quint64 area = quint64(W) * quint64(H);

  QImage out(to, QImage::Format_RGB32);
  if (out.isNull())
    return QImage();
  std::vector<quint32> row(size_t(w) * 3); // one source row, summed horizontally (≤ 255·W)
  std::vector<quint64> acc(size_t(w) * 3); // one output row, summed both ways (≤ 255·W·H)
  for (int oy = 0; oy < h; ++oy) {
    std::fill(acc.begin(), acc.end(), 0);
    const Span& sy = ys[size_t(oy)];
    for (size_t j = 0; j < sy.weights.size(); ++j) {
      const auto* src = reinterpret_cast<const QRgb*>(frame.constScanLine(sy.first + int(j)));
      for (int ox = 0; ox < w; ++ox) {
        const Span& sx = xs[size_t(ox)];
        quint32 r = 0, g = 0, b = 0;
        for (size_t i = 0; i < sx.weights.size(); ++i) {
          const QRgb p = src[size_t(sx.first) + i];
          const quint32 wt = sx.weights[i];
          r += quint32(qRed(p)) * wt;
          g += quint32(qGreen(p)) * wt;
          b += quint32(qBlue(p)) * wt;
        }
        row[size_t(ox) * 3] = r;
        row[size_t(ox) * 3 + 1] = g;
        row[size_t(ox) * 3 + 2] = b;
      }
      const quint64 wy = sy.weights[j];
      for (size_t k = 0; k < acc.size(); ++k)
        acc[k] += quint64(row[k]) * wy;
    }
    auto* dst = reinterpret_cast<QRgb*>(out.scanLine(oy));
    for (int ox = 0; ox < w; ++ox) {
      const auto channel = [&](int c) { return int((acc[size_t(ox) * 3 + size_t(c)] + area / 2) / area); };
      dst[ox] = qRgb(channel(0), channel(1), channel(2));
    }
  }
  wipe(row);
  wipe(acc);
  return out;
}

} // namespace gc
