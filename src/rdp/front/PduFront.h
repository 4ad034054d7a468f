// PduFront: validates every server-to-client PDU of the RDP core stream (MS-RDPBCGR) before
// FreeRDP parses it: each complete PDU exactly as rdpTransportIo::ReadPdu returns it (TPKT-
// framed slow-path PDUs, fast-path PDUs, the X.224 and CredSSP PDUs of the connection
// sequence), already decrypted by TLS. What is outside the protocol or the console's rules
// (no drawing orders, no bulk compression, no bitmap codec, one desktop size named by the
// Demand Active and bounded by the grant) is a Violation naming the PDU kind and the rule;
// what the guest declares is bounded (Limits) before FreeRDP could reserve it.
//
// State kept: the connection phase, the desktop the last Demand Active named, whether the
// session is active (Font Map seen), the open surface frames, fast-path fragment reassembly
// (sizes only, no payload copy) and each static channel's chunk reassembly (sizes only).
// No heap allocation per PDU; O(PDU size).
//
// Thread: one instance per connection, used on one thread (the RDP reader's).
#pragma once

#include "rdp/front/Limits.h"
#include "rdp/front/UpdateStream.h"
#include "rdp/front/Violation.h"

#include <array>
#include <cstdint>
#include <optional>
#include <span>

namespace gc::front {

struct PduInfo {
  enum class Kind : uint8_t {
    ConnectionConfirm,  // X.224 Connection Confirm (with RDP_NEG_RSP / RDP_NEG_FAILURE)
    X224Disconnect,     // X.224 Disconnect Request
    TsRequest,          // CredSSP (DER SEQUENCE), framing only
    EarlyUserAuth,      // HYBRID_EX Early User Authorization Result
    McsConnectResponse, // framing only (BER)
    McsAttachUserConfirm,
    McsChannelJoinConfirm,
    McsDisconnectUltimatum,
    License,          // licensing PDU on the I/O channel
    MessageChannel,   // auto-detect / heartbeat on the MCS message channel
    SlowPath,         // share control PDUs on the I/O channel (one or more)
    FastPath,         // fast-path output updates
    ChannelData,      // a chunk of a static virtual channel message
    ServerRedirection // a Server Redirection PDU: the integrator refuses it (RDP_REDIRECT_REFUSED)
  };
  Kind kind = Kind::SlowPath;
  bool redirection = false;
  uint32_t redirectionFlags = 0; // ServerRedirection: its RedirFlags (LB_*), when present
  // ChannelData: which channel, the chunk's place in the PDU (offset/length of the chunk
  // bytes after the CHANNEL_PDU_HEADER), its flags and the message's declared total.
  uint16_t channelId = 0;
  uint32_t chunkOffset = 0;
  uint32_t chunkLength = 0;
  uint32_t channelFlags = 0;
  uint32_t channelTotal = 0;
  // SlowPath: a Demand Active named this desktop (checked against Limits); the Font Map
  // that makes the session active was in this PDU.
  bool demandActive = false;
  uint16_t desktopWidth = 0;
  uint16_t desktopHeight = 0;
  bool activated = false;
  bool deactivated = false;
  // Updates (fast-path) or share PDUs (slow path) this PDU carried.
  uint16_t items = 0;
};

class PduFront {
public:
  enum class Phase : uint8_t {
    Negotiation, // waiting for the X.224 Connection Confirm
    Security,    // CredSSP, until the MCS Connect Response
    Domain,      // MCS attach/join, until the first Send Data Indication
    Licensing,   // licensing PDUs on the I/O channel
    Capabilities,
    Finalizing, // Demand Active seen, until the Font Map
    Active,
  };

  explicit PduFront(Limits limits);

  // The MCS channels: the guest may send on the I/O channel (1003) and on the channels whose
  // Channel Join Confirm it sent with success (the user channel excepted). Among those, the
  // static virtual channels are the integrator's to name (FreeRDP's ids for the channels it
  // requested, known once the MCS Connect Response was processed: wantsChannels()); a joined
  // channel that is not one of them is the MCS message channel.
  static constexpr uint16_t kIoChannel = 1003;
  static constexpr std::size_t kMaxStaticChannels = 31; // MS-RDPBCGR 2.2.1.3.4
  void setStaticChannels(std::span<const uint16_t> staticChannels);
  bool wantsChannels() const { return !m_channelsSet && m_phase >= Phase::Domain; }

  // Once a PDU was refused the connection is over: every later PDU gets the same Violation.
  Checked<PduInfo> check(std::span<const uint8_t> pdu);
  std::optional<Violation> violation() const { return m_violated; }

  Phase phase() const { return m_phase; }
  bool active() const { return m_phase == Phase::Active; }
  uint32_t desktopWidth() const { return m_update.desktopWidth; }
  uint32_t desktopHeight() const { return m_update.desktopHeight; }
  uint32_t framesOpen() const { return m_update.framesOpen; }
  bool reassembling() const { return m_fragment.active(); }
  // The desktop size of a Demand Active refused for its size (0x0 otherwise): numbers only,
  // for the integrator's RDP_DESKTOP_MISMATCH evidence.
  struct Size {
    uint16_t width = 0;
    uint16_t height = 0;
  };
  std::optional<Size> refusedDesktop() const { return m_refusedDesktop; }
  const Limits& limits() const { return m_limits; }

private:
  struct Channel {
    uint16_t id = 0;
    bool open = false; // between FIRST and LAST
    uint32_t total = 0;
    uint32_t received = 0;
  };

  Checked<PduInfo> dispatch(std::span<const uint8_t> pdu);
  Checked<PduInfo> checkTpkt(std::span<const uint8_t> pdu);
  Checked<PduInfo> checkFastPath(std::span<const uint8_t> pdu);
  Checked<PduInfo> checkTsRequest(std::span<const uint8_t> pdu);
  Checked<PduInfo> checkConnectionConfirm(std::span<const uint8_t> tpdu);
  Checked<PduInfo> checkDomain(std::span<const uint8_t> mcs);
  Checked<PduInfo> checkSendData(uint16_t channelId, std::span<const uint8_t> data);
  Checked<PduInfo> checkLicense(std::span<const uint8_t> data);
  Checked<PduInfo> checkMessageChannel(std::span<const uint8_t> data);
  Checked<PduInfo> checkChannelChunk(Channel& channel, std::span<const uint8_t> data, uint32_t offset);
  Checked<PduInfo> checkShareControl(std::span<const uint8_t> data);
  std::optional<Violation> checkDemandActive(std::span<const uint8_t> body, PduInfo& info);
  std::optional<Violation> checkShareData(std::span<const uint8_t> body, PduInfo& info);
  std::optional<Violation> checkDesktop(uint32_t width, uint32_t height) const;
  std::optional<Violation> checkFastPathUpdate(uint8_t code, uint8_t fragmentation,
                                               std::span<const uint8_t> data);
  Channel* channel(uint16_t id);
  bool joined(uint16_t id) const;

  Limits m_limits;
  Phase m_phase = Phase::Negotiation;
  bool m_channelsSet = false;
  bool m_tsRequestSeen = false;
  uint16_t m_userChannel = 0;
  std::array<Channel, kMaxStaticChannels> m_channels{};
  std::size_t m_channelCount = 0;
  std::array<uint16_t, kMaxStaticChannels + 2> m_joined{}; // confirmed joins (static + message)
  std::size_t m_joinedCount = 0;
  UpdateContext m_update;
  UpdateStream m_fragment; // a fragmented fast-path update, FIRST to LAST
  uint8_t m_fragmentCode = 0;
  uint32_t m_dataOffset = 0;           // where the current Send Data Indication's data starts
  std::optional<Violation> m_violated; // the first violation: everything after it is refused
  std::optional<Size> m_refusedDesktop;
};

} // namespace gc::front
