// UpdateStream: validates one graphics or pointer update (MS-RDPBCGR 2.2.9.1.1.3 slow-path,
// 2.2.9.1.2.1 fast-path) as its bytes arrive, in one piece or in fast-path fragments, without
// keeping them: small headers are gathered into a fixed scratch buffer, payloads are only
// counted. Each header is checked before the next byte is looked at, so a size, rectangle,
// bpp or cache index outside the rules stops the update at the header that named it.
//
// Thread: owned by one PduFront, on that front's thread.
#pragma once

#include "rdp/front/Limits.h"
#include "rdp/front/Violation.h"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace gc::front {

// What the stream needs of the session: the desktop the Demand Active named, the bounds, and
// the open surface frames (Frame Marker BEGIN/END are counted across updates).
struct UpdateContext {
  const Limits* limits = nullptr;
  uint32_t desktopWidth = 0;
  uint32_t desktopHeight = 0;
  uint32_t framesOpen = 0;
  uint64_t framesEnded = 0;
};

class UpdateStream {
public:
  enum class Kind : uint8_t {
    Bitmap,          // TS_UPDATE_BITMAP_DATA (updateType, numberRectangles, TS_BITMAP_DATA…)
    Palette,         // TS_UPDATE_PALETTE_DATA
    SlowSynchronize, // TS_UPDATE_SYNC (updateType, pad2)
    Empty,           // fast-path SYNCHRONIZE, PTR_NULL, PTR_DEFAULT: no data
    SurfaceCommands, // TS_SURFCMD sequence (Set/Stream Surface Bits, Frame Marker)
    PointerPosition, // TS_POINTERPOSATTRIBUTE
    PointerSystem,   // slow path: systemPointerType
    PointerColor,    // TS_COLORPOINTERATTRIBUTE (24 bpp)
    PointerNew,      // TS_POINTERATTRIBUTE (xorBpp + colour attribute)
    PointerLarge,    // TS_LARGEPOINTERATTRIBUTE
    PointerCached,   // TS_CACHEDPOINTERATTRIBUTE
    SlowPointer,     // TS_POINTER_PDU: messageType, pad2, then one of the pointer kinds
  };

  // Starts an update; `pdu` names it in violations (a static string).
  void begin(Kind kind, std::string_view pdu, UpdateContext* context);
  bool active() const { return m_active; }
  Kind kind() const { return m_kind; }
  uint64_t bytesSeen() const { return m_seen; }

  // The next bytes of the update. The first violation ends the stream.
  std::optional<Violation> feed(std::span<const uint8_t> bytes);
  // The update's last byte was fed: everything it declared must be complete.
  std::optional<Violation> finish();

private:
  enum class Step : uint8_t { Gather, Skip, Done };
  std::optional<Violation> onHeader();
  std::optional<Violation> pointerAttributes(bool large, uint32_t xorBpp);
  void gather(uint32_t n, uint8_t stage) {
    m_step = Step::Gather;
    m_need = n;
    m_have = 0;
    m_stage = stage;
  }
  void skipThen(uint64_t n, uint8_t stage) {
    m_skip = n;
    m_afterSkip = stage;
    m_step = Step::Skip;
  }
  Violation protocol(std::string_view rule) const { return Violation::protocol(m_pdu, rule); }
  Violation resource(std::string_view rule) const { return Violation::resource(m_pdu, rule); }

  UpdateContext* m_ctx = nullptr;
  std::string_view m_pdu;
  Kind m_kind = Kind::Empty;
  bool m_active = false;
  Step m_step = Step::Done;
  uint8_t m_stage = 0;
  uint8_t m_afterSkip = 0;
  uint32_t m_need = 0;
  uint32_t m_have = 0;
  uint64_t m_skip = 0;
  uint64_t m_seen = 0;
  uint32_t m_items = 0;     // rectangles still declared
  uint32_t m_xorBpp = 0;    // a new/large pointer's colour depth
  uint32_t m_trailing = 0;  // bytes allowed after Done (the colour pointer's pad)
  uint32_t m_afterDone = 0; // bytes seen after Done
  uint32_t m_bitmapLength = 0;
  std::array<uint8_t, 32> m_scratch{};
};

} // namespace gc::front
