// GfxCaps: what the console's RDPGFX client offers (MS-RDPEGFX 2.2.3 capability sets) and
// the client-to-server PDUs it writes (CapsAdvertise, FrameAcknowledge). Exactly the caps
// the console decodes: no AVC anywhere (8.1 without AVC420_ENABLED, every 10.x with
// AVC_DISABLED), SMALL_CACHE everywhere (so the server keeps to 4096 slots and 16 MiB), no
// THINCLIENT, 10.7 with SCALEDMAP_DISABLE (the console never scales). 10.1 (a 16-byte set
// of reserved data) and 10.3 (which has no SMALL_CACHE flag) are not offered.
//
// Pure: no FreeRDP. Thread: constants and functions; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace gc::gfx {

struct CapsSet {
  uint32_t version;
  uint32_t flags;
};

namespace caps {
constexpr uint32_t kVersion8 = 0x00080004;
constexpr uint32_t kVersion81 = 0x00080105;
constexpr uint32_t kVersion10 = 0x000A0002;
constexpr uint32_t kVersion102 = 0x000A0200;
constexpr uint32_t kVersion104 = 0x000A0400;
constexpr uint32_t kVersion105 = 0x000A0502;
constexpr uint32_t kVersion106 = 0x000A0600;
constexpr uint32_t kVersion107 = 0x000A0701;
constexpr uint32_t kThinClient = 0x01;
constexpr uint32_t kSmallCache = 0x02;
constexpr uint32_t kAvc420Enabled = 0x10;
constexpr uint32_t kAvcDisabled = 0x20;
constexpr uint32_t kScaledMapDisable = 0x80;
} // namespace caps

// The sets the client advertises, in the order sent.
std::span<const CapsSet> advertisedCaps();
// The advertised set a CapsConfirm names (same version, flags within what was offered), or
// nullopt: a confirm for a set never offered.
std::optional<CapsSet> confirmedSet(uint32_t version, uint32_t flags);

// MS-RDPEGFX 2.2.2.18 and 2.2.2.13, header included.
std::vector<uint8_t> encodeCapsAdvertise();
std::vector<uint8_t> encodeFrameAcknowledge(uint32_t queueDepth, uint32_t frameId,
                                            uint32_t totalFramesDecoded);

} // namespace gc::gfx
