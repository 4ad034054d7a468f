#include "bridge/frames/PngEncoder.h"

#include "privacy/SecureBytes.h"

#include <png.h>

#include <csetjmp>
#include <cstdlib>
#include <malloc.h>

namespace gc {
namespace {

void onError(png_structp png, png_const_charp) {
  png_longjmp(png, 1);
}

void onWarning(png_structp, png_const_charp) {}

png_voidp allocate(png_structp, png_alloc_size_t size) {
  return std::malloc(size);
}

void release(png_structp, png_voidp block) {
  secureZero(block, malloc_usable_size(block));
  std::free(block);
}

void append(png_structp png, png_bytep data, png_size_t length) {
  appendWiping(*static_cast<QByteArray*>(png_get_io_ptr(png)), reinterpret_cast<const char*>(data),
               qsizetype(length));
}

void flush(png_structp) {}

// No C++ object with a destructor lives in this frame: png_longjmp would skip it.
bool writePng(const unsigned char* origin, qsizetype stride, int width, int height,
              const PngEncoder::Settings& settings, QByteArray* out) {
  png_structp png = png_create_write_struct_2(PNG_LIBPNG_VER_STRING, nullptr, onError, onWarning, nullptr,
                                              allocate, release);
  if (png == nullptr) {
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_write_struct(&png, nullptr);
    return false;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  png_set_write_fn(png, out, append, flush);
  png_set_compression_level(png, settings.level);
  png_set_compression_strategy(png, settings.strategy);
  png_set_filter(png, PNG_FILTER_TYPE_BASE, settings.filters);
  png_set_IHDR(png, info, png_uint_32(width), png_uint_32(height), 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_BASE, PNG_FILTER_TYPE_BASE);
  png_write_info(png, info);
  // Little-endian RGB32 is B,G,R,X in memory: swap to RGB and drop the X byte.
  png_set_bgr(png);
  png_set_filler(png, 0, PNG_FILLER_AFTER);
  for (int y = 0; y < height; ++y) {
    png_write_row(png, origin + y * stride);
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

} // namespace

bool PngEncoder::encode(const QImage& image, const QRect& rect, QByteArray& out) const {
  if (rect.isEmpty() || !QRect(QPoint(0, 0), image.size()).contains(rect) || image.depth() != 32) {
    return false;
  }
  const qsizetype before = out.size();
  const unsigned char* origin = image.constScanLine(rect.y()) + size_t(rect.x()) * 4;
  if (!writePng(origin, image.bytesPerLine(), rect.width(), rect.height(), m_settings, &out)) {
    truncateWiping(out, before);
    return false;
  }
  return true;
}

} // namespace gc
