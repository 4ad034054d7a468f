#include "rdp/front/DynvcFront.h"

#include "rdp/front/Wire.h"

#include <algorithm>

namespace gc::front {

namespace {

enum Cmd : uint8_t {
  kCreate = 0x01,
  kDataFirst = 0x02,
  kData = 0x03,
  kClose = 0x04,
  kCapability = 0x05,
  kDataFirstCompressed = 0x06,
  kDataCompressed = 0x07,
  kSoftSyncRequest = 0x08,
};

constexpr uint32_t kMaxSoftSyncTunnels = 2; // TUNNELTYPE_UDPFECR, TUNNELTYPE_UDPFECL
constexpr uint32_t kMaxSoftSyncChannels = 64;

Violation bad(std::string_view pdu, std::string_view rule) {
  return Violation::protocol(pdu, rule);
}

// cbChId / Sp / Len: 0 → 1 byte, 1 → 2, 2 → 4; 3 is invalid.
bool readVar(Wire& w, uint8_t width, uint32_t& v) {
  switch (width) {
  case 0: {
    uint8_t b = 0;
    const bool ok = w.u8(b);
    v = b;
    return ok;
  }
  case 1: {
    uint16_t s = 0;
    const bool ok = w.u16le(s);
    v = s;
    return ok;
  }
  case 2:
    return w.u32le(v);
  default:
    return false;
  }
}

} // namespace

Checked<DynvcInfo> DynvcFront::checkHead(std::span<const uint8_t> head, std::size_t total) {
  if (m_violated)
    return *m_violated;
  Checked<DynvcInfo> result = dispatch(head.first(std::min(head.size(), total)), total);
  if (const auto* v = std::get_if<Violation>(&result))
    m_violated = *v;
  return result;
}

Checked<DynvcInfo> DynvcFront::dispatch(std::span<const uint8_t> head, std::size_t total) {
  if (total == 0 || head.empty())
    return bad("drdynvc", "empty message");
  if (head.size() < std::min(total, kMaxHeadBytes))
    return bad("drdynvc", "internal: the head is shorter than required");
  Wire w(head);
  uint8_t header = 0;
  w.u8(header);
  const uint8_t cmd = header >> 4;
  const uint8_t sp = (header >> 2) & 0x03;
  const uint8_t cbChId = header & 0x03;
  DynvcInfo info;
  switch (cmd) {
  case kCapability: {
    uint8_t pad = 0;
    uint16_t version = 0;
    if (!w.u8(pad) || !w.u16le(version))
      return bad("drdynvc.Caps", "version beyond the message");
    if (version < 1 || version > 3)
      return bad("drdynvc.Caps", "version other than 1, 2 or 3");
    if (total != (version == 1 ? 4u : 12u))
      return bad("drdynvc.Caps", "length differs from the version's fixed size");
    info.kind = DynvcInfo::Kind::Caps;
    info.capsVersion = version;
    return info;
  }
  case kCreate: {
    uint32_t id = 0;
    if (cbChId == 3 || !readVar(w, cbChId, id))
      return bad("drdynvc.Create", "ChannelId width invalid or beyond the message");
    // The NUL is looked for within the bound only, so a head of kMaxHeadBytes decides as the
    // whole message does.
    const std::span<const uint8_t> rest = w.rest();
    const std::span<const uint8_t> room = rest.first(std::min(rest.size(), kMaxNameBytes + 1));
    const auto nul = std::find(room.begin(), room.end(), uint8_t(0));
    if (nul == room.end()) {
      if (rest.size() > kMaxNameBytes)
        return bad("drdynvc.Create", "ChannelName longer than the bound");
      return bad("drdynvc.Create", "ChannelName not NUL-terminated within the message");
    }
    const std::size_t nameBytes = std::size_t(nul - room.begin());
    if (w.position() + nameBytes + 1 != total)
      return bad("drdynvc.Create", "bytes after the ChannelName");
    const std::string_view raw(reinterpret_cast<const char*>(rest.data()), nameBytes);
    info.kind = DynvcInfo::Kind::Create;
    info.channelId = id;
    info.graphics = raw == kGraphicsChannel;
    const std::size_t shown = std::min(nameBytes, m_name.size());
    for (std::size_t i = 0; i < shown; ++i) {
      const char c = raw[i];
      m_name[i] = (c >= 0x20 && c <= 0x7E) ? c : '?';
    }
    info.name = std::string_view(m_name.data(), shown);
    if (info.graphics) {
      if (m_graphics.open && m_limits.maxDynamicChannels <= 1)
        return Violation::resource("drdynvc.Create", "a second graphics channel while one is open");
      m_graphics = Channel{true, id, false, 0, 0};
    } else if (m_graphics.open && id == m_graphics.id) {
      return bad("drdynvc.Create", "ChannelId of the open graphics channel");
    }
    return info;
  }
  case kDataFirst:
  case kData: {
    const std::string_view pdu = cmd == kDataFirst ? "drdynvc.DataFirst" : "drdynvc.Data";
    uint32_t id = 0, declared = 0;
    if (cbChId == 3 || !readVar(w, cbChId, id))
      return bad(pdu, "ChannelId width invalid or beyond the message");
    if (cmd == kDataFirst && (sp == 3 || !readVar(w, sp, declared)))
      return bad(pdu, "Length width invalid or beyond the message");
    const uint64_t carried = total - w.position();
    if (!m_graphics.open || id != m_graphics.id)
      return bad(pdu, "data for a channel that is not open");
    Channel& c = m_graphics;
    info.kind = cmd == kDataFirst ? DynvcInfo::Kind::DataFirst : DynvcInfo::Kind::Data;
    info.channelId = id;
    info.graphics = true;
    info.carried = uint32_t(carried);
    if (cmd == kDataFirst) {
      if (c.reassembling)
        return bad(pdu, "a new message before the last one was complete");
      if (declared > m_limits.maxDvcMessageBytes)
        return Violation::resource(pdu, "declared length beyond the bound");
      if (declared < carried)
        return bad(pdu, "declared length shorter than the data carried");
      info.declaredLength = declared;
      info.complete = declared == carried;
      c.reassembling = !info.complete;
      c.declared = declared;
      c.received = uint32_t(carried);
      return info;
    }
    if (!c.reassembling) {
      if (carried > m_limits.maxDvcMessageBytes)
        return Violation::resource(pdu, "message beyond the bound");
      info.complete = true;
      return info;
    }
    if (carried > uint64_t(c.declared) - c.received)
      return bad(pdu, "data beyond the declared length");
    c.received += uint32_t(carried);
    info.declaredLength = c.declared;
    info.complete = c.received == c.declared;
    if (info.complete)
      c.reassembling = false;
    return info;
  }
  case kClose: {
    uint32_t id = 0;
    if (cbChId == 3 || !readVar(w, cbChId, id))
      return bad("drdynvc.Close", "ChannelId width invalid or beyond the message");
    if (w.position() != total)
      return bad("drdynvc.Close", "bytes after the ChannelId");
    info.kind = DynvcInfo::Kind::Close;
    info.channelId = id;
    if (m_graphics.open && id == m_graphics.id) {
      info.graphics = true;
      m_graphics = Channel{};
    }
    return info;
  }
  case kDataFirstCompressed:
    return bad("drdynvc.DataFirstCompressed", "compressed data without negotiated compression");
  case kDataCompressed:
    return bad("drdynvc.DataCompressed", "compressed data without negotiated compression");
  case kSoftSyncRequest: {
    constexpr std::string_view pdu = "drdynvc.SoftSyncRequest";
    if (total > kMaxHeadBytes)
      return Violation::resource(pdu, "longer than the bound");
    uint8_t pad = 0;
    uint32_t length = 0;
    uint16_t flags = 0, tunnels = 0;
    if (!w.u8(pad) || !w.u32le(length) || !w.u16le(flags) || !w.u16le(tunnels))
      return bad(pdu, "header beyond the message");
    if (length != total)
      return bad(pdu, "Length differs from the message's");
    if (tunnels > kMaxSoftSyncTunnels)
      return bad(pdu, "NumberOfTunnels beyond the bound");
    if (flags & 0x02) { // SOFT_SYNC_CHANNEL_LIST_PRESENT
      for (uint32_t t = 0; t < tunnels; ++t) {
        uint32_t type = 0;
        uint16_t dvcs = 0;
        if (!w.u32le(type) || !w.u16le(dvcs) || dvcs > kMaxSoftSyncChannels || !w.skip(std::size_t(dvcs) * 4))
          return bad(pdu, "channel list beyond the message or the bound");
      }
    }
    if (w.position() != total)
      return bad(pdu, "bytes after the channel lists");
    info.kind = DynvcInfo::Kind::SoftSyncRequest;
    return info;
  }
  default:
    return bad("drdynvc", "a command the server does not send");
  }
}

} // namespace gc::front
