// SurfaceTable: the RDPGFX client's surfaces and cache entries, with their pixel memory
// counted against the budget (Limits::pixelBudgetBytes, and Limits::maxCacheBytes for the
// cache) BEFORE anything is allocated. The surface mapped to the output at (0,0) with the
// desktop's size IS the DesktopSurface (adopted: its pixels are not kept twice); a surface
// mapped elsewhere is copied into the desktop after each change. Other surfaces and cache
// entries own their pixels (BGRX32, stride = width * 4), allocated at their first write and
// zeroed before they are freed.
//
// The table executes only what GfxFront has checked; it still never writes outside a
// buffer (every rectangle is clipped or refused again here, cheaply).
//
// Pure: no FreeRDP. Thread: the RDP worker only.
#pragma once

#include "rdp/DesktopSurface.h"
#include "rdp/front/Limits.h"

#include <QPoint>
#include <QRect>
#include <QSize>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

namespace gc::gfx {

// Pixels zeroed before they are freed (calloc: untouched pages stay unresident).
struct ZeroedPixels {
  void operator()(uchar* p) const;
  std::size_t bytes = 0;
};
using PixelBuffer = std::unique_ptr<uchar, ZeroedPixels>;
PixelBuffer allocatePixels(std::size_t bytes); // zeroed; null when the allocation fails

// A scratch for one bitmap's decode at a time, grown to the largest asked for; each buffer it
// lets go of is zeroed (ZeroedPixels).
class ScratchPixels {
public:
  // At least `bytes`; null when the allocation fails.
  uchar* get(std::size_t bytes);
  void release() { m_pixels.reset(); }

private:
  PixelBuffer m_pixels;
};

class SurfaceTable {
public:
  struct Surface {
    QSize size;
    uint8_t pixelFormat = 0;
    PixelBuffer own;              // null until first written (reads as black), or adopted
    bool adopted = false;         // its pixels are the DesktopSurface's
    std::optional<QPoint> origin; // mapped to the output (adopted: (0,0))
    bool progressive = false;     // a progressive codec context exists for it
    uint64_t bytes() const { return uint64_t(size.width()) * uint64_t(size.height()) * 4; }
    QRect rect() const { return QRect(QPoint(0, 0), size); }
  };
  struct CacheEntry {
    QSize size;
    PixelBuffer pixels;
    std::optional<QRect> fromOutput; // where on the output it was taken from (a move candidate)
    uint64_t bytes() const { return uint64_t(size.width()) * uint64_t(size.height()) * 4; }
  };

  SurfaceTable(const front::Limits& limits, DesktopSurface& desktop);
  ~SurfaceTable();

  const front::Limits& limits() const { return m_limits; }
  DesktopSurface& desktop() { return m_desktop; }
  const DesktopSurface& desktop() const { return m_desktop; }

  // Lookups (the front's view).
  const Surface* surface(uint16_t id) const;
  Surface* surface(uint16_t id);
  std::size_t surfaceCount() const { return m_surfaces.size(); }
  const CacheEntry* cacheEntry(uint16_t slot) const;
  uint64_t surfaceBytes() const { return m_surfaceBytes; }
  uint64_t cacheBytes() const { return m_cacheBytes; }
  uint64_t pixelBytes() const { return m_surfaceBytes + m_cacheBytes; }

  // Execution (after the front said yes). False: an allocation failed (a resource limit).
  bool create(uint16_t id, QSize size, uint8_t pixelFormat);
  // Returns whether the surface had a progressive context (the codec's to delete).
  bool remove(uint16_t id);
  void mapToOutput(uint16_t id, QPoint origin);
  // ResetGraphics: every surface is deleted (`progressive` gets those that had a progressive
  // context, the codec's to delete) and the desktop takes `size` (checked to fit).
  bool resetDesktop(QSize size, std::vector<uint16_t>& progressive);
  // Whether `id` is one of the surfaces the last ResetGraphics deleted and the server has
  // neither created again nor deleted itself since. A server that keeps them after a reset
  // (FreeRDP's client does) may still delete them: that DeleteSurface has nothing left to do.
  bool deletedByReset(uint16_t id) const { return m_deletedByReset.contains(id); }
  void forgetDeletedByReset(uint16_t id) { m_deletedByReset.erase(id); }

  bool fill(Surface& s, const QRect& area, uint32_t bgrx);
  bool write(Surface& s, const QRect& area, const uchar* src, qsizetype srcStride);
  // SurfaceToSurface: `source` of `from` to `target` of `to` (overlap-safe within one surface;
  // on the adopted output a move).
  bool copy(Surface& from, const QRect& source, Surface& to, QPoint target);
  bool toCache(uint16_t slot, Surface& from, const QRect& source);
  bool fromCache(uint16_t slot, Surface& to, QPoint target);
  void evict(uint16_t slot);

  // The pixels of a surface for a reader or an in-place decoder (allocated if need be);
  // null when the allocation fails. Stride = width * 4.
  uchar* pixels(Surface& s);
  qsizetype stride(const Surface& s) const { return qsizetype(s.size.width()) * 4; }
  // An in-place decoder (progressive) changed `rects` of `s`: damage on the output only for
  // what really changed (tile hashes), copies for a mapped surface.
  void noteDecoded(Surface& s, const std::vector<QRect>& rects);

  // Everything zeroed and freed (the channel closed); the desktop is wiped.
  void clear();

private:
  // After `area` of a mapped (not adopted) surface changed: the same pixels to the output.
  void propagate(Surface& s, const QRect& area);
  // Tile hashes of the adopted output (progressive decodes in place: damage only where a
  // tile's hash changed); any other write forgets the tiles it touched.
  void forgetTiles(const QRect& area);
  uint64_t tileHash(const QRect& tile) const;

  front::Limits m_limits;
  DesktopSurface& m_desktop;
  std::map<uint16_t, Surface> m_surfaces;
  std::set<uint16_t> m_deletedByReset; // at most the surfaces there were (maxSurfaces)
  std::map<uint16_t, CacheEntry> m_cache;
  uint64_t m_surfaceBytes = 0;
  uint64_t m_cacheBytes = 0;
  static constexpr int kTile = 64;
  QSize m_tileGrid;
  std::vector<uint64_t> m_tileHash; // 0: unknown
  uint64_t m_tileKey;
};

} // namespace gc::gfx
