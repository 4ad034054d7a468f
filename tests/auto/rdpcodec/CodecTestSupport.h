// What the codec suites share: test images, the byte writer the hand-built streams use, and
// pixel comparison. Test code only (the suites may link FreeRDP; this header does not).
#pragma once

#include "rdp/codec/Pixels.h"
#include "rdp/front/Violation.h"

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QString>
#include <QtGlobal>

#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace codectest {

// A BGRX32 image the size of one bitmap, with a guard band around it: a decoder that writes
// one byte outside its Pixels changes the guard.
struct Image {
  static constexpr uint32_t kGuard = 64; // bytes before and after, and per row beyond the pixels
  static constexpr uint8_t kGuardByte = 0xA5;
  uint32_t width = 0;
  uint32_t height = 0;
  size_t stride = 0;
  std::vector<uint8_t> storage;

  Image() = default;
  Image(uint32_t w, uint32_t h, uint8_t fill = 0)
      : width(w), height(h), stride(size_t(w) * 4 + kGuard), storage(2 * kGuard + stride * h, kGuardByte) {
    for (uint32_t y = 0; y < h; ++y)
      std::memset(row(y), fill, size_t(w) * 4);
  }
  uint8_t* row(uint32_t y) { return storage.data() + kGuard + size_t(y) * stride; }
  const uint8_t* row(uint32_t y) const { return storage.data() + kGuard + size_t(y) * stride; }
  uint8_t* at(uint32_t x, uint32_t y) { return row(y) + size_t(x) * 4; }
  const uint8_t* at(uint32_t x, uint32_t y) const { return row(y) + size_t(x) * 4; }
  gc::codec::Pixels pixels() { return {row(0), stride, width, height}; }
  bool guardIntact() const {
    for (size_t i = 0; i < kGuard; ++i)
      if (storage[i] != kGuardByte || storage[storage.size() - 1 - i] != kGuardByte)
        return false;
    for (uint32_t y = 0; y < height; ++y)
      for (size_t i = size_t(width) * 4; i < stride; ++i)
        if (row(y)[i] != kGuardByte)
          return false;
    return true;
  }
  // The pixels alone, rows packed (what a FreeRDP decoder writes with stride width * 4).
  std::vector<uint8_t> packed() const {
    std::vector<uint8_t> v(size_t(width) * height * 4);
    for (uint32_t y = 0; y < height; ++y)
      std::memcpy(v.data() + size_t(y) * width * 4, row(y), size_t(width) * 4);
    return v;
  }
};

enum class Pattern { Flat, Gradient, Noise, Text, Stripes };

inline const char* patternName(Pattern p) {
  switch (p) {
  case Pattern::Flat:
    return "flat";
  case Pattern::Gradient:
    return "gradient";
  case Pattern::Noise:
    return "noise";
  case Pattern::Text:
    return "text";
  case Pattern::Stripes:
    return "stripes";
  }
  return "?";
}

// Packed BGRX rows of a desktop-like picture; alpha varies so alpha planes carry something.
inline std::vector<uint8_t> makePicture(uint32_t w, uint32_t h, Pattern p, uint32_t seed = 1) {
  std::vector<uint8_t> v(size_t(w) * h * 4);
  std::mt19937 rng(seed);
  for (uint32_t y = 0; y < h; ++y)
    for (uint32_t x = 0; x < w; ++x) {
      uint8_t* d = v.data() + (size_t(y) * w + x) * 4;
      switch (p) {
      case Pattern::Flat:
        d[0] = 0x30, d[1] = 0x60, d[2] = 0x90;
        break;
      case Pattern::Gradient:
        d[0] = uint8_t(x * 3 + y), d[1] = uint8_t(y * 2), d[2] = uint8_t(255 - x);
        break;
      case Pattern::Noise:
        d[0] = uint8_t(rng()), d[1] = uint8_t(rng()), d[2] = uint8_t(rng());
        break;
      case Pattern::Text: { // a window with dark "glyphs" on white, a title bar
        const bool title = y < 12;
        const bool ink = !title && ((x / 3 + y / 5) % 7 == 0) && (x % 9 < 6) && (y % 13 < 9);
        const uint8_t c = title ? 0x40 : (ink ? 0x10 : 0xF0);
        d[0] = c, d[1] = uint8_t(title ? 0x70 : c), d[2] = uint8_t(title ? 0xC0 : c);
        break;
      }
      case Pattern::Stripes:
        d[0] = (x / 4) % 2 ? 0xFF : 0x00, d[1] = (y / 3) % 2 ? 0x80 : 0x20, d[2] = uint8_t(x ^ y);
        break;
      }
      d[3] = p == Pattern::Noise ? uint8_t(rng()) : uint8_t(0xFF - ((x + y) % 3) * 0x40);
    }
  return v;
}

// Little-endian writer for the hand-built streams.
struct Bytes {
  std::vector<uint8_t> v;
  Bytes& u8(unsigned x) {
    v.push_back(uint8_t(x));
    return *this;
  }
  Bytes& u16(unsigned x) { return u8(x & 0xFF).u8((x >> 8) & 0xFF); }
  Bytes& u32(uint32_t x) { return u16(x & 0xFFFF).u16(x >> 16); }
  Bytes& bytes(std::span<const uint8_t> b) {
    v.insert(v.end(), b.begin(), b.end());
    return *this;
  }
  Bytes& bytes(const Bytes& b) { return bytes(std::span<const uint8_t>(b.v)); }
  Bytes& fill(size_t n, uint8_t x) {
    v.insert(v.end(), n, x);
    return *this;
  }
  size_t size() const { return v.size(); }
  std::span<const uint8_t> span() const { return v; }
};

inline QByteArray toQByteArray(std::span<const uint8_t> b) {
  return QByteArray(reinterpret_cast<const char*>(b.data()), qsizetype(b.size()));
}

// The first differing pixel, for a failure message ("" when equal).
inline QString firstDifference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, uint32_t width,
                               int bytesCompared = 4) {
  if (a.size() != b.size())
    return QStringLiteral("sizes differ: %1 vs %2").arg(a.size()).arg(b.size());
  for (size_t i = 0; i < a.size(); i += 4)
    for (int c = 0; c < bytesCompared; ++c)
      if (a[i + size_t(c)] != b[i + size_t(c)]) {
        const size_t px = i / 4;
        return QStringLiteral("pixel (%1,%2) byte %3: %4 vs %5")
            .arg(px % width)
            .arg(px / width)
            .arg(c)
            .arg(a[i + size_t(c)])
            .arg(b[i + size_t(c)]);
      }
  return {};
}

inline std::string ruleOf(const gc::front::Checked<gc::front::Ok>& r) {
  if (const auto* v = std::get_if<gc::front::Violation>(&r))
    return std::string(v->rule);
  return {};
}

// Seeds for the fuzz targets (tests/fuzz/corpus/<target>/), written by each suite's
// writesFuzzSeeds() only when GC_CODEC_SEED_DIR names the corpus directory; false otherwise.
inline bool seedDirectory(QString& dir) {
  dir = qEnvironmentVariable("GC_CODEC_SEED_DIR");
  return !dir.isEmpty();
}
inline bool writeSeed(const QString& dir, const char* target, const QString& name,
                      std::span<const uint8_t> bytes) {
  if (bytes.size() > 8192)
    return false; // the fuzzers' max_len
  const QString path = dir + QLatin1Char('/') + QLatin1String(target);
  QDir().mkpath(path);
  QFile f(path + QLatin1Char('/') + name);
  return f.open(QIODevice::WriteOnly | QIODevice::Truncate) &&
         f.write(toQByteArray(bytes)) == qint64(bytes.size());
}
// A fuzz input of messages: each a 16-bit little-endian length and its bytes.
inline void appendMessage(Bytes& input, std::span<const uint8_t> message) {
  input.u16(unsigned(message.size())).bytes(message);
}
// fuzz_clear's messages: width - 1, height - 1, then as appendMessage.
inline void appendSizedMessage(Bytes& input, uint32_t w, uint32_t h, std::span<const uint8_t> message) {
  input.u8(w - 1).u8(h - 1);
  appendMessage(input, message);
}

} // namespace codectest
