#include "rdp/gfx/GfxPdu.h"

namespace gc::gfx {

namespace {

using front::Checked;
using front::Violation;

// Little-endian reads inside one PDU's body; a read past the end marks the reader short.
class Reader {
public:
  explicit Reader(std::span<const uint8_t> body) : m_body(body) {}
  std::size_t left() const { return m_body.size() - m_pos; }
  bool ok() const { return !m_short; }
  uint8_t u8() { return uint8_t(take(1)); }
  uint16_t u16() { return uint16_t(take(2)); }
  uint32_t u32() { return uint32_t(take(4)); }
  uint64_t u64() {
    const uint64_t lo = take(4);
    return lo | take(4) << 32;
  }
  Rect16 rect() {
    Rect16 r;
    r.left = u16();
    r.top = u16();
    r.right = u16();
    r.bottom = u16();
    return r;
  }
  Point16 point() {
    Point16 p;
    p.x = u16();
    p.y = u16();
    return p;
  }
  std::span<const uint8_t> bytes(std::size_t n) {
    if (n > left()) {
      m_short = true;
      m_pos = m_body.size();
      return {};
    }
    const auto s = m_body.subspan(m_pos, n);
    m_pos += n;
    return s;
  }

private:
  uint64_t take(unsigned n) {
    if (n > left()) {
      m_short = true;
      m_pos = m_body.size();
      return 0;
    }
    uint64_t v = 0;
    for (unsigned i = 0; i < n; ++i)
      v |= uint64_t(m_body[m_pos + i]) << (8 * i);
    m_pos += n;
    return v;
  }
  std::span<const uint8_t> m_body;
  std::size_t m_pos = 0;
  bool m_short = false;
};

// One PDU's body (after the 8-byte header) into its value. `exact`: the body must be
// consumed exactly (every kind but ResetGraphics, whose pad is fixed by its length).
Checked<Pdu> parseBody(Cmd cmd, Reader& r) {
  const std::string_view name = pduName(cmd);
  const auto finish = [&](Pdu pdu) -> Checked<Pdu> {
    if (!r.ok())
      return Violation::protocol(name, "PDU shorter than its fields");
    if (r.left() != 0)
      return Violation::protocol(name, "pduLength beyond its fields");
    return pdu;
  };
  switch (cmd) {
  case Cmd::WireToSurface1: {
    WireToSurface1 p{};
    p.surfaceId = r.u16();
    p.codecId = r.u16();
    p.pixelFormat = r.u8();
    p.dest = r.rect();
    const uint32_t length = r.u32();
    p.data = r.bytes(length);
    return finish(p);
  }
  case Cmd::WireToSurface2: {
    WireToSurface2 p{};
    p.surfaceId = r.u16();
    p.codecId = r.u16();
    p.codecContextId = r.u32();
    p.pixelFormat = r.u8();
    const uint32_t length = r.u32();
    p.data = r.bytes(length);
    return finish(p);
  }
  case Cmd::DeleteEncodingContext: {
    DeleteEncodingContext p{};
    p.surfaceId = r.u16();
    p.codecContextId = r.u32();
    return finish(p);
  }
  case Cmd::SolidFill: {
    SolidFill p{};
    p.surfaceId = r.u16();
    const uint8_t b = r.u8(), g = r.u8(), rd = r.u8();
    (void)r.u8(); // XA: ignored (MS-RDPEGFX 2.2.1.4)
    p.bgrx = uint32_t(b) | uint32_t(g) << 8 | uint32_t(rd) << 16;
    const uint16_t count = r.u16();
    if (count > kMaxRectsPerPdu)
      return Violation::resource(name, "more rectangles than one PDU may carry");
    if (r.ok() && r.left() != std::size_t(count) * 8)
      return Violation::protocol(name, "fillRectCount differs from pduLength");
    p.rects.reserve(count);
    for (uint16_t i = 0; i < count; ++i)
      p.rects.push_back(r.rect());
    return finish(std::move(p));
  }
  case Cmd::SurfaceToSurface: {
    SurfaceToSurface p{};
    p.sourceId = r.u16();
    p.destId = r.u16();
    p.source = r.rect();
    const uint16_t count = r.u16();
    if (count > kMaxRectsPerPdu)
      return Violation::resource(name, "more destination points than one PDU may carry");
    if (r.ok() && r.left() != std::size_t(count) * 4)
      return Violation::protocol(name, "destPtsCount differs from pduLength");
    p.targets.reserve(count);
    for (uint16_t i = 0; i < count; ++i)
      p.targets.push_back(r.point());
    return finish(std::move(p));
  }
  case Cmd::SurfaceToCache: {
    SurfaceToCache p{};
    p.surfaceId = r.u16();
    p.cacheKey = r.u64();
    p.cacheSlot = r.u16();
    p.source = r.rect();
    return finish(p);
  }
  case Cmd::CacheToSurface: {
    CacheToSurface p{};
    p.cacheSlot = r.u16();
    p.surfaceId = r.u16();
    const uint16_t count = r.u16();
    if (count > kMaxRectsPerPdu)
      return Violation::resource(name, "more destination points than one PDU may carry");
    if (r.ok() && r.left() != std::size_t(count) * 4)
      return Violation::protocol(name, "destPtsCount differs from pduLength");
    p.targets.reserve(count);
    for (uint16_t i = 0; i < count; ++i)
      p.targets.push_back(r.point());
    return finish(std::move(p));
  }
  case Cmd::EvictCacheEntry: {
    EvictCacheEntry p{};
    p.cacheSlot = r.u16();
    return finish(p);
  }
  case Cmd::CreateSurface: {
    CreateSurface p{};
    p.surfaceId = r.u16();
    p.width = r.u16();
    p.height = r.u16();
    p.pixelFormat = r.u8();
    return finish(p);
  }
  case Cmd::DeleteSurface: {
    DeleteSurface p{};
    p.surfaceId = r.u16();
    return finish(p);
  }
  case Cmd::StartFrame: {
    StartFrame p{};
    p.timestamp = r.u32();
    p.frameId = r.u32();
    return finish(p);
  }
  case Cmd::EndFrame: {
    EndFrame p{};
    p.frameId = r.u32();
    return finish(p);
  }
  case Cmd::ResetGraphics: {
    // A fixed 340 bytes: width, height, monitorCount, up to 16 monitors of 20 bytes, pad.
    if (r.left() != kResetGraphicsLength - 8)
      return Violation::protocol(name, "pduLength is not 340");
    ResetGraphics p{};
    p.width = r.u32();
    p.height = r.u32();
    p.monitorCount = r.u32();
    if (p.monitorCount > kMaxMonitors)
      return Violation::protocol(name, "more than 16 monitors");
    (void)r.bytes(r.left()); // the monitors and the pad: the console has one output
    return finish(p);
  }
  case Cmd::MapSurfaceToOutput: {
    MapSurfaceToOutput p{};
    p.surfaceId = r.u16();
    (void)r.u16(); // reserved
    p.originX = r.u32();
    p.originY = r.u32();
    return finish(p);
  }
  case Cmd::CapsConfirm: {
    CapsConfirm p{};
    p.version = r.u32();
    p.dataLength = r.u32();
    if (r.ok() && p.dataLength != r.left())
      return Violation::protocol(name, "capsDataLength differs from pduLength");
    if (p.dataLength < 4)
      return Violation::protocol(name, "capsData shorter than its flags");
    p.flags = r.u32();
    (void)r.bytes(r.left()); // 10.1's reserved bytes; GfxFront checks the length per version
    return finish(p);
  }
  case Cmd::CacheImportReply:
  case Cmd::MapSurfaceToWindow:
  case Cmd::MapSurfaceToScaledOutput:
  case Cmd::MapSurfaceToScaledWindow:
  case Cmd::FrameAcknowledge:
  case Cmd::CacheImportOffer:
  case Cmd::CapsAdvertise:
  case Cmd::QoeFrameAcknowledge:
    (void)r.bytes(r.left());
    return Pdu(Refused{cmd});
  }
  return Violation::protocol("rdpgfx", "unknown cmdId");
}

bool knownCmd(uint16_t id) {
  return (id >= 0x0001 && id <= 0x0013) || (id >= 0x0015 && id <= 0x0018);
}

} // namespace

std::string_view pduName(Cmd cmd) {
  switch (cmd) {
  case Cmd::WireToSurface1:
    return "rdpgfx.WireToSurface1";
  case Cmd::WireToSurface2:
    return "rdpgfx.WireToSurface2";
  case Cmd::DeleteEncodingContext:
    return "rdpgfx.DeleteEncodingContext";
  case Cmd::SolidFill:
    return "rdpgfx.SolidFill";
  case Cmd::SurfaceToSurface:
    return "rdpgfx.SurfaceToSurface";
  case Cmd::SurfaceToCache:
    return "rdpgfx.SurfaceToCache";
  case Cmd::CacheToSurface:
    return "rdpgfx.CacheToSurface";
  case Cmd::EvictCacheEntry:
    return "rdpgfx.EvictCacheEntry";
  case Cmd::CreateSurface:
    return "rdpgfx.CreateSurface";
  case Cmd::DeleteSurface:
    return "rdpgfx.DeleteSurface";
  case Cmd::StartFrame:
    return "rdpgfx.StartFrame";
  case Cmd::EndFrame:
    return "rdpgfx.EndFrame";
  case Cmd::FrameAcknowledge:
    return "rdpgfx.FrameAcknowledge";
  case Cmd::ResetGraphics:
    return "rdpgfx.ResetGraphics";
  case Cmd::MapSurfaceToOutput:
    return "rdpgfx.MapSurfaceToOutput";
  case Cmd::CacheImportOffer:
    return "rdpgfx.CacheImportOffer";
  case Cmd::CacheImportReply:
    return "rdpgfx.CacheImportReply";
  case Cmd::CapsAdvertise:
    return "rdpgfx.CapsAdvertise";
  case Cmd::CapsConfirm:
    return "rdpgfx.CapsConfirm";
  case Cmd::MapSurfaceToWindow:
    return "rdpgfx.MapSurfaceToWindow";
  case Cmd::QoeFrameAcknowledge:
    return "rdpgfx.QoeFrameAcknowledge";
  case Cmd::MapSurfaceToScaledOutput:
    return "rdpgfx.MapSurfaceToScaledOutput";
  case Cmd::MapSurfaceToScaledWindow:
    return "rdpgfx.MapSurfaceToScaledWindow";
  }
  return "rdpgfx";
}

std::string_view pduName(const Pdu& pdu) {
  struct Namer {
    std::string_view operator()(const WireToSurface1&) const { return pduName(Cmd::WireToSurface1); }
    std::string_view operator()(const WireToSurface2&) const { return pduName(Cmd::WireToSurface2); }
    std::string_view operator()(const DeleteEncodingContext&) const {
      return pduName(Cmd::DeleteEncodingContext);
    }
    std::string_view operator()(const SolidFill&) const { return pduName(Cmd::SolidFill); }
    std::string_view operator()(const SurfaceToSurface&) const { return pduName(Cmd::SurfaceToSurface); }
    std::string_view operator()(const SurfaceToCache&) const { return pduName(Cmd::SurfaceToCache); }
    std::string_view operator()(const CacheToSurface&) const { return pduName(Cmd::CacheToSurface); }
    std::string_view operator()(const EvictCacheEntry&) const { return pduName(Cmd::EvictCacheEntry); }
    std::string_view operator()(const CreateSurface&) const { return pduName(Cmd::CreateSurface); }
    std::string_view operator()(const DeleteSurface&) const { return pduName(Cmd::DeleteSurface); }
    std::string_view operator()(const StartFrame&) const { return pduName(Cmd::StartFrame); }
    std::string_view operator()(const EndFrame&) const { return pduName(Cmd::EndFrame); }
    std::string_view operator()(const ResetGraphics&) const { return pduName(Cmd::ResetGraphics); }
    std::string_view operator()(const MapSurfaceToOutput&) const { return pduName(Cmd::MapSurfaceToOutput); }
    std::string_view operator()(const CapsConfirm&) const { return pduName(Cmd::CapsConfirm); }
    std::string_view operator()(const Refused& r) const { return pduName(r.cmd); }
  };
  return std::visit(Namer{}, pdu);
}

Checked<std::optional<Pdu>> PduCursor::next() {
  if (m_failed)
    return Violation::protocol("rdpgfx", "read past a violation");
  const auto fail = [this](Violation v) -> Checked<std::optional<Pdu>> {
    m_failed = true;
    return v;
  };
  if (m_message.empty())
    return fail(Violation::protocol("rdpgfx", "empty message"));
  if (m_pos == m_message.size())
    return std::optional<Pdu>();
  if (m_message.size() - m_pos < 8)
    return fail(Violation::protocol("rdpgfx", "RDPGFX_HEADER truncated"));
  const auto at = [&](std::size_t i) { return uint32_t(m_message[m_pos + i]); };
  const uint16_t cmdId = uint16_t(at(0) | at(1) << 8);
  const uint32_t pduLength = at(4) | at(5) << 8 | at(6) << 16 | at(7) << 24;
  if (!knownCmd(cmdId))
    return fail(Violation::protocol("rdpgfx", "unknown cmdId"));
  if (pduLength < 8 || pduLength > m_message.size() - m_pos)
    return fail(Violation::protocol(pduName(Cmd(cmdId)), "pduLength outside the message"));
  Reader r(m_message.subspan(m_pos + 8, pduLength - 8));
  Checked<Pdu> pdu = parseBody(Cmd(cmdId), r);
  if (front::isViolation(pdu))
    return fail(std::get<Violation>(pdu));
  m_pos += pduLength;
  return std::optional<Pdu>(std::move(std::get<Pdu>(pdu)));
}

} // namespace gc::gfx
