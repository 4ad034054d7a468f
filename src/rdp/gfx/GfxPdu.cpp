#include "rdp/gfx/GfxPdu.h"

#include "rdp/front/Wire.h"

namespace gc::gfx {

namespace {

using front::Checked;
using front::Ok;
using front::Violation;
using front::Wire;

bool rect(Wire& r, Rect16& v) {
  return r.u16le(v.left) && r.u16le(v.top) && r.u16le(v.right) && r.u16le(v.bottom);
}
bool point(Wire& r, Point16& v) {
  return r.u16le(v.x) && r.u16le(v.y);
}
// `count` records of `size` bytes each, which must be the rest of the body exactly.
template <typename T, bool (*read)(Wire&, T&)>
Checked<Ok> records(Wire& r, uint16_t count, std::size_t size, std::string_view name, const char* tooMany,
                    const char* mismatch, std::vector<T>& out) {
  if (count > kMaxRectsPerPdu)
    return Violation::resource(name, tooMany);
  if (r.remaining() != std::size_t(count) * size)
    return Violation::protocol(name, mismatch);
  out.resize(count);
  for (T& v : out)
    (void)read(r, v); // the length was checked above
  return Ok{};
}

// One PDU's body (after the 8-byte header) into its value; the body must be consumed exactly
// (ResetGraphics's pad and CapsConfirm's reserved bytes are part of its fields).
Checked<Pdu> parseBody(Cmd cmd, Wire& r) {
  const std::string_view name = pduName(cmd);
  const auto shortPdu = [&]() -> Checked<Pdu> {
    return Violation::protocol(name, "PDU shorter than its fields");
  };
  const auto finish = [&](Pdu pdu) -> Checked<Pdu> {
    if (!r.atEnd())
      return Violation::protocol(name, "pduLength beyond its fields");
    return pdu;
  };
  const auto then = [&](Checked<Ok> read, Pdu pdu) -> Checked<Pdu> {
    if (front::isViolation(read))
      return std::get<Violation>(read);
    return finish(std::move(pdu));
  };
  switch (cmd) {
  case Cmd::WireToSurface1: {
    WireToSurface1 p{};
    uint32_t length = 0;
    if (!(r.u16le(p.surfaceId) && r.u16le(p.codecId) && r.u8(p.pixelFormat) && rect(r, p.dest) &&
          r.u32le(length) && r.take(length, p.data)))
      return shortPdu();
    return finish(p);
  }
  case Cmd::WireToSurface2: {
    WireToSurface2 p{};
    uint32_t length = 0;
    if (!(r.u16le(p.surfaceId) && r.u16le(p.codecId) && r.u32le(p.codecContextId) && r.u8(p.pixelFormat) &&
          r.u32le(length) && r.take(length, p.data)))
      return shortPdu();
    return finish(p);
  }
  case Cmd::DeleteEncodingContext: {
    DeleteEncodingContext p{};
    if (!(r.u16le(p.surfaceId) && r.u32le(p.codecContextId)))
      return shortPdu();
    return finish(p);
  }
  case Cmd::SolidFill: {
    SolidFill p{};
    uint8_t b = 0, g = 0, rd = 0, xa = 0;
    uint16_t count = 0;
    if (!(r.u16le(p.surfaceId) && r.u8(b) && r.u8(g) && r.u8(rd) && r.u8(xa) && r.u16le(count)))
      return shortPdu();
    p.bgrx = uint32_t(b) | uint32_t(g) << 8 | uint32_t(rd) << 16; // XA ignored (MS-RDPEGFX 2.2.1.4)
    auto read = records<Rect16, rect>(r, count, 8, name, "more rectangles than one PDU may carry",
                                      "fillRectCount differs from pduLength", p.rects);
    return then(read, std::move(p));
  }
  case Cmd::SurfaceToSurface: {
    SurfaceToSurface p{};
    uint16_t count = 0;
    if (!(r.u16le(p.sourceId) && r.u16le(p.destId) && rect(r, p.source) && r.u16le(count)))
      return shortPdu();
    auto read = records<Point16, point>(r, count, 4, name, "more destination points than one PDU may carry",
                                        "destPtsCount differs from pduLength", p.targets);
    return then(read, std::move(p));
  }
  case Cmd::SurfaceToCache: {
    SurfaceToCache p{};
    if (!(r.u16le(p.surfaceId) && r.u64le(p.cacheKey) && r.u16le(p.cacheSlot) && rect(r, p.source)))
      return shortPdu();
    return finish(p);
  }
  case Cmd::CacheToSurface: {
    CacheToSurface p{};
    uint16_t count = 0;
    if (!(r.u16le(p.cacheSlot) && r.u16le(p.surfaceId) && r.u16le(count)))
      return shortPdu();
    auto read = records<Point16, point>(r, count, 4, name, "more destination points than one PDU may carry",
                                        "destPtsCount differs from pduLength", p.targets);
    return then(read, std::move(p));
  }
  case Cmd::EvictCacheEntry: {
    EvictCacheEntry p{};
    if (!r.u16le(p.cacheSlot))
      return shortPdu();
    return finish(p);
  }
  case Cmd::CreateSurface: {
    CreateSurface p{};
    if (!(r.u16le(p.surfaceId) && r.u16le(p.width) && r.u16le(p.height) && r.u8(p.pixelFormat)))
      return shortPdu();
    return finish(p);
  }
  case Cmd::DeleteSurface: {
    DeleteSurface p{};
    if (!r.u16le(p.surfaceId))
      return shortPdu();
    return finish(p);
  }
  case Cmd::StartFrame: {
    StartFrame p{};
    if (!(r.u32le(p.timestamp) && r.u32le(p.frameId)))
      return shortPdu();
    return finish(p);
  }
  case Cmd::EndFrame: {
    EndFrame p{};
    if (!r.u32le(p.frameId))
      return shortPdu();
    return finish(p);
  }
  case Cmd::ResetGraphics: {
    // A fixed 340 bytes: width, height, monitorCount, up to 16 monitors of 20 bytes, pad.
    if (r.remaining() != kResetGraphicsLength - 8)
      return Violation::protocol(name, "pduLength is not 340");
    ResetGraphics p{};
    (void)(r.u32le(p.width) && r.u32le(p.height) && r.u32le(p.monitorCount)); // the length was checked
    if (p.monitorCount > kMaxMonitors)
      return Violation::protocol(name, "more than 16 monitors");
    (void)r.skip(r.remaining()); // the monitors and the pad: the console has one output
    return finish(p);
  }
  case Cmd::MapSurfaceToOutput: {
    MapSurfaceToOutput p{};
    uint16_t reserved = 0;
    if (!(r.u16le(p.surfaceId) && r.u16le(reserved) && r.u32le(p.originX) && r.u32le(p.originY)))
      return shortPdu();
    return finish(p);
  }
  case Cmd::CapsConfirm: {
    CapsConfirm p{};
    if (!(r.u32le(p.version) && r.u32le(p.dataLength)))
      return shortPdu();
    if (p.dataLength != r.remaining())
      return Violation::protocol(name, "capsDataLength differs from pduLength");
    if (p.dataLength < 4)
      return Violation::protocol(name, "capsData shorter than its flags");
    (void)r.u32le(p.flags);
    (void)r.skip(r.remaining()); // 10.1's reserved bytes; GfxFront checks the length per version
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
    (void)r.skip(r.remaining());
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
  Wire r(m_message.subspan(m_pos + 8, pduLength - 8));
  Checked<Pdu> pdu = parseBody(Cmd(cmdId), r);
  if (front::isViolation(pdu))
    return fail(std::get<Violation>(pdu));
  m_pos += pduLength;
  return std::optional<Pdu>(std::move(std::get<Pdu>(pdu)));
}

} // namespace gc::gfx
