#include "bridge/frames/JpegEncoder.h"

#include "privacy/SecureBytes.h"

#include <turbojpeg.h>

namespace gc {

JpegEncoder::JpegEncoder() : JpegEncoder(Settings{}) {}

JpegEncoder::JpegEncoder(const Settings& settings) : m_settings(settings), m_handle(tjInitCompress()) {}

JpegEncoder::~JpegEncoder() {
  release();
  if (m_handle != nullptr) {
    tjDestroy(m_handle);
  }
}

bool JpegEncoder::encode(const QImage& image, const QRect& rect, int quality, QByteArray& out) {
  if (m_handle == nullptr || rect.isEmpty() || !QRect(QPoint(0, 0), image.size()).contains(rect) ||
      image.depth() != 32) {
    return false;
  }
  const int subsampling = m_settings.subsample ? TJSAMP_420 : TJSAMP_444;
  const unsigned long needed = tjBufSize(rect.width(), rect.height(), subsampling);
  if (needed == static_cast<unsigned long>(-1)) {
    return false;
  }
  if (needed > m_capacity) {
    release();
    m_buffer = tjAlloc(int(needed));
    if (m_buffer == nullptr) {
      return false;
    }
    m_capacity = needed;
  }
  unsigned long size = m_capacity;
  unsigned char* buffer = m_buffer;
  const int flags = TJFLAG_NOREALLOC | (m_settings.accurateDct ? TJFLAG_ACCURATEDCT : TJFLAG_FASTDCT);
  const unsigned char* origin = image.constScanLine(rect.y()) + size_t(rect.x()) * 4;
  if (tjCompress2(m_handle, origin, rect.width(), int(image.bytesPerLine()), rect.height(), TJPF_BGRX,
                  &buffer, &size, subsampling, quality, flags) != 0) {
    return false;
  }
  appendWiping(out, reinterpret_cast<const char*>(buffer), qsizetype(size));
  return true;
}

void JpegEncoder::wipe() {
  secureZero(m_buffer, m_capacity);
}

void JpegEncoder::release() {
  wipe();
  if (m_buffer != nullptr) {
    tjFree(m_buffer);
  }
  m_buffer = nullptr;
  m_capacity = 0;
}

} // namespace gc
