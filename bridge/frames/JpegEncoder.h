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
    // TurboJPEG already compresses with the fast integer DCT below quality 96, so
    // TJFLAG_FASTDCT changes nothing (turbojpeg.h, TJFLAG_ACCURATEDCT); the accurate DCT
    // is opt-in. Figures in docs/performance.md.
    bool accurateDct = false;
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
