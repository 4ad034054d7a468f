#include "bridge/frames/MoveSearch.h"

#include "privacy/SecureZero.h"

#include <QHash>

#include <algorithm>
#include <cstring>

namespace gc {
namespace {

// A 64-bit hash of one row segment: four independent multiply-xor lanes over 64-bit words
// (pipelines well), folded and finalised. Not cryptographic: collisions only cost bytes.
quint64 rowHash(const uchar* p, int pixels) {
  constexpr quint64 k = 0x9E3779B97F4A7C15ULL;
  quint64 lane[4] = {0x243F6A8885A308D3ULL, 0x13198A2E03707344ULL, 0xA4093822299F31D0ULL,
                     0x082EFA98EC4E6C89ULL};
  const size_t bytes = size_t(pixels) * 4;
  size_t i = 0;
  for (; i + 32 <= bytes; i += 32) {
    quint64 w[4];
    std::memcpy(w, p + i, sizeof w); // scanlines are 4-byte aligned only
    for (int l = 0; l < 4; ++l)
      lane[l] = (lane[l] ^ w[l]) * k;
  }
  quint64 tail = 0;
  for (; i + 4 <= bytes; i += 4) {
    quint32 v;
    std::memcpy(&v, p + i, 4);
    tail = (tail ^ v) * k;
  }
  quint64 h = lane[0] ^ (lane[1] << 1 | lane[1] >> 63) ^ (lane[2] << 2 | lane[2] >> 62) ^
              (lane[3] << 3 | lane[3] >> 61) ^ tail ^ quint64(pixels);
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDULL;
  h ^= h >> 33;
  return h;
}

void hashRows(const QImage& image, const QRect& area, std::vector<quint64>& out) {
  out.resize(size_t(area.height()));
  for (int y = 0; y < area.height(); ++y)
    out[size_t(y)] = rowHash(image.constScanLine(area.y() + y) + size_t(area.x()) * 4, area.width());
}

} // namespace

QList<Move> MoveSearch::search(const QImage& frame, const QImage& reference, const QRect& area) {
  const QRect bounds = frame.rect();
  if (frame.depth() != 32 || reference.depth() != 32 || reference.size() != frame.size() ||
      !bounds.contains(area) || area.height() < 2 * kMinRows ||
      qint64(area.width()) * area.height() < kMinArea)
    return {};
  // The reference is most often the frame hashed last time (the encoder shares a frame it
  // sent whole as its reference): its rows need no second hash. QImage's cache key changes
  // with every write, and a stale hash would only cost bytes.
  if (reference.cacheKey() == m_hashedKey && area == m_hashedArea &&
      m_frameRows.size() == size_t(area.height())) {
    std::swap(m_referenceRows, m_frameRows);
  } else {
    hashRows(reference, area, m_referenceRows);
  }
  hashRows(frame, area, m_frameRows);
  m_hashedKey = frame.cacheKey();
  m_hashedArea = area;
  const int height = area.height();

  // Rows of the reference by hash. A hash seen at a few rows (a font's stems, a doubled
  // pixel row) votes for each of them: the true shift collects every such vote, the others
  // scatter. One seen at many rows (blank lines, rules) says nothing and cannot vote.
  struct Rows {
    int at[kMaxCandidates];
    int count;
  };
  QHash<quint64, Rows> where;
  where.reserve(height);
  for (int y = 0; y < height; ++y) {
    Rows& r = where[m_referenceRows[size_t(y)]];
    if (r.count < kMaxCandidates)
      r.at[r.count] = y;
    r.count = std::min(r.count + 1, kMaxCandidates + 1);
  }
  QHash<int, int> votes;
  const int stride = std::max(1, height / kMaxVotingRows);
  for (int y = 0; y < height; y += stride) {
    const quint64 h = m_frameRows[size_t(y)];
    if (h == m_referenceRows[size_t(y)])
      continue; // unchanged in place
    const auto it = where.constFind(h);
    if (it == where.constEnd() || it->count > kMaxCandidates)
      continue;
    for (int i = 0; i < it->count; ++i)
      ++votes[y - it->at[i]];
  }
  // The few best-voted shifts are tried on every row: periodic content (a font's repeated
  // stroke rows, ruled lines) votes for several shifts almost equally, and only the true one
  // matches the rows between its votes too. Ties go to the smaller shift.
  QList<std::pair<int, int>> ranked; // (votes, shift)
  for (auto it = votes.cbegin(); it != votes.cend(); ++it) {
    if (it.value() >= kMinVotes && it.key() != 0 && std::abs(it.key()) <= height - kMinRows)
      ranked.append({it.value(), it.key()});
  }
  if (ranked.isEmpty())
    return {};
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : std::abs(a.second) < std::abs(b.second);
  });
  if (ranked.size() > kShiftsTried)
    ranked.resize(kShiftsTried);
  int shift = 0;
  int bestRows = -1;
  for (const auto& ranking : ranked) {
    const int candidate = ranking.second;
    int rows = 0;
    for (int y = std::max(0, candidate); y < std::min(height, height + candidate); ++y)
      rows += m_frameRows[size_t(y)] == m_referenceRows[size_t(y - candidate)] ? 1 : 0;
    if (rows > bestRows || (rows == bestRows && std::abs(candidate) < std::abs(shift))) {
      bestRows = rows;
      shift = candidate;
    }
  }

  // Runs of destination rows y whose content is the reference's row y - shift.
  struct Run {
    int top;
    int rows;
  };
  QList<Run> runs;
  const int first = std::max(0, shift);
  const int last = std::min(height, height + shift); // exclusive
  int start = -1;
  for (int y = first; y <= last; ++y) {
    const bool match = y < last && m_frameRows[size_t(y)] == m_referenceRows[size_t(y - shift)];
    if (match && start < 0) {
      start = y;
    } else if (!match && start >= 0) {
      if (y - start >= kMinRows)
        runs.append(Run{start, y - start});
      start = -1;
    }
  }
  if (runs.isEmpty())
    return {};
  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.rows > b.rows; });
  if (runs.size() > kMaxMoves)
    runs.resize(kMaxMoves);
  qint64 pixels = 0;
  for (const Run& r : runs)
    pixels += qint64(r.rows) * area.width();
  if (pixels < kMinArea)
    return {};
  // Applied one after another, each reading the canvas the previous ones left: content moving
  // up (shift < 0) goes top run first, moving down bottom run first, so no run reads rows an
  // earlier one already overwrote.
  std::sort(runs.begin(), runs.end(),
            [shift](const Run& a, const Run& b) { return shift < 0 ? a.top < b.top : a.top > b.top; });
  QList<Move> moves;
  moves.reserve(runs.size());
  for (const Run& r : runs)
    moves.append(Move{QRect(area.x(), area.y() + r.top - shift, area.width(), r.rows),
                      QPoint(area.x(), area.y() + r.top)});
  return moves;
}

bool MoveSearch::confirms(const QImage& frame, const QImage& reference, const Move& move) const {
  const QRect bounds = frame.rect();
  const QRect to = move.destination();
  if (frame.depth() != 32 || reference.depth() != 32 || reference.size() != frame.size() ||
      !bounds.contains(move.from) || !bounds.contains(to) || move.from.topLeft() == move.to ||
      qint64(move.from.width()) * move.from.height() < kMinArea / 16)
    return false;
  const size_t bytes = size_t(to.width()) * 4;
  int equal = 0;
  for (int y = 0; y < to.height(); ++y)
    equal += std::memcmp(frame.constScanLine(to.y() + y) + size_t(to.x()) * 4,
                         reference.constScanLine(move.from.y() + y) + size_t(move.from.x()) * 4, bytes) == 0
                 ? 1
                 : 0;
  return 2 * equal >= to.height();
}

void MoveSearch::wipe() {
  m_hashedKey = 0;
  m_hashedArea = QRect();
  secureZero(m_frameRows.data(), m_frameRows.size() * sizeof(quint64));
  secureZero(m_referenceRows.data(), m_referenceRows.size() * sizeof(quint64));
}

void MoveSearch::release() {
  wipe();
  std::vector<quint64>().swap(m_frameRows);
  std::vector<quint64>().swap(m_referenceRows);
}

qint64 MoveSearch::bytesHeld() const {
  return qint64((m_frameRows.capacity() + m_referenceRows.capacity()) * sizeof(quint64));
}

} // namespace gc
