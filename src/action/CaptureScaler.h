// CaptureScaler: the capture scaled to the grant's capture size, by a
// deterministic filter: area averaging. Each output pixel is the mean of the desktop pixels
// its footprint covers, each weighted by the exact area it covers (integer weights: the
// footprint of output pixel x is [x·W/w, (x+1)·W/w) in desktop pixels), rounded half up, per
// channel. Integer arithmetic only, so the same frame gives the same bytes on every machine;
// only downscaling exists (the grant refuses a capture larger than the desktop).
//
// Thread: stateless; call from any thread.
#pragma once

#include <QImage>
#include <QSize>

namespace gc {

class CaptureScaler {
public:
  // `frame` (32 bits per pixel) scaled to `to`; `frame` itself when the sizes are equal. The
  // working rows are zeroed before they are freed (they hold pixels of the guest's screen).
  static QImage scaled(const QImage& frame, QSize to);
  static constexpr const char* kFilter = "area-average";
};

} // namespace gc
