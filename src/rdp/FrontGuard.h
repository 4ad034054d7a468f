// FrontGuard: puts the validating fronts (src/rdp/front) in front of FreeRDP's parsers.
// - readPdu() wraps rdpTransportIo::ReadPdu: every complete PDU FreeRDP read from the guest
//   goes through PduFront before FreeRDP parses it; on a Violation (or a Server Redirection
//   PDU, which FreeRDP would act on by itself) the read fails, so FreeRDP disconnects without
//   having looked at the PDU, and the reason is kept for the session.
// - admitDynvcChunk() runs DynvcFront on each drdynvc message, from the static channel's
//   chunks (the head of a message, at most DynvcFront::kMaxHeadBytes, and its declared total),
//   before FreeRDP's drdynvc sees the message's last chunk (where it parses it).
// Limits come from the grant's desktop (limitsFor). The fronts keep sizes only; the one
// head buffer is zeroed after each message.
//
// Thread: the hooks run on the RDP worker inside FreeRDP; violation(), failure() and
// counters() may be called from any thread.
#pragma once

#include "common/Refusal.h"
#include "rdp/front/DynvcFront.h"
#include "rdp/front/PduFront.h"
#include "readerwire/ReaderTypes.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>

struct rdp_context;
struct rdp_transport_io;

namespace gc {

class FrontGuard {
public:
  struct Counters {
    uint64_t pdus = 0;          // PDUs checked by PduFront
    uint64_t bytes = 0;         // their bytes
    uint64_t checkNs = 0;       // time spent in PduFront::check
    uint64_t maxCheckNs = 0;    // the longest single check
    uint64_t dynvcMessages = 0; // drdynvc messages checked by DynvcFront
    uint64_t dynvcNs = 0;       // time spent in DynvcFront
    // PduFront::check durations by power of two: [i] counts checks of [2^(i-1), 2^i) ns.
    std::array<uint64_t, 32> checkNsLog2{};
    // The duration at or under which `fraction` of the checks ended (an upper bound, a
    // power of two): percentile(0.5), percentile(0.99).
    uint64_t percentileNs(double fraction) const;
  };

  explicit FrontGuard(front::Limits limits);

  // The bounds for a session: the grant's desktop, judged by config.sizeFromServer; a
  // config that names no desktop (tests) lets the server decide within 1920x1080's pixels.
  static front::Limits limitsFor(const RdpConfig& config);

  // SessionSetup::preConnect: wraps io.ReadPdu (once) for the context's RdpContext::front.
  static void install(rdp_context* context, rdp_transport_io& io);
  // GraphicsPipeline::receiveChannelData, for a chunk of drdynvc: false refuses it (the
  // Violation is recorded) and FreeRDP disconnects.
  static bool admitDynvcChunk(rdp_context* context, const uint8_t* data, size_t size, uint32_t flags,
                              size_t total);
  // The ReadPdu hook's body (worker): false refuses the PDU.
  bool checkPdu(rdp_context* context, const uint8_t* data, size_t size);
  // A handler behind FreeRDP's parser (LegacyUpdates) found a rule broken: recorded like a
  // front's own refusal (the first one wins).
  void refuse(const front::Violation& v) { record(v); }

  // The first Violation either front found; nullopt while everything passed.
  std::optional<front::Violation> violation() const;
  bool redirectionRefused() const { return m_redirection.load(); }
  // What the session closes with: RDP_REDIRECT_REFUSED, RDP_PROTOCOL_VIOLATION or
  // RDP_RESOURCE_LIMIT with "<pdu kind>: <rule>" (static strings of ours only).
  std::optional<Failure> failure() const;
  Counters counters() const;
  // The size a refused Demand Active named, when that was the reason (RDP_DESKTOP_MISMATCH
  // or RDP_RESOURCE_LIMIT): for the console's desktop evidence.
  std::optional<front::PduFront::Size> refusedDesktop() const;

  const front::Limits& limits() const { return m_limits; }

private:
  bool checkDynvcChunk(const uint8_t* data, size_t size, uint32_t flags, size_t total);
  void record(const front::Violation& v);

  front::Limits m_limits;
  front::PduFront m_pdu;
  front::DynvcFront m_dynvc;

  // drdynvc message being received: its head and declared total.
  std::array<uint8_t, front::DynvcFront::kMaxHeadBytes> m_head{};
  size_t m_headLength = 0;
  size_t m_total = 0;
  bool m_inMessage = false;

  mutable std::mutex m_mutex; // a leaf: guards m_violation
  std::optional<front::Violation> m_violation;
  std::optional<front::PduFront::Size> m_refusedDesktop;
  std::atomic<bool> m_redirection{false};
  std::atomic<uint32_t> m_redirectionFlags{0};
  std::atomic<uint64_t> m_pdus{0}, m_bytes{0}, m_checkNs{0}, m_maxCheckNs{0}, m_dynvcMessages{0},
      m_dynvcNs{0};
  std::array<std::atomic<uint64_t>, 32> m_checkNsLog2{};
};

} // namespace gc
