// ClearContext: ClearCodec (MS-RDPEGFX 2.2.4.1, RDPGFX codec id 0x0008) for one RDPGFX channel:
// the glyph, V-bar and short V-bar storages, the sequence number, and the decoder of the three
// layers (residual, bands, subcodecs: uncompressed, NSCodec, RLEX).
//
// Rules beyond a plain decoder (the guest is the adversary):
// - the output is exactly the command's rectangle; bands and subcodec rectangles must lie
//   inside it, and the residual, RLEX and the subcodecs must cover exactly what they declare;
// - each layer is read from exactly the bytes its header gives it, and the three counts add up
//   to the stream;
// - a glyph is at most 1024 pixels (what the glyph index is for), and a glyph hit must name an
//   entry stored with as many pixels as the hit's rectangle (the storage keeps pixels, not a
//   shape: MS-RDPEGFX 4.1.1.5): the hit copies exactly what was stored;
// - cache indices are within the storages' sizes by construction (14 and 15 bits), and every
//   entry is a fixed slot of the storage, so a hit reads guest pixels or zeros, never anything
//   else. Like FreeRDP, a V-bar hit of another height than stored uses the slot's first pixels
//   (zeros where nothing was ever stored) rather than closing the session.
//
// Memory: at most storageBytes() (19.3 MiB: 32768 + 16384 V-bars of 52 pixels and 4000 glyphs
// of 1024 pixels, 3 bytes a pixel, in blocks of 256 V-bars or 16 glyphs, plus 342 KiB of sizes
// and the list of slots written). The sizes come with the first stream, a block of slots when
// one of its slots is first written, so what is allocated follows what the guest stored
// (allocatedBytes()). Everything written is zeroed and every block freed on reset() and in the
// destructor (they held guest pixels), in time proportional to what was written.
//
// Thread: the RDP worker (one context per RDPGFX channel; not shared).
#pragma once

#include "rdp/codec/Pixels.h"
#include "rdp/front/Violation.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

namespace gc::codec {

class ClearContext {
public:
  static constexpr std::string_view kPdu = "codec.ClearCodec";

  // The storages MS-RDPEGFX 3.3.1 gives the client for ClearCodec.
  static constexpr uint32_t kVBarEntries = 32768;
  static constexpr uint32_t kShortVBarEntries = 16384;
  static constexpr uint32_t kGlyphEntries = 4000;
  static constexpr uint32_t kMaxVBarHeight = 52; // a band is at most 52 pixels tall
  static constexpr uint32_t kMaxGlyphPixels = 1024;
  static constexpr uint32_t kStoredBytesPerPixel = 3; // ClearCodec carries no alpha

  ClearContext();
  ~ClearContext();
  ClearContext(const ClearContext&) = delete;
  ClearContext& operator=(const ClearContext&) = delete;

  // Decodes one ClearCodec stream into `out` (the command's rectangle). On a Violation the
  // caller discards `out`; the storages may hold what the stream stored before it failed.
  front::Checked<front::Ok> decode(std::span<const uint8_t> stream, const Pixels& out);

  // RDPGFX ResetGraphics: the next stream's sequence number is taken as it comes; the
  // storages are kept (MS-RDPEGFX: they are not bound to a surface).
  void resetSequence();
  // A new channel or the end of one: everything the guest stored is zeroed and forgotten.
  void reset();

  // The bound on what the storages can allocate, what they hold now, and whether they exist.
  static size_t storageBytes();
  size_t allocatedBytes() const;
  bool allocated() const { return m_storage != nullptr; }

private:
  struct Storage;
  struct FreeStorage {
    void operator()(Storage* s) const;
  };

  front::Checked<front::Ok> residual(std::span<const uint8_t> bytes, const Pixels& out);
  front::Checked<front::Ok> bands(std::span<const uint8_t> bytes, const Pixels& out);
  front::Checked<front::Ok> subcodecs(std::span<const uint8_t> bytes, const Pixels& out);
  void wipe();

  std::unique_ptr<Storage, FreeStorage> m_storage;
  bool m_sequenceKnown = false;
  uint8_t m_nextSequence = 0;
  uint32_t m_vbarCursor = 0;
  uint32_t m_shortVBarCursor = 0;
};

} // namespace gc::codec
