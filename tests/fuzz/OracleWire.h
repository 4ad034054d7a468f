// OracleWire: what a differential fuzz target and freerdp_oracle (the child process that runs
// FreeRDP 3.10.3's decoders, FreeRdpOracle.cpp) say to each other over a socket pair, and what
// both compute alike: the surface's starting pixels. Test code only (tests/fuzz), std only.
//
// A session of one input: Begin (the codec, the square surface's side, its format), then one
// Decode per message, each answered with FreeRDP's verdict and the whole surface after it.
// Every frame is a 32-bit little-endian length and that many bytes.
//
// Thread: value types and free functions; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace gc::fuzz::oracle {

enum class Codec : uint8_t {
  Planar = 1,          // planar_decompress
  Interleaved = 2,     // interleaved_decompress
  Clear = 3,           // clear_decompress on one context for the whole session
  Nsc = 4,             // nsc_process_message as clear_decompress calls it
  Alpha = 5,           // FreeRDP's GDI: RdpgfxClientContext::SurfaceCommand, codec 0x000C
  UncompressedGfx = 6, // FreeRDP's GDI: RdpgfxClientContext::SurfaceCommand, codec 0x0000
  RawBitmap = 7,       // FreeRDP's GDI: rdpBitmap::Decompress, uncompressed
  Progressive = 8,     // progressive_decompress on one surface context for the whole session
};

enum class Verdict : uint8_t {
  Refused = 0,
  Accepted = 1,
  // The decoder wrote outside the surface it was given (the guard around it changed).
  WroteOutside = 2,
};

// The largest surface side a session may ask for: bounds every frame.
constexpr uint32_t kMaxSide = 128;
constexpr uint32_t kMaxMessage = 1u << 20;

struct Begin {
  Codec codec = Codec::Planar;
  uint16_t side = 0;     // the surface is side x side BGRX/BGRA pixels, rows side * 4 bytes apart
  uint8_t argb = 0;      // Alpha, UncompressedGfx, Progressive: the surface is ARGB_8888 (else XRGB_8888)
  uint32_t fillSeed = 0; // the surface's starting pixels (fill())
};

struct Decode {
  uint16_t x = 0, y = 0, w = 0, h = 0; // the command's rectangle on the surface
  // Planar: bit 0 rows bottom-up, bit 1 alpha from the stream (BGRA32). Interleaved, RawBitmap:
  // bits per pixel. UncompressedGfx: the command's RDPGFX pixel format (0x20 XRGB, 0x21 ARGB).
  uint32_t param = 0;
};

// The surface's starting pixels: B, G and R vary with the position and the seed, so a decoder
// that keeps, drops or moves pixels it should not shows; the X/A byte varies too. A window of
// one pattern twice the largest side, placed by the seed (rows copied: sessions are many).
inline void fill(uint8_t* bits, size_t stride, uint32_t side, uint32_t seed) {
  constexpr uint32_t kPattern = 2 * kMaxSide;
  static const std::vector<uint8_t> pattern = [] {
    std::vector<uint8_t> p(size_t(kPattern) * kPattern * 4);
    for (uint32_t y = 0; y < kPattern; ++y)
      for (uint32_t x = 0; x < kPattern; ++x) {
        const uint32_t v = (x * 0x9E3779B1u) ^ (y * 0x85EBCA77u);
        uint8_t* px = p.data() + (size_t(y) * kPattern + x) * 4;
        px[0] = uint8_t(v >> 3);
        px[1] = uint8_t(v >> 11);
        px[2] = uint8_t(v >> 19);
        px[3] = uint8_t(v >> 27) | 0x10;
      }
    return p;
  }();
  const uint32_t x0 = seed % kMaxSide;
  const uint32_t y0 = (seed / kMaxSide) % kMaxSide;
  for (uint32_t y = 0; y < side; ++y)
    std::memcpy(bits + size_t(y) * stride, pattern.data() + (size_t(y0 + y) * kPattern + x0) * 4,
                size_t(side) * 4);
}

// Little-endian framing helpers.
struct Writer {
  std::vector<uint8_t> bytes;
  Writer& u8(uint32_t v) {
    bytes.push_back(uint8_t(v));
    return *this;
  }
  Writer& u16(uint32_t v) { return u8(v & 0xFF).u8((v >> 8) & 0xFF); }
  Writer& u32(uint32_t v) { return u16(v & 0xFFFF).u16(v >> 16); }
  Writer& raw(std::span<const uint8_t> b) {
    bytes.insert(bytes.end(), b.begin(), b.end());
    return *this;
  }
};

struct Reader {
  std::span<const uint8_t> bytes;
  size_t pos = 0;
  bool ok = true;
  uint32_t u8() {
    if (pos + 1 > bytes.size()) {
      ok = false;
      return 0;
    }
    return bytes[pos++];
  }
  uint32_t u16() { return u8() | (u8() << 8); }
  uint32_t u32() { return u16() | (u16() << 16); }
  std::span<const uint8_t> rest() { return pos <= bytes.size() ? bytes.subspan(pos) : bytes.subspan(0, 0); }
};

enum class Frame : uint8_t { Begin = 1, Decode = 2 };

inline std::vector<uint8_t> encode(const Begin& b) {
  Writer w;
  w.u8(uint32_t(Frame::Begin)).u8(uint32_t(b.codec)).u16(b.side).u8(b.argb).u32(b.fillSeed);
  return std::move(w.bytes);
}
inline std::vector<uint8_t> encode(const Decode& d, std::span<const uint8_t> data) {
  Writer w;
  w.u8(uint32_t(Frame::Decode)).u16(d.x).u16(d.y).u16(d.w).u16(d.h).u32(d.param).raw(data);
  return std::move(w.bytes);
}

} // namespace gc::fuzz::oracle
