// Deterministic synthetic desktops shared by tst_framepipeline and gc-bench-frames: a text
// page (glyph-like bitmaps on white, no fonts needed), a typed glyph, and a full-screen
// animation (moving gradients with mild noise: every pixel changes, still compressible).
#pragma once

#include <QImage>
#include <QRect>
#include <QtGlobal>

namespace gc::synthetic {

inline quint32 hash(quint32 x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

constexpr int kGlyphWidth = 10;
constexpr int kGlyphHeight = 16;

// Draws glyph `code` (a 5x7 bit pattern scaled into a 10x16 cell with margins) at (x, y).
inline void drawGlyph(QImage& image, int x, int y, quint32 code, QRgb ink = 0xff202020,
                      QRgb paper = 0xffffffff) {
  const quint32 bits = hash(code * 2654435761U + 17);
  for (int gy = 0; gy < kGlyphHeight; ++gy) {
    const int py = y + gy;
    if (py < 0 || py >= image.height()) {
      continue;
    }
    auto* line = reinterpret_cast<QRgb*>(image.scanLine(py));
    for (int gx = 0; gx < kGlyphWidth; ++gx) {
      const int px = x + gx;
      if (px < 0 || px >= image.width()) {
        continue;
      }
      const int bx = gx - 2;
      const int by = (gy - 2) / 2;
      bool on = false;
      if (bx >= 0 && bx < 5 && gy >= 2 && by < 7) {
        on = ((bits >> ((by * 5 + bx) % 32)) & 1U) != 0;
      }
      line[px] = on ? ink : paper;
    }
  }
}

// A page of text: lines of glyphs, ragged right edge, paragraph gaps. `scroll` shifts the
// page up by that many pixels (a scrolling viewer).
inline QImage textPage(QSize size, int scroll = 0) {
  QImage image(size, QImage::Format_RGB32);
  image.fill(0xffffffff);
  const int lineHeight = kGlyphHeight + 4;
  const int firstLine = scroll / lineHeight;
  const int offset = scroll % lineHeight;
  for (int line = 0; (line - 1) * lineHeight < size.height(); ++line) {
    const int docLine = firstLine + line;
    if (hash(quint32(docLine)) % 7 == 0) {
      continue; // paragraph gap
    }
    const int length = 20 + int(hash(quint32(docLine) + 99) % 150);
    const int y = 8 + line * lineHeight - offset;
    for (int col = 0; col < length && 8 + col * kGlyphWidth < size.width(); ++col) {
      const quint32 code = hash(quint32(docLine) * 131 + quint32(col));
      if (code % 6 == 0) {
        continue; // space
      }
      drawGlyph(image, 8 + col * kGlyphWidth, y, code);
    }
  }
  return image;
}

// Every pixel changes with t; smooth gradients moving in different directions plus 3 bits
// of noise (like video or a 3D scene, not like random data).
inline QImage animationFrame(QSize size, int t) {
  QImage image(size, QImage::Format_RGB32);
  for (int y = 0; y < size.height(); ++y) {
    auto* line = reinterpret_cast<QRgb*>(image.scanLine(y));
    for (int x = 0; x < size.width(); ++x) {
      const quint32 n = hash(quint32(x) * 73856093U ^ quint32(y) * 19349663U ^ quint32(t) * 83492791U) & 7U;
      const int r = (x / 4 + t * 3) & 0xff;
      const int g = (y / 3 + t * 2) & 0xff;
      const int b = ((x + y) / 8 + 255 - t * 5) & 0xff;
      line[x] = qRgb(int(quint32(r) ^ n), int(quint32(g) ^ n), int(quint32(b) ^ n));
    }
  }
  return image;
}

// Random pixels: the worst case for both encoders, used to prove exactness.
inline QImage noise(QSize size, quint32 seed) {
  QImage image(size, QImage::Format_RGB32);
  for (int y = 0; y < size.height(); ++y) {
    auto* line = reinterpret_cast<QRgb*>(image.scanLine(y));
    for (int x = 0; x < size.width(); ++x) {
      line[x] = 0xff000000U | (hash(seed ^ (quint32(y) << 16) ^ quint32(x)) & 0xffffffU);
    }
  }
  return image;
}

} // namespace gc::synthetic
