#include "rdp/front/PduFront.h"

#include "rdp/front/Wire.h"

#include <algorithm>

namespace gc::front {

namespace {

using Kind = PduInfo::Kind;

// MS-RDPBCGR constants (2.2.1.x, 2.2.8.x, 2.2.9.x).
constexpr uint8_t kX224ConnectionConfirm = 0xD0;
constexpr uint8_t kX224DisconnectRequest = 0x80;
constexpr uint8_t kX224Data = 0xF0;
constexpr uint8_t kMcsAttachUserConfirm = 11;
constexpr uint8_t kMcsChannelJoinConfirm = 15;
constexpr uint8_t kMcsDisconnectProviderUltimatum = 8;
constexpr uint8_t kMcsSendDataIndication = 26;
constexpr uint16_t kSecEncrypt = 0x0008;
constexpr uint16_t kSecLicensePkt = 0x0080;
constexpr uint16_t kSecRedirectionPkt = 0x0400;
constexpr uint16_t kSecAutodetectReq = 0x1000;
constexpr uint16_t kSecHeartbeat = 0x2000;
constexpr uint32_t kChannelFlagFirst = 0x00000001;
constexpr uint32_t kChannelFlagLast = 0x00000002;
constexpr uint32_t kChannelPacketCompressed = 0x00200000;
constexpr uint16_t kPduTypeDemandActive = 0x1;
constexpr uint16_t kPduTypeConfirmActive = 0x3;
constexpr uint16_t kPduTypeDeactivateAll = 0x6;
constexpr uint16_t kPduTypeData = 0x7;
constexpr uint16_t kPduTypeServerRedirection = 0xA;
constexpr uint16_t kProtocolVersion = 0x0010;
constexpr uint16_t kFlowMarker = 0x8000;
constexpr uint16_t kCapsetBitmap = 0x0002;
constexpr uint32_t kMaxCapabilitySets = 64;
constexpr uint32_t kMaxMonitors = 16;
constexpr std::size_t kMaxSaveSessionInfo = 2048;

// Fast-path update codes (2.2.9.1.2.1) and what each is validated as.
struct FastPathCode {
  bool known;
  UpdateStream::Kind kind;
  std::string_view pdu;
};
constexpr FastPathCode kFastPathCodes[16] = {
    {false, UpdateStream::Kind::Empty, "fastpath.Orders"},
    {true, UpdateStream::Kind::Bitmap, "fastpath.Bitmap"},
    {true, UpdateStream::Kind::Palette, "fastpath.Palette"},
    {true, UpdateStream::Kind::Empty, "fastpath.Synchronize"},
    {true, UpdateStream::Kind::SurfaceCommands, "fastpath.SurfaceCommands"},
    {true, UpdateStream::Kind::Empty, "fastpath.PointerNull"},
    {true, UpdateStream::Kind::Empty, "fastpath.PointerDefault"},
    {false, UpdateStream::Kind::Empty, "fastpath.Update"},
    {true, UpdateStream::Kind::PointerPosition, "fastpath.PointerPosition"},
    {true, UpdateStream::Kind::PointerColor, "fastpath.PointerColor"},
    {true, UpdateStream::Kind::PointerCached, "fastpath.PointerCached"},
    {true, UpdateStream::Kind::PointerNew, "fastpath.PointerNew"},
    {true, UpdateStream::Kind::PointerLarge, "fastpath.PointerLarge"},
    {false, UpdateStream::Kind::Empty, "fastpath.Update"},
    {false, UpdateStream::Kind::Empty, "fastpath.Update"},
    {false, UpdateStream::Kind::Empty, "fastpath.Update"},
};

Violation bad(std::string_view pdu, std::string_view rule) {
  return Violation::protocol(pdu, rule);
}

std::optional<Violation> exactly(std::span<const uint8_t> payload, std::size_t n, std::string_view pdu) {
  if (payload.size() != n)
    return bad(pdu, "length differs from the PDU's fixed size");
  return std::nullopt;
}

// One update carried whole (slow path, or a single fast-path update).
std::optional<Violation> validateWhole(UpdateStream::Kind kind, std::string_view pdu, UpdateContext* ctx,
                                       std::span<const uint8_t> data) {
  UpdateStream stream;
  stream.begin(kind, pdu, ctx);
  if (auto v = stream.feed(data))
    return v;
  return stream.finish();
}

} // namespace

PduFront::PduFront(Limits limits) : m_limits(limits) {
  m_update.limits = &m_limits;
}

void PduFront::setStaticChannels(std::span<const uint16_t> staticChannels) {
  m_channelCount = 0;
  for (uint16_t id : staticChannels) {
    if (id == 0 || id == kIoChannel || channel(id) || m_channelCount == m_channels.size())
      continue;
    m_channels[m_channelCount++] = Channel{id, false, 0, 0};
  }
  m_channelsSet = true;
}

bool PduFront::joined(uint16_t id) const {
  return std::find(m_joined.begin(), m_joined.begin() + std::ptrdiff_t(m_joinedCount), id) !=
         m_joined.begin() + std::ptrdiff_t(m_joinedCount);
}

PduFront::Channel* PduFront::channel(uint16_t id) {
  for (std::size_t i = 0; i < m_channelCount; ++i) {
    if (m_channels[i].id == id)
      return &m_channels[i];
  }
  return nullptr;
}

Checked<PduInfo> PduFront::check(std::span<const uint8_t> pdu) {
  if (m_violated)
    return *m_violated;
  Checked<PduInfo> result = dispatch(pdu);
  if (const auto* v = std::get_if<Violation>(&result))
    m_violated = *v;
  return result;
}

Checked<PduInfo> PduFront::dispatch(std::span<const uint8_t> pdu) {
  if (pdu.empty())
    return bad("pdu", "empty PDU");
  if (pdu[0] == 0x03)
    return checkTpkt(pdu);
  if (m_phase == Phase::Security) {
    if (pdu[0] == 0x30)
      return checkTsRequest(pdu);
    if (pdu.size() == 4 && m_tsRequestSeen) { // HYBRID_EX: Early User Authorization Result
      const uint32_t result = le32(pdu.data());
      if (result != 0x00000000 && result != 0x00000005) // SUCCESS, ACCESS_DENIED
        return bad("credssp.EarlyUserAuthResult", "unknown authorizationResult");
      return PduInfo{Kind::EarlyUserAuth};
    }
  }
  return checkFastPath(pdu);
}

Checked<PduInfo> PduFront::checkTsRequest(std::span<const uint8_t> pdu) {
  Wire w(pdu);
  w.skip(1);
  std::size_t length = 0;
  if (!w.berLength(length))
    return bad("credssp.TSRequest", "DER length not in short, 0x81 or 0x82 form");
  if (w.position() + length != pdu.size())
    return bad("credssp.TSRequest", "DER length differs from the PDU's");
  m_tsRequestSeen = true;
  return PduInfo{Kind::TsRequest};
}

Checked<PduInfo> PduFront::checkTpkt(std::span<const uint8_t> pdu) {
  if (pdu.size() < 7)
    return bad("tpkt", "shorter than a TPKT header and an X.224 TPDU");
  if (pdu[1] != 0)
    return bad("tpkt", "reserved byte is not zero");
  if (((std::size_t(pdu[2]) << 8) | pdu[3]) != pdu.size())
    return bad("tpkt", "length differs from the PDU's");
  const uint8_t li = pdu[4];
  const uint8_t code = pdu[5];
  if (code == kX224ConnectionConfirm) {
    if (m_phase > Phase::Security)
      return bad("x224.ConnectionConfirm", "after the MCS connection");
    return checkConnectionConfirm(pdu.subspan(4));
  }
  if (code == kX224DisconnectRequest) {
    if (li < 6 || std::size_t(li) + 5 != pdu.size())
      return bad("x224.DisconnectRequest", "length indicator differs from the TPDU's");
    return PduInfo{Kind::X224Disconnect};
  }
  if (code != kX224Data)
    return bad("x224", "TPDU code the client does not accept");
  if (li != 2 || pdu[6] != 0x80)
    return bad("x224.Data", "length indicator or EOT not as in a Data TPDU");
  const std::span<const uint8_t> mcs = pdu.subspan(7);
  if (m_phase <= Phase::Security) {
    if (m_phase != Phase::Security)
      return bad("mcs.ConnectResponse", "before the X.224 Connection Confirm");
    Wire w(mcs);
    uint8_t t0 = 0, t1 = 0;
    std::size_t length = 0;
    if (!w.u8(t0) || !w.u8(t1) || t0 != 0x7F || t1 != 0x66)
      return bad("mcs.ConnectResponse", "not a BER Connect-Response");
    if (!w.berLength(length) || w.position() + length != mcs.size())
      return bad("mcs.ConnectResponse", "BER length differs from the PDU's");
    m_phase = Phase::Domain;
    return PduInfo{Kind::McsConnectResponse};
  }
  return checkDomain(mcs);
}

Checked<PduInfo> PduFront::checkConnectionConfirm(std::span<const uint8_t> tpdu) {
  const uint8_t li = tpdu[0];
  if (std::size_t(li) + 1 != tpdu.size())
    return bad("x224.ConnectionConfirm", "length indicator differs from the TPDU's");
  if (li != 6 && li != 14)
    return bad("x224.ConnectionConfirm", "neither bare nor with one RDP negotiation structure");
  if (tpdu[6] != 0)
    return bad("x224.ConnectionConfirm", "class option is not zero");
  if (li == 14) {
    const uint8_t type = tpdu[7];
    if (type != 0x02 && type != 0x03) // TYPE_RDP_NEG_RSP, TYPE_RDP_NEG_FAILURE
      return bad("x224.ConnectionConfirm", "negotiation type is neither a response nor a failure");
    if (le16(tpdu.data() + 9) != 8)
      return bad("x224.ConnectionConfirm", "negotiation length is not 8");
  }
  // A failure makes FreeRDP try the next protocol on a new connection: another confirm.
  m_phase = Phase::Security;
  m_tsRequestSeen = false;
  return PduInfo{Kind::ConnectionConfirm};
}

Checked<PduInfo> PduFront::checkDomain(std::span<const uint8_t> mcs) {
  if (mcs.empty())
    return bad("mcs", "empty MCS PDU");
  const uint8_t choice = mcs[0] >> 2;
  switch (choice) {
  case kMcsAttachUserConfirm: // choice, result, initiator (what FreeRDP reads, all of it)
    if (m_phase != Phase::Domain)
      return bad("mcs.AttachUserConfirm", "after the channels were joined");
    if (mcs.size() != 4)
      return bad("mcs.AttachUserConfirm", "length differs from the PDU's fixed size");
    if (mcs[1] == 0) // rt-successful
      m_userChannel = uint16_t(((mcs[2] << 8) | mcs[3]) + 1001);
    return PduInfo{Kind::McsAttachUserConfirm};
  case kMcsChannelJoinConfirm: { // choice, result, initiator, requested, channelId
    if (m_phase != Phase::Domain)
      return bad("mcs.ChannelJoinConfirm", "after the channels were joined");
    if (mcs.size() != 8)
      return bad("mcs.ChannelJoinConfirm", "length differs from the PDU's fixed size");
    const uint16_t id = uint16_t((mcs[6] << 8) | mcs[7]);
    if (mcs[1] == 0 && id != kIoChannel && id != m_userChannel && !joined(id)) {
      if (m_joinedCount == m_joined.size())
        return Violation::resource("mcs.ChannelJoinConfirm", "more channels than the client requested");
      m_joined[m_joinedCount++] = id;
    }
    return PduInfo{Kind::McsChannelJoinConfirm};
  }
  case kMcsDisconnectProviderUltimatum:
    if (mcs.size() != 2)
      return bad("mcs.DisconnectProviderUltimatum", "length differs from the PDU's fixed size");
    return PduInfo{Kind::McsDisconnectUltimatum};
  case kMcsSendDataIndication: {
    Wire w(mcs);
    w.skip(1);
    uint16_t initiator = 0, channelId = 0, length = 0;
    uint8_t priority = 0;
    if (!w.u16be(initiator) || !w.u16be(channelId) || !w.u8(priority) || !w.perLength(length))
      return bad("mcs.SendDataIndication", "header beyond the PDU");
    if (initiator > 0xFFFF - 1001)
      return bad("mcs.SendDataIndication", "initiator beyond the channel id range");
    if ((priority & 0x30) != 0x30)
      return bad("mcs.SendDataIndication", "segmented MCS data");
    if (length != w.remaining())
      return bad("mcs.SendDataIndication", "PER length differs from the TPKT length");
    const uint32_t offset = uint32_t(7 + w.position());
    m_dataOffset = offset;
    return checkSendData(channelId, w.rest());
  }
  default:
    return bad("mcs", "MCS PDU the client does not accept");
  }
}

Checked<PduInfo> PduFront::checkSendData(uint16_t channelId, std::span<const uint8_t> data) {
  if (channelId == kIoChannel) {
    if (m_phase == Phase::Domain)
      m_phase = Phase::Licensing;
    if (m_phase == Phase::Licensing)
      return checkLicense(data);
    return checkShareControl(data);
  }
  if (!joined(channelId))
    return bad("mcs.SendDataIndication", "data on a channel the client did not join");
  if (!m_channelsSet)
    return bad("mcs.SendDataIndication", "data on a channel before the channels are known");
  if (Channel* c = channel(channelId))
    return checkChannelChunk(*c, data, m_dataOffset);
  return checkMessageChannel(data);
}

Checked<PduInfo> PduFront::checkLicense(std::span<const uint8_t> data) {
  constexpr std::string_view pdu = "license";
  Wire w(data);
  uint16_t flags = 0, flagsHi = 0, size = 0;
  uint8_t msgType = 0, msgFlags = 0;
  if (!w.u16le(flags) || !w.u16le(flagsHi))
    return bad(pdu, "security header beyond the PDU");
  if (flags & kSecRedirectionPkt) {
    PduInfo info{Kind::ServerRedirection};
    info.redirection = true;
    return info;
  }
  if (!(flags & kSecLicensePkt))
    return bad(pdu, "licensing PDU without SEC_LICENSE_PKT");
  if (flags & kSecEncrypt)
    return bad(pdu, "encrypted without RDP security");
  if (!w.u8(msgType) || !w.u8(msgFlags) || !w.u16le(size))
    return bad(pdu, "preamble beyond the PDU");
  if (size != data.size() - 4)
    return bad(pdu, "wMsgSize differs from the PDU's");
  switch (msgType) {
  case 0x01: // LICENSE_REQUEST
  case 0x02: // PLATFORM_CHALLENGE
    break;
  case 0x03: // NEW_LICENSE
  case 0x04: // UPGRADE_LICENSE
    m_phase = Phase::Capabilities;
    break;
  case 0xFF: { // ERROR_ALERT
    uint32_t errorCode = 0, transition = 0;
    uint16_t blobType = 0, blobLength = 0;
    if (!w.u32le(errorCode) || !w.u32le(transition) || !w.u16le(blobType) || !w.u16le(blobLength))
      return bad(pdu, "error alert beyond the PDU");
    if (blobLength != w.remaining())
      return bad(pdu, "error info blob length differs from the PDU's");
    if (errorCode == 0x00000007 || transition == 0x00000002) // STATUS_VALID_CLIENT, ST_NO_TRANSITION
      m_phase = Phase::Capabilities;
    break;
  }
  default:
    return bad(pdu, "unknown bMsgType");
  }
  return PduInfo{Kind::License};
}

Checked<PduInfo> PduFront::checkMessageChannel(std::span<const uint8_t> data) {
  constexpr std::string_view pdu = "mcs.MessageChannel";
  Wire w(data);
  uint16_t flags = 0, flagsHi = 0;
  if (!w.u16le(flags) || !w.u16le(flagsHi))
    return bad(pdu, "security header beyond the PDU");
  if (flags & kSecAutodetectReq) {
    uint8_t headerLength = 0, typeId = 0;
    if (!w.u8(headerLength) || !w.u8(typeId) || typeId != 0x00) // TYPE_ID_AUTODETECT_REQUEST
      return bad(pdu, "not an auto-detect request");
    if (headerLength < 6 || std::size_t(headerLength) != w.remaining() + 2)
      return bad(pdu, "auto-detect headerLength differs from the PDU's");
    return PduInfo{Kind::MessageChannel};
  }
  if (flags & kSecHeartbeat) {
    if (w.remaining() != 4)
      return bad(pdu, "heartbeat length differs from the PDU's fixed size");
    return PduInfo{Kind::MessageChannel};
  }
  return bad(pdu, "a message-channel PDU the console did not negotiate");
}

Checked<PduInfo> PduFront::checkChannelChunk(Channel& c, std::span<const uint8_t> data, uint32_t offset) {
  constexpr std::string_view pdu = "channel.Chunk";
  Wire w(data);
  uint32_t total = 0, flags = 0;
  if (!w.u32le(total) || !w.u32le(flags))
    return bad(pdu, "CHANNEL_PDU_HEADER beyond the PDU");
  if (flags & kChannelPacketCompressed)
    return bad(pdu, "compressed without negotiated channel compression");
  const uint32_t chunk = uint32_t(w.remaining());
  if (flags & kChannelFlagFirst) {
    if (c.open)
      return bad(pdu, "a new message before the last one ended");
    if (total > m_limits.maxChannelMessageBytes)
      return Violation::resource(pdu, "declared message length beyond the bound");
    if (chunk > total)
      return bad(pdu, "chunk beyond the declared length");
    if (flags & kChannelFlagLast) {
      if (chunk != total)
        return bad(pdu, "single chunk differs from the declared length");
    } else {
      c.open = true;
      c.total = total;
      c.received = chunk;
    }
  } else {
    if (!c.open)
      return bad(pdu, "a chunk without a first");
    if (total != c.total)
      return bad(pdu, "declared length changed within a message");
    if (chunk > c.total - c.received)
      return bad(pdu, "chunks beyond the declared length");
    c.received += chunk;
    if (flags & kChannelFlagLast) {
      if (c.received != c.total)
        return bad(pdu, "the message ends short of its declared length");
      c.open = false;
    }
  }
  PduInfo info{Kind::ChannelData};
  info.channelId = c.id;
  info.chunkOffset = offset + 8;
  info.chunkLength = chunk;
  info.channelFlags = flags;
  info.channelTotal = total;
  return info;
}

Checked<PduInfo> PduFront::checkShareControl(std::span<const uint8_t> data) {
  PduInfo info{Kind::SlowPath};
  if (data.empty())
    return bad("slowpath.ShareControl", "empty");
  while (!data.empty()) {
    if (data.size() < 2)
      return bad("slowpath.ShareControl", "trailing bytes after the last PDU");
    const uint16_t totalLength = le16(data.data());
    if (totalLength == kFlowMarker) {
      if (data.size() < 8)
        return bad("slowpath.Flow", "flow PDU beyond the data");
      const uint8_t flowType = data[2];
      if (flowType != 0x41 && flowType != 0x42 && flowType != 0x43) // FLOW_TEST, FLOW_RESPONSE, FLOW_STOP
        return bad("slowpath.Flow", "unknown pduTypeFlow");
      data = data.subspan(8);
      ++info.items;
      continue;
    }
    if (totalLength < 6 || totalLength > data.size())
      return bad("slowpath.ShareControl", "totalLength beyond the data or shorter than its header");
    const uint16_t pduType = le16(data.data() + 2);
    if ((pduType & 0xFFF0) != kProtocolVersion)
      return bad("slowpath.ShareControl", "protocol version is not 1");
    const std::span<const uint8_t> body = data.subspan(6, totalLength - 6u);
    switch (pduType & 0x000F) {
    case kPduTypeDemandActive:
      if (auto v = checkDemandActive(body, info))
        return *v;
      break;
    case kPduTypeDeactivateAll: {
      if (m_phase < Phase::Finalizing)
        return bad("slowpath.DeactivateAll", "before a Demand Active");
      Wire w(body);
      uint32_t shareId = 0;
      uint16_t sourceLength = 0;
      if (!w.u32le(shareId) || !w.u16le(sourceLength) || sourceLength != w.remaining())
        return bad("slowpath.DeactivateAll", "lengthSourceDescriptor differs from the PDU's");
      m_phase = Phase::Capabilities;
      m_update.framesOpen = 0;
      info.deactivated = true;
      break;
    }
    case kPduTypeData:
      if (auto v = checkShareData(body, info))
        return *v;
      break;
    case kPduTypeServerRedirection: {
      // pad2, then TS_SERVER_REDIRECTION_PDU: flags, length, sessionID, redirFlags. Only the
      // flags are read; the rest (targets, cookies) is never looked at.
      info.kind = Kind::ServerRedirection;
      info.redirection = true;
      if (body.size() >= 14)
        info.redirectionFlags = le32(body.data() + 10);
      return info; // refused whole: nothing after it matters
    }
    case kPduTypeConfirmActive:
      return bad("slowpath.ShareControl", "a client PDU type (Confirm Active)");
    default:
      return bad("slowpath.ShareControl", "unknown pduType");
    }
    ++info.items;
    data = data.subspan(totalLength);
  }
  return info;
}

std::optional<Violation> PduFront::checkDesktop(uint32_t width, uint32_t height) const {
  constexpr std::string_view pdu = "slowpath.DemandActive";
  if (width == 0 || height == 0)
    return bad(pdu, "desktop width or height is zero");
  const uint64_t pixels = uint64_t(width) * height;
  const uint64_t granted = uint64_t(m_limits.desktopWidth) * m_limits.desktopHeight;
  if (m_limits.sizeFromServer) {
    if (width > Limits::kMaxSide || height > Limits::kMaxSide)
      return Violation::resource(pdu, "desktop side beyond the maximum");
    if (pixels > granted)
      return Violation::resource(pdu, "desktop larger than the grant's pixel count");
    return std::nullopt;
  }
  if (width != m_limits.desktopWidth || height != m_limits.desktopHeight) {
    if (pixels > granted)
      return Violation::resource(pdu, "desktop larger than the grant's");
    return bad(pdu, "desktop size differs from the grant's");
  }
  return std::nullopt;
}

std::optional<Violation> PduFront::checkDemandActive(std::span<const uint8_t> body, PduInfo& info) {
  constexpr std::string_view pdu = "slowpath.DemandActive";
  if (m_phase != Phase::Capabilities)
    return bad(pdu, "outside the capability exchange");
  Wire w(body);
  uint32_t shareId = 0;
  uint16_t sourceLength = 0, combinedLength = 0, count = 0, pad = 0;
  if (!w.u32le(shareId) || !w.u16le(sourceLength) || !w.u16le(combinedLength) || !w.skip(sourceLength))
    return bad(pdu, "source descriptor beyond the PDU");
  if (combinedLength < 4 || combinedLength > w.remaining())
    return bad(pdu, "lengthCombinedCapabilities beyond the PDU");
  const std::size_t after = w.remaining() - combinedLength;
  if (after != 0 && after != 4) // sessionId
    return bad(pdu, "bytes after the capabilities other than a sessionId");
  if (!w.u16le(count) || !w.u16le(pad))
    return bad(pdu, "numberCapabilities beyond the PDU");
  if (count > kMaxCapabilitySets)
    return bad(pdu, "numberCapabilities beyond the bound");
  Wire caps(w.rest().first(combinedLength - 4u));
  int bitmapSets = 0;
  uint16_t width = 0, height = 0;
  for (uint32_t i = 0; i < count; ++i) {
    uint16_t type = 0, length = 0;
    if (!caps.u16le(type) || !caps.u16le(length) || length < 4 || length - 4u > caps.remaining())
      return bad(pdu, "capability set beyond lengthCombinedCapabilities");
    const std::span<const uint8_t> set = caps.rest().first(length - 4u);
    caps.skip(length - 4u);
    if (type == kCapsetBitmap) {
      if (set.size() < 24)
        return bad(pdu, "bitmap capability set shorter than its fields");
      width = le16(set.data() + 8);
      height = le16(set.data() + 10);
      ++bitmapSets;
    }
  }
  if (caps.remaining() != 0)
    return bad(pdu, "lengthCombinedCapabilities differs from the sets'");
  if (bitmapSets != 1)
    return bad(pdu, "not exactly one bitmap capability set");
  if (auto v = checkDesktop(width, height)) {
    m_refusedDesktop = Size{width, height};
    return v;
  }
  m_update.desktopWidth = width;
  m_update.desktopHeight = height;
  m_update.framesOpen = 0;
  m_phase = Phase::Finalizing;
  info.demandActive = true;
  info.desktopWidth = width;
  info.desktopHeight = height;
  return std::nullopt;
}

std::optional<Violation> PduFront::checkShareData(std::span<const uint8_t> body, PduInfo& info) {
  Wire w(body);
  uint32_t shareId = 0;
  uint8_t pad = 0, streamId = 0, pduType2 = 0, compressedType = 0;
  uint16_t uncompressedLength = 0, compressedLength = 0;
  if (!w.u32le(shareId) || !w.u8(pad) || !w.u8(streamId) || !w.u16le(uncompressedLength) || !w.u8(pduType2) ||
      !w.u8(compressedType) || !w.u16le(compressedLength))
    return bad("slowpath.ShareData", "share data header beyond the PDU");
  if (compressedType != 0)
    return bad("slowpath.ShareData", "compressed data without negotiated bulk compression");
  if (uncompressedLength > body.size() + 6)
    return bad("slowpath.ShareData", "uncompressedLength beyond the PDU");
  const std::span<const uint8_t> payload = w.rest();
  const bool desktopKnown = m_phase >= Phase::Finalizing;
  switch (pduType2) {
  case 2: { // PDUTYPE2_UPDATE
    if (!desktopKnown)
      return bad("slowpath.Update", "an update before the capability exchange");
    if (payload.size() < 2)
      return bad("slowpath.Update", "updateType beyond the PDU");
    switch (le16(payload.data())) {
    case 0:
      return bad("slowpath.Orders", "drawing orders (the console turns them off)");
    case 1:
      return validateWhole(UpdateStream::Kind::Bitmap, "slowpath.Bitmap", &m_update, payload);
    case 2:
      return validateWhole(UpdateStream::Kind::Palette, "slowpath.Palette", &m_update, payload);
    case 3:
      return validateWhole(UpdateStream::Kind::SlowSynchronize, "slowpath.Synchronize", &m_update, payload);
    default:
      return bad("slowpath.Update", "unknown updateType");
    }
  }
  case 20: { // PDUTYPE2_CONTROL
    if (auto v = exactly(payload, 8, "slowpath.Control"))
      return v;
    const uint16_t action = le16(payload.data());
    if (action != 2 && action != 3 && action != 4) // GRANTED_CONTROL, DETACH, COOPERATE
      return bad("slowpath.Control", "an action the server does not send");
    return std::nullopt;
  }
  case 27: // PDUTYPE2_POINTER
    if (!desktopKnown)
      return bad("slowpath.Pointer", "a pointer update before the capability exchange");
    return validateWhole(UpdateStream::Kind::SlowPointer, "slowpath.Pointer", &m_update, payload);
  case 31: // PDUTYPE2_SYNCHRONIZE
    if (auto v = exactly(payload, 4, "slowpath.Synchronize"))
      return v;
    if (le16(payload.data()) != 1) // SYNCMSGTYPE_SYNC
      return bad("slowpath.Synchronize", "messageType is not SYNC");
    return std::nullopt;
  case 34: // PDUTYPE2_PLAY_SOUND
    return exactly(payload, 8, "slowpath.PlaySound");
  case 37: // PDUTYPE2_SHUTDOWN_DENIED
    return exactly(payload, 0, "slowpath.ShutdownDenied");
  case 38: { // PDUTYPE2_SAVE_SESSION_INFO
    constexpr std::string_view pdu = "slowpath.SaveSessionInfo";
    Wire s(payload);
    uint32_t infoType = 0;
    if (!s.u32le(infoType))
      return bad(pdu, "infoType beyond the PDU");
    if (s.remaining() > kMaxSaveSessionInfo)
      return bad(pdu, "longer than the bound");
    switch (infoType) {
    case 0: { // INFOTYPE_LOGON: TS_LOGON_INFO, 576 bytes
      uint32_t cbDomain = 0, cbUserName = 0;
      if (s.remaining() != 576 || !s.u32le(cbDomain) || !s.skip(52) || !s.u32le(cbUserName))
        return bad(pdu, "TS_LOGON_INFO length differs from its fixed size");
      if (cbDomain > 52 || cbUserName > 512)
        return bad(pdu, "cbDomain or cbUserName beyond its field");
      return std::nullopt;
    }
    case 1: { // INFOTYPE_LOGON_LONG: TS_LOGON_INFO_VERSION_2
      uint16_t version = 0;
      uint32_t size = 0, sessionId = 0, cbDomain = 0, cbUserName = 0;
      if (!s.u16le(version) || !s.u32le(size) || !s.u32le(sessionId) || !s.u32le(cbDomain) ||
          !s.u32le(cbUserName) || size != 18)
        return bad(pdu, "TS_LOGON_INFO_VERSION_2 header beyond the PDU");
      if (cbDomain > 52 || cbUserName > 512)
        return bad(pdu, "cbDomain or cbUserName beyond the bound");
      if (s.remaining() != 558u + cbDomain + cbUserName)
        return bad(pdu, "cbDomain and cbUserName differ from the PDU's length");
      return std::nullopt;
    }
    case 2: // INFOTYPE_LOGON_PLAINNOTIFY
      if (s.remaining() != 576)
        return bad(pdu, "plain notify length differs from its fixed size");
      return std::nullopt;
    case 3: { // INFOTYPE_LOGON_EXTENDED_INFO
      uint16_t length = 0;
      uint32_t fields = 0;
      if (!s.u16le(length) || !s.u32le(fields) || length < 6 || length - 6u > s.remaining())
        return bad(pdu, "extended info Length beyond the PDU");
      Wire f(s.rest().first(length - 6u));
      for (uint32_t bit : {0x1u, 0x2u}) { // LOGON_EX_AUTORECONNECTCOOKIE, LOGON_EX_LOGONERRORS
        if (!(fields & bit))
          continue;
        uint32_t cb = 0;
        if (!f.u32le(cb) || cb > 64 || !f.skip(cb))
          return bad(pdu, "extended info field beyond its Length");
      }
      if (fields & ~0x3u)
        return bad(pdu, "unknown extended info fields");
      if (f.remaining() != 0)
        return bad(pdu, "extended info Length differs from its fields'");
      return std::nullopt;
    }
    default:
      return bad(pdu, "unknown infoType");
    }
  }
  case 40: // PDUTYPE2_FONTMAP
    if (auto v = exactly(payload, 8, "slowpath.FontMap"))
      return v;
    if (m_phase == Phase::Finalizing) {
      m_phase = Phase::Active;
      info.activated = true;
    }
    return std::nullopt;
  case 41: // PDUTYPE2_SET_KEYBOARD_INDICATORS
    return exactly(payload, 4, "slowpath.KeyboardIndicators");
  case 45: // PDUTYPE2_SET_KEYBOARD_IME_STATUS
    return exactly(payload, 10, "slowpath.KeyboardImeStatus");
  case 47: // PDUTYPE2_SET_ERROR_INFO_PDU
    return exactly(payload, 4, "slowpath.SetErrorInfo");
  case 50: // PDUTYPE2_ARC_STATUS_PDU
    return exactly(payload, 4, "slowpath.AutoReconnectStatus");
  case 54: // PDUTYPE2_STATUS_INFO_PDU
    return exactly(payload, 4, "slowpath.StatusInfo");
  case 55: { // PDUTYPE2_MONITOR_LAYOUT_PDU
    if (payload.size() < 4)
      return bad("slowpath.MonitorLayout", "monitorCount beyond the PDU");
    const uint32_t monitors = le32(payload.data());
    if (monitors > kMaxMonitors)
      return Violation::resource("slowpath.MonitorLayout", "monitorCount beyond the bound");
    return exactly(payload, 4 + 20 * std::size_t(monitors), "slowpath.MonitorLayout");
  }
  default:
    return bad("slowpath.ShareData", "a pduType2 the server does not send or the console did not negotiate");
  }
}

Checked<PduInfo> PduFront::checkFastPath(std::span<const uint8_t> pdu) {
  constexpr std::string_view name = "fastpath";
  const uint8_t header = pdu[0];
  if ((header & 0x03) != 0) // FASTPATH_OUTPUT_ACTION_FASTPATH
    return bad(name, "action is not fast-path");
  if (header & 0x3C)
    return bad(name, "reserved header bits set");
  if (header & 0xC0)
    return bad(name, "encryption flags without RDP security");
  Wire w(pdu);
  w.skip(1);
  uint16_t length = 0;
  if (!w.perLength(length) || length != pdu.size())
    return bad(name, "length differs from the PDU's");
  if (m_phase < Phase::Finalizing)
    return bad(name, "an update before the capability exchange");
  PduInfo info{Kind::FastPath};
  while (w.remaining() != 0) {
    uint8_t updateHeader = 0;
    uint16_t size = 0;
    if (!w.u8(updateHeader) || !w.u16le(size))
      return bad(name, "update header beyond the PDU");
    if (updateHeader & 0xC0)
      return bad(name, "compression flags without negotiated bulk compression");
    if (size > w.remaining())
      return bad(name, "update size beyond the PDU");
    const std::span<const uint8_t> data = w.rest().first(size);
    w.skip(size);
    if (auto v = checkFastPathUpdate(updateHeader & 0x0F, (updateHeader >> 4) & 0x03, data))
      return *v;
    ++info.items;
  }
  return info;
}

std::optional<Violation> PduFront::checkFastPathUpdate(uint8_t code, uint8_t fragmentation,
                                                       std::span<const uint8_t> data) {
  const FastPathCode& c = kFastPathCodes[code & 0x0F];
  if (code == 0)
    return bad(c.pdu, "drawing orders (the console turns them off)");
  if (!c.known)
    return bad(c.pdu, "unknown updateCode");
  switch (fragmentation) {
  case 0: // FASTPATH_FRAGMENT_SINGLE
    if (m_fragment.active())
      return bad(c.pdu, "a whole update inside a fragmented one");
    return validateWhole(c.kind, c.pdu, &m_update, data);
  case 2: // FASTPATH_FRAGMENT_FIRST
    if (m_fragment.active())
      return bad(c.pdu, "a fragmented update begun inside another");
    if (data.size() > m_limits.maxFastPathReassemblyBytes)
      return Violation::resource(c.pdu, "reassembled update beyond the bound");
    m_fragment.begin(c.kind, c.pdu, &m_update);
    m_fragmentCode = code;
    return m_fragment.feed(data);
  default: { // FASTPATH_FRAGMENT_NEXT (3), FASTPATH_FRAGMENT_LAST (1)
    if (!m_fragment.active())
      return bad(c.pdu, "a fragment without a first");
    if (code != m_fragmentCode)
      return bad(c.pdu, "fragments of two updates interleaved");
    if (m_fragment.bytesSeen() + data.size() > m_limits.maxFastPathReassemblyBytes)
      return Violation::resource(c.pdu, "reassembled update beyond the bound");
    if (auto v = m_fragment.feed(data))
      return v;
    if (fragmentation == 1)
      return m_fragment.finish();
    return std::nullopt;
  }
  }
}

} // namespace gc::front
