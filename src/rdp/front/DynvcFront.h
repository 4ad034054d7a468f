// DynvcFront: validates each server-to-client drdynvc message (MS-RDPEDYC 2.2) after the static
// channel's reassembly and before FreeRDP's drdynvc parses it: the command and its channel id
// width, CREATE's NUL-terminated name within the message (the one graphics channel open at
// most once at a time), DATA_FIRST's declared length bounded (Limits::maxDvcMessageBytes)
// BEFORE drdynvc reserves it, the DATA running total never beyond it, no compressed data
// (the console negotiates none), CAPS versions 1..3, a bounded SOFT-SYNC request.
//
// It needs only a message's head (kMaxHeadBytes, or all of a shorter message) and its total
// length: the integrator may check chunk by chunk without keeping the payload. Per-channel
// state is sizes only.
//
// Thread: one instance per connection, used on one thread (the RDP reader's).
#pragma once

#include "rdp/front/Limits.h"
#include "rdp/front/Violation.h"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace gc::front {

struct DynvcInfo {
  enum class Kind : uint8_t { Caps, Create, DataFirst, Data, Close, SoftSyncRequest };
  Kind kind = Kind::Caps;
  uint32_t channelId = 0;
  bool graphics = false;       // Create/Data/Close: the RDPGFX channel
  bool complete = false;       // DataFirst/Data: the channel's message is now complete
  uint32_t declaredLength = 0; // DataFirst: the whole message's declared length
  uint32_t carried = 0;        // payload bytes in this drdynvc message
  uint16_t capsVersion = 0;    // Caps
  // Create: the name reduced to printable ASCII (others as '?') and at most 64 characters,
  // in the front's own storage: valid until its next check.
  std::string_view name;
};

class DynvcFront {
public:
  static constexpr std::string_view kGraphicsChannel = "Microsoft::Windows::RDS::Graphics";
  static constexpr std::size_t kMaxNameBytes = 256;  // a name longer than this is refused
  static constexpr std::size_t kMaxHeadBytes = 1024; // every header, a bounded name, a soft-sync
  static_assert(kMaxHeadBytes > 1 + 4 + kMaxNameBytes + 1,
                "a head holds every create request the front accepts");

  explicit DynvcFront(Limits limits) : m_limits(limits) {}

  Checked<DynvcInfo> check(std::span<const uint8_t> message) { return checkHead(message, message.size()); }
  // `head`: the first min(total, kMaxHeadBytes) bytes (or more) of one message of `total`
  // bytes. Once a message was refused, every later one gets the same Violation.
  Checked<DynvcInfo> checkHead(std::span<const uint8_t> head, std::size_t total);

  bool graphicsOpen() const { return m_graphics.open; }
  uint32_t graphicsChannel() const { return m_graphics.id; }
  std::optional<Violation> violation() const { return m_violated; }

private:
  struct Channel {
    bool open = false;
    uint32_t id = 0;
    bool reassembling = false;
    uint32_t declared = 0;
    uint32_t received = 0;
  };
  Checked<DynvcInfo> dispatch(std::span<const uint8_t> head, std::size_t total);

  Limits m_limits;
  Channel m_graphics;
  std::array<char, 64> m_name{}; // the last create request's name, reduced
  std::optional<Violation> m_violated;
};

} // namespace gc::front
