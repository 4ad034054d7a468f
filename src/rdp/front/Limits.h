// The bounds on everything a guest can make the console allocate or keep, derived from the
// grant's desktop (rdp.desktop) before the session starts. Every front, decoder and table
// under src/rdp/ checks its request against these BEFORE allocating or copying; exceeding
// one is Violation::resource (RDP_RESOURCE_LIMIT), never an allocation attempt.
//
// Thread: a value type; any thread.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gc::front {

struct Limits {
  // The largest desktop the guest may present or resize to. With rdp.desktop.size_from
  // "grant" it is exactly the grant's size (anything else is RDP_DESKTOP_MISMATCH); with
  // "server" the grant's size bounds the pixel count (width * height <= grant's) and each
  // side is at most kMaxSide.
  uint32_t desktopWidth = 1920;
  uint32_t desktopHeight = 1080;
  bool sizeFromServer = false;
  static constexpr uint32_t kMaxSide = 8192;

  // All pixel memory the guest can make us hold at once (surfaces, cache entries, pointer
  // shapes, codec scratch), in bytes: kPixelBudgetFactor x the desktop at 4 bytes a pixel.
  static constexpr uint64_t kPixelBudgetFactor = 4;
  uint64_t pixelBudgetBytes() const {
    return kPixelBudgetFactor * uint64_t(desktopWidth) * desktopHeight * 4;
  }

  // RDPGFX (MS-RDPEGFX): surfaces alive at once; cache slots as the console advertised them
  // (RDPGFX_CAPS_FLAG_SMALL_CACHE: 16 MiB of cache, 4096 slots); frames begun and not ended.
  uint32_t maxSurfaces = 16;
  uint32_t maxCacheSlots = 4096;
  uint64_t maxCacheBytes = 16u << 20;
  uint32_t maxFramesInFlight = 16;
  // One decompressed RDPGFX message (after ZGFX), and one reassembled dynamic-channel message
  // (MS-RDPEDYC DATA_FIRST's declared length): bounded before anything is inflated or reserved.
  uint32_t maxGfxMessageBytes = 32u << 20;
  uint32_t maxDvcMessageBytes = 32u << 20;
  // Dynamic channels the guest may have open at once (the console listens for RDPGFX only).
  uint32_t maxDynamicChannels = 1;
  // Static virtual channel chunks: the declared total length of one channel message.
  uint32_t maxChannelMessageBytes = 32u << 20;
  // Fast-path fragment reassembly (the console's advertised MultifragMaxRequestSize).
  uint32_t maxFastPathReassemblyBytes = 8u << 20;
  // Pointer shapes (legacy pointer updates): side and cached shapes.
  uint32_t maxPointerSide = 384;
  uint32_t maxPointerCacheEntries = 32;
};

} // namespace gc::front
