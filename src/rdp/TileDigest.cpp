#include "rdp/TileDigest.h"

#include <cstring>

namespace gc {

void TileDigest::reset(QSize desktop) {
  m_size = desktop.isEmpty() ? QSize() : desktop;
  m_columns = m_size.isEmpty() ? 0 : (m_size.width() + kTile - 1) / kTile;
  m_rows = m_size.isEmpty() ? 0 : (m_size.height() + kTile - 1) / kTile;
  m_digests.assign(std::size_t(m_columns) * std::size_t(m_rows), 0);
  m_known.assign(m_digests.size(), false);
  m_seen.assign(m_digests.size(), Seen::NotChanged);
}

QRect TileDigest::tileRect(int column, int row) const {
  return QRect(column * kTile, row * kTile, kTile, kTile).intersected(QRect(QPoint(0, 0), m_size));
}

// 64-bit words mixed with a multiply and a rotation per word, each row's position folded
// in (a tile whose rows swap places differs), finished with a 64-bit avalanche.
uint64_t TileDigest::hash(const uchar* bits, qsizetype stride, const QRect& area) {
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  uint64_t h = 0x243F6A8885A308D3ull;
  const std::size_t rowBytes = std::size_t(area.width()) * 4;
  for (int y = area.top(); y <= area.bottom(); ++y) {
    const uchar* row = bits + qsizetype(y) * stride + qsizetype(area.left()) * 4;
    std::size_t i = 0;
    for (; i + 8 <= rowBytes; i += 8) {
      uint64_t word;
      std::memcpy(&word, row + i, 8);
      h = (h ^ word) * kMul;
      h = (h << 29) | (h >> 35);
    }
    if (i < rowBytes) { // a width of an odd number of pixels: the last 4 bytes
      uint32_t tail;
      std::memcpy(&tail, row + i, 4);
      h = (h ^ tail) * kMul;
    }
    h ^= uint64_t(y) * kMul;
  }
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 33;
  return h;
}

QList<QRect> TileDigest::changed(const uchar* bits, qsizetype stride, const QList<QRect>& rects) {
  QList<QRect> out = touch(bits, stride, rects);
  settle(bits, stride);
  return out;
}

QList<QRect> TileDigest::touch(const uchar* bits, qsizetype stride, const QList<QRect>& rects) {
  QList<QRect> out;
  if (!bits || m_size.isEmpty() || stride < qsizetype(m_size.width()) * 4)
    return out;
  const QRect desktop(QPoint(0, 0), m_size);
  std::vector<bool> looked(m_digests.size(), false);
  for (const QRect& reported : rects) {
    const QRect r = reported.intersected(desktop);
    if (r.isEmpty())
      continue;
    for (int row = r.top() / kTile; row <= r.bottom() / kTile; ++row) {
      for (int column = r.left() / kTile; column <= r.right() / kTile; ++column) {
        const std::size_t i = std::size_t(row) * std::size_t(m_columns) + std::size_t(column);
        if (looked[i])
          continue;
        looked[i] = true;
        const QRect tile = tileRect(column, row);
        if (m_seen[i] != Seen::NotChanged) {
          m_seen[i] = Seen::ChangedAndDrawnAgain; // damage for the rest of the frame
          out.append(tile);
          continue;
        }
        const uint64_t digest = hash(bits, stride, tile);
        if (m_known[i] && m_digests[i] == digest)
          continue;
        m_known[i] = true;
        m_digests[i] = digest;
        m_seen[i] = Seen::Changed;
        out.append(tile);
      }
    }
  }
  return out;
}

void TileDigest::settle(const uchar* bits, qsizetype stride) {
  const bool readable = bits && !m_size.isEmpty() && stride >= qsizetype(m_size.width()) * 4;
  for (std::size_t i = 0; i < m_seen.size(); ++i) {
    if (m_seen[i] == Seen::ChangedAndDrawnAgain && readable)
      m_digests[i] =
          hash(bits, stride, tileRect(int(i % std::size_t(m_columns)), int(i / std::size_t(m_columns))));
    else if (m_seen[i] == Seen::ChangedAndDrawnAgain)
      m_known[i] = false; // not readable: unknown, so its next look reports it
    m_seen[i] = Seen::NotChanged;
  }
}

} // namespace gc
