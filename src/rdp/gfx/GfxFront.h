// GfxFront: the RDPGFX validating front. Every PDU the parser produced is checked here,
// before anything executes, against the protocol (MS-RDPEGFX), what the console advertised
// (caps, codecs, cache slots) and the bounds (front::Limits): surface ids, rectangles against
// their surface and the desktop, counts, cache slots occupied where read, codec ids, pixel
// formats, sizes the guest names, frame ids and nesting, frames in flight, and the pixel
// memory a PDU would make the console hold (counted before anything is allocated).
//
// The front keeps the protocol state (caps confirmed, the open frame, frames awaiting their
// acknowledgement); the surfaces and cache are the table's, read here.
//
// Pure: no FreeRDP. Thread: the RDP worker only.
#pragma once

#include "rdp/front/Limits.h"
#include "rdp/front/Violation.h"
#include "rdp/gfx/GfxCaps.h"
#include "rdp/gfx/GfxPdu.h"
#include "rdp/gfx/SurfaceTable.h"

#include <optional>

namespace gc::gfx {

// The codecs the console decodes (and so accepts): MS-RDPEGFX 2.2.2.1 codecId.
namespace codec {
constexpr uint16_t kUncompressed = 0x0000;
constexpr uint16_t kCaVideo = 0x0003; // RemoteFX: not decoded
constexpr uint16_t kClearCodec = 0x0008;
constexpr uint16_t kProgressive = 0x0009;
constexpr uint16_t kPlanar = 0x000A;
constexpr uint16_t kAvc420 = 0x000B; // not advertised
constexpr uint16_t kAlpha = 0x000C;
constexpr uint16_t kProgressiveV2 = 0x000D; // not decoded
constexpr uint16_t kAvc444 = 0x000E;        // not advertised
constexpr uint16_t kAvc444v2 = 0x000F;      // not advertised
} // namespace codec

class GfxFront {
public:
  explicit GfxFront(const front::Limits& limits) : m_limits(limits) {}

  // Whether `pdu` may execute now. On success the front's own state follows it (a frame
  // opened or ended, caps confirmed).
  front::Checked<front::Ok> check(const Pdu& pdu, const SurfaceTable& table);

  // The client acknowledged `count` frames that had been ended (the pacing may hold them).
  void noteAcknowledged(uint32_t count) { m_unacked -= std::min(count, m_unacked); }
  // Frames ended and not yet acknowledged.
  uint32_t unacknowledged() const { return m_unacked; }
  bool inFrame() const { return m_inFrame; }
  std::optional<CapsSet> caps() const { return m_caps; }

  // The client advertised its caps again: one more CapsConfirm is the answer, not a
  // violation (MS-RDPEGFX 3.2.5.18: the server answers every CapsAdvertise). Counted: a
  // re-advertise left unanswered at one lock may be answered after the next one's.
  void expectCapsConfirm() { ++m_confirmsExpected; }
  uint32_t capsConfirmsExpected() const { return m_confirmsExpected; }

  // The channel closed: a new one starts with caps again.
  void reset();

private:
  front::Limits m_limits;
  std::optional<CapsSet> m_caps;
  uint32_t m_confirmsExpected = 0;
  bool m_inFrame = false;
  uint32_t m_frameId = 0;
  uint32_t m_unacked = 0;
};

} // namespace gc::gfx
