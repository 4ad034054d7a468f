// Lossy encoder: TurboJPEG tjCompress2 straight from the BGRX frame (TJPF_BGRX, no
// conversion copy), 4:2:0 chroma subsampling. One compressor handle and one output buffer,
// sized by tjBufSize and reused across frames (TJFLAG_NOREALLOC), so steady state allocates
// nothing. Not thread-safe; one instance per encoder thread.
#pragma once

#include <QByteArray>
#include <QImage>
#include <QRect>

namespace gc {

class JpegEncoder {
public:
  struct Settings {
    bool fastDct = true;   // TJFLAG_FASTDCT: see docs/performance.md for the trade
    bool subsample = true; // 4:2:0; false = 4:4:4
  };

  JpegEncoder();
  explicit JpegEncoder(const Settings& settings);
  ~JpegEncoder();
  JpegEncoder(const JpegEncoder&) = delete;
  JpegEncoder& operator=(const JpegEncoder&) = delete;

  // Appends the JPEG of `rect` (inside `image`, Format_RGB32/ARGB32) to `out`.
  bool encode(const QImage& image, const QRect& rect, int quality, QByteArray& out);

  // Zeroes the reusable output buffer (privacy); release() also frees it.
  void wipe();
  void release();
  qint64 bytesHeld() const { return qint64(m_capacity); }
  // For tests: the reusable output buffer.
  const unsigned char* scratch() const { return m_buffer; }

private:
  Settings m_settings;
  void* m_handle = nullptr;
  unsigned char* m_buffer = nullptr;
  unsigned long m_capacity = 0;
};

} // namespace gc
