#include "rdp/gfx/GfxFront.h"

namespace gc::gfx {

namespace {

using front::Checked;
using front::Ok;
using front::Violation;
using Surface = SurfaceTable::Surface;

bool validFormat(uint8_t f) {
  return f == kPixelFormatXrgb || f == kPixelFormatArgb;
}

// A RECT16 inside `size` (right/bottom exclusive); `nonEmpty` also refuses a zero area.
bool inside(const Rect16& r, QSize size, bool nonEmpty) {
  if (r.right < r.left || r.bottom < r.top)
    return false;
  if (nonEmpty && r.empty())
    return false;
  return r.right <= uint32_t(size.width()) && r.bottom <= uint32_t(size.height());
}

// `count` points, each with a `w` x `h` rectangle inside `size`.
bool targetsInside(const std::vector<Point16>& pts, uint32_t w, uint32_t h, QSize size) {
  for (const Point16& p : pts) {
    if (uint32_t(p.x) + w > uint32_t(size.width()) || uint32_t(p.y) + h > uint32_t(size.height()))
      return false;
  }
  return true;
}

struct Checker {
  const front::Limits& limits;
  const SurfaceTable& table;

  // The work one PDU may ask for: at most kPixelsPerPduFactor desktops' worth of pixels
  // written (1024 full-surface blits would be seconds of copying per PDU).
  static constexpr uint64_t kPixelsPerPduFactor = 4;
  bool withinWork(uint64_t pixels) const {
    return pixels <= kPixelsPerPduFactor * uint64_t(limits.desktopWidth) * limits.desktopHeight;
  }

  const Surface* existing(uint16_t id) const { return table.surface(id); }
  bool slotInRange(uint16_t slot) const { return slot >= 1 && slot <= limits.maxCacheSlots; }

  Checked<Ok> operator()(const WireToSurface1& p) const {
    constexpr std::string_view pdu = "rdpgfx.WireToSurface1";
    const Surface* s = existing(p.surfaceId);
    if (!s)
      return Violation::protocol(pdu, "surface does not exist");
    if (!validFormat(p.pixelFormat))
      return Violation::protocol(pdu, "pixel format is neither XRGB nor ARGB");
    switch (p.codecId) {
    case codec::kUncompressed:
    case codec::kPlanar:
    case codec::kClearCodec:
    case codec::kAlpha:
      break;
    case codec::kAvc420:
    case codec::kAvc444:
    case codec::kAvc444v2:
    case codec::kCaVideo:
      return Violation::protocol(pdu, "codec the console did not advertise");
    case codec::kProgressive:
    case codec::kProgressiveV2:
      return Violation::protocol(pdu, "progressive outside WireToSurface2");
    default:
      return Violation::protocol(pdu, "unknown codec");
    }
    if (!inside(p.dest, s->size, true))
      return Violation::protocol(pdu, "destination rectangle outside the surface");
    if (p.codecId == codec::kUncompressed && p.data.size() != uint64_t(p.dest.width()) * p.dest.height() * 4)
      return Violation::protocol(pdu, "uncompressed bitmap size differs from its rectangle");
    return Ok{};
  }
  Checked<Ok> operator()(const WireToSurface2& p) const {
    constexpr std::string_view pdu = "rdpgfx.WireToSurface2";
    if (!existing(p.surfaceId))
      return Violation::protocol(pdu, "surface does not exist");
    if (p.codecId != codec::kProgressive)
      return Violation::protocol(pdu, "codec other than progressive");
    if (!validFormat(p.pixelFormat))
      return Violation::protocol(pdu, "pixel format is neither XRGB nor ARGB");
    return Ok{};
  }
  Checked<Ok> operator()(const DeleteEncodingContext& p) const {
    if (!existing(p.surfaceId))
      return Violation::protocol("rdpgfx.DeleteEncodingContext", "surface does not exist");
    return Ok{};
  }
  Checked<Ok> operator()(const SolidFill& p) const {
    constexpr std::string_view pdu = "rdpgfx.SolidFill";
    const Surface* s = existing(p.surfaceId);
    if (!s)
      return Violation::protocol(pdu, "surface does not exist");
    uint64_t pixels = 0;
    for (const Rect16& r : p.rects) {
      if (!inside(r, s->size, false))
        return Violation::protocol(pdu, "fill rectangle outside the surface");
      pixels += uint64_t(r.width()) * r.height();
    }
    if (!withinWork(pixels))
      return Violation::resource(pdu, "more pixels than one PDU may write");
    return Ok{};
  }
  Checked<Ok> operator()(const SurfaceToSurface& p) const {
    constexpr std::string_view pdu = "rdpgfx.SurfaceToSurface";
    const Surface* from = existing(p.sourceId);
    const Surface* to = existing(p.destId);
    if (!from || !to)
      return Violation::protocol(pdu, "surface does not exist");
    if (!inside(p.source, from->size, true))
      return Violation::protocol(pdu, "source rectangle outside the surface");
    if (!targetsInside(p.targets, p.source.width(), p.source.height(), to->size))
      return Violation::protocol(pdu, "destination rectangle outside the surface");
    if (!withinWork(uint64_t(p.source.width()) * p.source.height() * p.targets.size()))
      return Violation::resource(pdu, "more pixels than one PDU may write");
    return Ok{};
  }
  Checked<Ok> operator()(const SurfaceToCache& p) const {
    constexpr std::string_view pdu = "rdpgfx.SurfaceToCache";
    const Surface* s = existing(p.surfaceId);
    if (!s)
      return Violation::protocol(pdu, "surface does not exist");
    if (!slotInRange(p.cacheSlot))
      return Violation::protocol(pdu, "cache slot outside 1..maxCacheSlots");
    if (!inside(p.source, s->size, true))
      return Violation::protocol(pdu, "source rectangle outside the surface");
    const uint64_t bytes = uint64_t(p.source.width()) * p.source.height() * 4;
    const SurfaceTable::CacheEntry* old = table.cacheEntry(p.cacheSlot);
    const uint64_t freed = old ? old->bytes() : 0;
    if (table.cacheBytes() - freed + bytes > limits.maxCacheBytes)
      return Violation::resource(pdu, "cache beyond its advertised size");
    if (table.pixelBytes() - freed + bytes > limits.pixelBudgetBytes())
      return Violation::resource(pdu, "pixel memory beyond the budget");
    return Ok{};
  }
  Checked<Ok> operator()(const CacheToSurface& p) const {
    constexpr std::string_view pdu = "rdpgfx.CacheToSurface";
    if (!slotInRange(p.cacheSlot))
      return Violation::protocol(pdu, "cache slot outside 1..maxCacheSlots");
    const SurfaceTable::CacheEntry* entry = table.cacheEntry(p.cacheSlot);
    if (!entry)
      return Violation::protocol(pdu, "cache slot not occupied");
    const Surface* s = existing(p.surfaceId);
    if (!s)
      return Violation::protocol(pdu, "surface does not exist");
    if (!targetsInside(p.targets, uint32_t(entry->size.width()), uint32_t(entry->size.height()), s->size))
      return Violation::protocol(pdu, "destination rectangle outside the surface");
    if (!withinWork(uint64_t(entry->size.width()) * uint64_t(entry->size.height()) * p.targets.size()))
      return Violation::resource(pdu, "more pixels than one PDU may write");
    return Ok{};
  }
  Checked<Ok> operator()(const EvictCacheEntry& p) const {
    constexpr std::string_view pdu = "rdpgfx.EvictCacheEntry";
    if (!slotInRange(p.cacheSlot))
      return Violation::protocol(pdu, "cache slot outside 1..maxCacheSlots");
    if (!table.cacheEntry(p.cacheSlot))
      return Violation::protocol(pdu, "cache slot not occupied");
    return Ok{};
  }
  Checked<Ok> operator()(const CreateSurface& p) const {
    constexpr std::string_view pdu = "rdpgfx.CreateSurface";
    if (existing(p.surfaceId))
      return Violation::protocol(pdu, "surface already exists");
    if (p.width == 0 || p.height == 0)
      return Violation::protocol(pdu, "surface of zero size");
    if (!validFormat(p.pixelFormat))
      return Violation::protocol(pdu, "pixel format is neither XRGB nor ARGB");
    if (p.width > front::Limits::kMaxSide || p.height > front::Limits::kMaxSide)
      return Violation::resource(pdu, "surface side beyond the bound");
    if (table.surfaceCount() >= limits.maxSurfaces)
      return Violation::resource(pdu, "more surfaces than the bound");
    if (table.pixelBytes() + uint64_t(p.width) * p.height * 4 > limits.pixelBudgetBytes())
      return Violation::resource(pdu, "pixel memory beyond the budget");
    return Ok{};
  }
  Checked<Ok> operator()(const DeleteSurface& p) const {
    if (!existing(p.surfaceId) && !table.deletedByReset(p.surfaceId))
      return Violation::protocol("rdpgfx.DeleteSurface", "surface does not exist");
    return Ok{};
  }
  Checked<Ok> operator()(const ResetGraphics& p) const {
    constexpr std::string_view pdu = "rdpgfx.ResetGraphics";
    if (p.width == 0 || p.height == 0)
      return Violation::protocol(pdu, "desktop of zero size");
    if (p.width > front::Limits::kMaxSide || p.height > front::Limits::kMaxSide)
      return Violation::resource(pdu, "desktop side beyond the bound");
    if (!limits.sizeFromServer && (p.width != limits.desktopWidth || p.height != limits.desktopHeight))
      return Violation::desktop(pdu, "desktop size other than the grant's");
    if (uint64_t(p.width) * p.height > uint64_t(limits.desktopWidth) * limits.desktopHeight)
      return Violation::resource(pdu, "desktop larger than the grant's");
    if (!table.desktop().fits(QSize(int(p.width), int(p.height))))
      return Violation::resource(pdu, "desktop beyond the surface of record");
    return Ok{};
  }
  Checked<Ok> operator()(const MapSurfaceToOutput& p) const {
    constexpr std::string_view pdu = "rdpgfx.MapSurfaceToOutput";
    if (!existing(p.surfaceId))
      return Violation::protocol(pdu, "surface does not exist");
    const QSize desktop = table.desktop().size();
    if (p.originX >= uint32_t(desktop.width()) || p.originY >= uint32_t(desktop.height()))
      return Violation::protocol(pdu, "origin outside the desktop");
    return Ok{};
  }
  // Frames and caps are the front's own state: checked in GfxFront::check.
  Checked<Ok> operator()(const StartFrame&) const { return Ok{}; }
  Checked<Ok> operator()(const EndFrame&) const { return Ok{}; }
  Checked<Ok> operator()(const CapsConfirm&) const { return Ok{}; }
  Checked<Ok> operator()(const Refused& p) const {
    const std::string_view pdu = pduName(p.cmd);
    switch (p.cmd) {
    case Cmd::CacheImportReply:
      return Violation::protocol(pdu, "reply to a cache import never offered");
    case Cmd::MapSurfaceToWindow:
    case Cmd::MapSurfaceToScaledWindow:
      return Violation::protocol(pdu, "window maps need RAIL, which the console does not run");
    case Cmd::MapSurfaceToScaledOutput:
      return Violation::protocol(pdu, "scaled maps: the console never scales");
    default:
      return Violation::protocol(pdu, "a client-to-server PDU from the server");
    }
  }
};

} // namespace

void GfxFront::reset() {
  m_caps.reset();
  m_confirmsExpected = 0;
  m_inFrame = false;
  m_frameId = 0;
  m_unacked = 0;
}

Checked<Ok> GfxFront::check(const Pdu& pdu, const SurfaceTable& table) {
  if (const auto* confirm = std::get_if<CapsConfirm>(&pdu)) {
    constexpr std::string_view name = "rdpgfx.CapsConfirm";
    if (m_caps && m_confirmsExpected == 0)
      return Violation::protocol(name, "second CapsConfirm");
    if (confirm->dataLength != 4)
      return Violation::protocol(name, "capsDataLength other than the set's");
    const std::optional<CapsSet> set = confirmedSet(confirm->version, confirm->flags);
    if (!set)
      return Violation::protocol(name, "a capability set never advertised");
    if (m_caps)
      --m_confirmsExpected;
    m_caps = set;
    return Ok{};
  }
  if (!m_caps && !std::holds_alternative<Refused>(pdu))
    return Violation::protocol(pduName(pdu), "PDU before CapsConfirm");
  if (const auto* start = std::get_if<StartFrame>(&pdu)) {
    constexpr std::string_view name = "rdpgfx.StartFrame";
    if (m_inFrame)
      return Violation::protocol(name, "frame started inside a frame");
    if (m_unacked + 1 > m_limits.maxFramesInFlight)
      return Violation::resource(name, "more frames in flight than the bound");
    m_inFrame = true;
    m_frameId = start->frameId;
    return Ok{};
  }
  if (const auto* end = std::get_if<EndFrame>(&pdu)) {
    constexpr std::string_view name = "rdpgfx.EndFrame";
    if (!m_inFrame)
      return Violation::protocol(name, "frame ended outside a frame");
    if (end->frameId != m_frameId)
      return Violation::protocol(name, "frameId differs from its StartFrame");
    m_inFrame = false;
    ++m_unacked;
    return Ok{};
  }
  return std::visit(Checker{m_limits, table}, pdu);
}

} // namespace gc::gfx
