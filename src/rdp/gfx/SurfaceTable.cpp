#include "rdp/gfx/SurfaceTable.h"

#include "common/Region.h"
#include "privacy/SecureZero.h"

#include <cstdlib>
#include <cstring>
#include <random>
#include <string.h>

namespace gc::gfx {

void ZeroedPixels::operator()(uchar* p) const {
  if (!p)
    return;
  secureZero(p, bytes);
  std::free(p);
}

PixelBuffer allocatePixels(std::size_t bytes) {
  auto* p = static_cast<uchar*>(std::calloc(bytes ? bytes : 1, 1));
  return PixelBuffer(p, ZeroedPixels{bytes});
}

uchar* ScratchPixels::get(std::size_t bytes) {
  if (!m_pixels || bytes > m_pixels.get_deleter().bytes)
    m_pixels = allocatePixels(bytes); // the old one is zeroed as it goes
  return m_pixels.get();
}

namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  h *= 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 31);
}

// Row-by-row copy inside one buffer, overlap-safe (rows in the direction that never reads a
// row already overwritten; memmove within a row).
void copyWithin(uchar* bits, qsizetype stride, const QRect& source, QPoint target) {
  const std::size_t rowBytes = std::size_t(source.width()) * 4;
  const auto row = [&](int x, int y) { return bits + qsizetype(y) * stride + qsizetype(x) * 4; };
  if (target.y() > source.top()) {
    for (int r = source.height() - 1; r >= 0; --r)
      std::memmove(row(target.x(), target.y() + r), row(source.left(), source.top() + r), rowBytes);
  } else {
    for (int r = 0; r < source.height(); ++r)
      std::memmove(row(target.x(), target.y() + r), row(source.left(), source.top() + r), rowBytes);
  }
}

} // namespace

SurfaceTable::SurfaceTable(const front::Limits& limits, DesktopSurface& desktop)
    : m_limits(limits), m_desktop(desktop) {
  std::random_device rd;
  m_tileKey = (uint64_t(rd()) << 32) ^ rd();
}

SurfaceTable::~SurfaceTable() {
  clear();
}

const SurfaceTable::Surface* SurfaceTable::surface(uint16_t id) const {
  const auto it = m_surfaces.find(id);
  return it == m_surfaces.end() ? nullptr : &it->second;
}

SurfaceTable::Surface* SurfaceTable::surface(uint16_t id) {
  const auto it = m_surfaces.find(id);
  return it == m_surfaces.end() ? nullptr : &it->second;
}

const SurfaceTable::CacheEntry* SurfaceTable::cacheEntry(uint16_t slot) const {
  const auto it = m_cache.find(slot);
  return it == m_cache.end() ? nullptr : &it->second;
}

bool SurfaceTable::create(uint16_t id, QSize size, uint8_t pixelFormat) {
  m_deletedByReset.erase(id);
  Surface s;
  s.size = size;
  s.pixelFormat = pixelFormat;
  m_surfaceBytes += s.bytes(); // counted now: the pixels come at the first write
  m_surfaces.emplace(id, std::move(s));
  return true;
}

bool SurfaceTable::remove(uint16_t id) {
  const auto it = m_surfaces.find(id);
  if (it == m_surfaces.end())
    return false;
  const bool progressive = it->second.progressive;
  m_surfaceBytes -= it->second.bytes();
  if (it->second.adopted)
    m_tileHash.assign(m_tileHash.size(), 0); // the desktop keeps its pixels, nobody hashes them
  m_surfaces.erase(it);                      // own pixels zeroed by PixelBuffer
  return progressive;
}

void SurfaceTable::mapToOutput(uint16_t id, QPoint origin) {
  Surface* s = surface(id);
  if (!s)
    return;
  // One surface is the desktop at a time; another one adopted before stops being it and
  // keeps its own copy of what it showed.
  if (origin == QPoint(0, 0) && s->size == m_desktop.size()) {
    for (auto& [otherId, other] : m_surfaces) {
      if (otherId != id && other.adopted) {
        other.adopted = false;
        if ((other.own = allocatePixels(std::size_t(other.bytes()))))
          std::memcpy(other.own.get(), m_desktop.constBits(), std::size_t(other.bytes()));
      }
    }
    if (!s->adopted) {
      // Adopted: what it held is copied into the desktop once, then its own buffer goes.
      if (s->own)
        m_desktop.write(s->rect(), s->own.get(), stride(*s));
      else
        m_desktop.fill(s->rect(), 0);
      s->own.reset();
      s->adopted = true;
      m_tileHash.assign(m_tileHash.size(), 0);
    }
    s->origin = origin;
    return;
  }
  if (s->adopted) {
    s->adopted = false;
    if ((s->own = allocatePixels(std::size_t(s->bytes()))))
      std::memcpy(s->own.get(), m_desktop.constBits(), std::size_t(s->bytes()));
  }
  s->origin = origin;
  propagate(*s, s->rect());
}

bool SurfaceTable::resetDesktop(QSize size, std::vector<uint16_t>& progressive) {
  // A reset starts the graphics over: every surface goes, and the server creates and maps them
  // again (shadow does after a second CapsConfirm, with the same ids). FreeRDP's client keeps
  // them instead, so a server may also delete them after the reset: deletedByReset() lets that
  // through. The cache stays.
  m_deletedByReset.clear();
  for (const auto& [id, s] : m_surfaces) {
    m_deletedByReset.insert(id);
    if (s.progressive)
      progressive.push_back(id);
  }
  m_surfaces.clear(); // own pixels zeroed by PixelBuffer
  m_surfaceBytes = 0;
  if (!m_desktop.resize(size))
    return false;
  m_tileGrid = QSize((size.width() + kTile - 1) / kTile, (size.height() + kTile - 1) / kTile);
  m_tileHash.assign(std::size_t(m_tileGrid.width()) * std::size_t(m_tileGrid.height()), 0);
  return true;
}

uchar* SurfaceTable::pixels(Surface& s) {
  if (s.adopted)
    return m_desktop.bits();
  if (!s.own)
    s.own = allocatePixels(std::size_t(s.bytes()));
  return s.own.get();
}

void SurfaceTable::propagate(Surface& s, const QRect& area) {
  if (s.adopted || !s.origin || !s.own)
    return;
  const QRect onDesktop = area.translated(*s.origin).intersected(m_desktop.rect());
  if (onDesktop.isEmpty())
    return;
  const QRect inSurface = onDesktop.translated(-*s.origin);
  const uchar* from = s.own.get() + qsizetype(inSurface.top()) * stride(s) + qsizetype(inSurface.left()) * 4;
  forgetTiles(onDesktop);
  m_desktop.write(onDesktop, from, stride(s));
}

bool SurfaceTable::fill(Surface& s, const QRect& area, uint32_t bgrx) {
  if (!s.rect().contains(area) || area.isEmpty())
    return false;
  if (s.adopted) {
    forgetTiles(area);
    return m_desktop.fill(area, bgrx);
  }
  uchar* bits = pixels(s);
  if (!bits)
    return false;
  const uint32_t value = bgrx | 0xFF000000u;
  for (int y = area.top(); y <= area.bottom(); ++y) {
    uchar* row = bits + qsizetype(y) * stride(s) + qsizetype(area.left()) * 4;
    for (int x = 0; x < area.width(); ++x)
      std::memcpy(row + x * 4, &value, 4);
  }
  propagate(s, area);
  return true;
}

bool SurfaceTable::write(Surface& s, const QRect& area, const uchar* src, qsizetype srcStride) {
  if (!s.rect().contains(area) || area.isEmpty() || srcStride < qsizetype(area.width()) * 4)
    return false;
  if (s.adopted) {
    forgetTiles(area);
    return m_desktop.write(area, src, srcStride);
  }
  uchar* bits = pixels(s);
  if (!bits)
    return false;
  for (int r = 0; r < area.height(); ++r)
    std::memcpy(bits + qsizetype(area.top() + r) * stride(s) + qsizetype(area.left()) * 4,
                src + qsizetype(r) * srcStride, std::size_t(area.width()) * 4);
  propagate(s, area);
  return true;
}

bool SurfaceTable::copy(Surface& from, const QRect& source, Surface& to, QPoint target) {
  const QRect dest(target, source.size());
  if (!from.rect().contains(source) || !to.rect().contains(dest) || source.isEmpty())
    return false;
  if (&from == &to) {
    if (to.adopted) {
      forgetTiles(dest);
      return m_desktop.move(source, target); // replayed by the panel as a move
    }
    uchar* bits = pixels(to);
    if (!bits)
      return false;
    copyWithin(bits, stride(to), source, target);
    propagate(to, dest);
    return true;
  }
  uchar* src = pixels(from);
  if (!src)
    return false;
  return write(to, dest, src + qsizetype(source.top()) * stride(from) + qsizetype(source.left()) * 4,
               stride(from));
}

bool SurfaceTable::toCache(uint16_t slot, Surface& from, const QRect& source) {
  if (!from.rect().contains(source) || source.isEmpty())
    return false;
  evict(slot);
  CacheEntry entry;
  entry.size = source.size();
  const uint64_t bytes = entry.bytes();
  entry.pixels = allocatePixels(std::size_t(bytes));
  const uchar* src = pixels(from);
  if (!entry.pixels || !src)
    return false;
  const qsizetype rowBytes = qsizetype(source.width()) * 4;
  for (int r = 0; r < source.height(); ++r)
    std::memcpy(entry.pixels.get() + r * rowBytes,
                src + qsizetype(source.top() + r) * stride(from) + qsizetype(source.left()) * 4,
                std::size_t(rowBytes));
  if (from.adopted)
    entry.fromOutput = source;
  m_cacheBytes += bytes;
  m_cache.emplace(slot, std::move(entry));
  return true;
}

bool SurfaceTable::fromCache(uint16_t slot, Surface& to, QPoint target) {
  const auto it = m_cache.find(slot);
  if (it == m_cache.end())
    return false;
  const CacheEntry& entry = it->second;
  const QRect dest(target, entry.size);
  if (!to.rect().contains(dest))
    return false;
  const qsizetype rowBytes = qsizetype(entry.size.width()) * 4;
  // A blit of pixels the output still shows where they were cached from is a move there:
  // the panel replays it from what it has.
  if (to.adopted && entry.fromOutput && m_desktop.contains(*entry.fromOutput)) {
    const QRect& origin = *entry.fromOutput;
    bool same = true;
    for (int r = 0; same && r < origin.height(); ++r)
      same = std::memcmp(m_desktop.constBits() + qsizetype(origin.top() + r) * m_desktop.stride() +
                             qsizetype(origin.left()) * 4,
                         entry.pixels.get() + r * rowBytes, std::size_t(rowBytes)) == 0;
    if (same) {
      forgetTiles(dest);
      return m_desktop.move(origin, target);
    }
  }
  return write(to, dest, entry.pixels.get(), rowBytes);
}

void SurfaceTable::evict(uint16_t slot) {
  const auto it = m_cache.find(slot);
  if (it == m_cache.end())
    return;
  m_cacheBytes -= it->second.bytes();
  m_cache.erase(it); // zeroed by PixelBuffer
}

void SurfaceTable::forgetTiles(const QRect& area) {
  if (m_tileHash.empty())
    return;
  const QRect a = area.intersected(m_desktop.rect());
  if (a.isEmpty())
    return;
  for (int ty = a.top() / kTile; ty <= a.bottom() / kTile; ++ty)
    for (int tx = a.left() / kTile; tx <= a.right() / kTile; ++tx)
      m_tileHash[std::size_t(ty) * std::size_t(m_tileGrid.width()) + std::size_t(tx)] = 0;
}

uint64_t SurfaceTable::tileHash(const QRect& tile) const {
  uint64_t h = m_tileKey;
  const std::size_t words = std::size_t(tile.width()) / 2;
  for (int y = tile.top(); y <= tile.bottom(); ++y) {
    const uchar* row = m_desktop.constBits() + qsizetype(y) * m_desktop.stride() + qsizetype(tile.left()) * 4;
    for (std::size_t i = 0; i < words; ++i) {
      uint64_t v;
      std::memcpy(&v, row + i * 8, 8);
      h = mix(h, v);
    }
    if (tile.width() & 1) {
      uint32_t v;
      std::memcpy(&v, row + words * 8, 4);
      h = mix(h, v);
    }
  }
  return h | 1; // never 0 (unknown)
}

void SurfaceTable::noteDecoded(Surface& s, const std::vector<QRect>& rects) {
  if (!s.adopted) {
    for (const QRect& r : rects)
      propagate(s, r.intersected(s.rect()));
    return;
  }
  Region region;
  for (const QRect& r : rects)
    region += r.intersected(m_desktop.rect());
  if (region.isEmpty())
    return;
  const bool hashed = m_tileGrid == QSize((m_desktop.size().width() + kTile - 1) / kTile,
                                          (m_desktop.size().height() + kTile - 1) / kTile) &&
                      !m_tileHash.empty();
  if (!hashed) {
    for (const QRect& r : region.rects())
      m_desktop.noteWritten(r);
    return;
  }
  // Each tile once: a tile whose hash is what it was before the decode did not change.
  const QRect bounds = region.boundingRect();
  for (int ty = bounds.top() / kTile; ty <= bounds.bottom() / kTile; ++ty) {
    for (int tx = bounds.left() / kTile; tx <= bounds.right() / kTile; ++tx) {
      const QRect tile = QRect(tx * kTile, ty * kTile, kTile, kTile).intersected(m_desktop.rect());
      const Region part = region.intersected(tile);
      if (part.isEmpty())
        continue;
      uint64_t& known = m_tileHash[std::size_t(ty) * std::size_t(m_tileGrid.width()) + std::size_t(tx)];
      const uint64_t now = tileHash(tile);
      if (now != known) {
        for (const QRect& r : part.rects())
          m_desktop.noteWritten(r);
      }
      known = now;
    }
  }
}

void SurfaceTable::clear() {
  m_surfaces.clear();
  m_cache.clear();
  m_surfaceBytes = 0;
  m_cacheBytes = 0;
  m_tileHash.assign(m_tileHash.size(), 0);
}

} // namespace gc::gfx
