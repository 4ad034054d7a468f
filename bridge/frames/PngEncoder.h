// Lossless encoder: libpng writing 8-bit RGB straight from the BGRX frame (libpng strips
// the filler and swaps to RGB while filtering, so there is no conversion copy). Fast
// settings by default — zlib level 1, SUB filter — chosen by the figures in
// docs/performance.md. libpng's working memory goes through our allocator, which zeroes
// each block before freeing it: the zlib window holds frame pixels.
// Not thread-safe; one instance per encoder thread.
#pragma once

#include <QByteArray>
#include <QImage>
#include <QRect>

namespace gc {

class PngEncoder {
public:
  struct Settings {
    int level = 1;      // zlib 0..9
    int filters = 0x10; // PNG_FILTER_SUB; PNG_ALL_FILTERS = 0xf8, PNG_FILTER_NONE = 0x08
    int strategy = 0;   // Z_DEFAULT_STRATEGY; Z_RLE = 3
  };

  PngEncoder() = default;
  explicit PngEncoder(const Settings& settings) : m_settings(settings) {}

  // Appends the PNG of `rect` (inside `image`, Format_RGB32/ARGB32) to `out`.
  bool encode(const QImage& image, const QRect& rect, QByteArray& out) const;
  const Settings& settings() const { return m_settings; }

private:
  Settings m_settings;
};

} // namespace gc
