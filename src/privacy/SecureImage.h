// secureDrop: the last holder of a frame zeroes its pixels as it lets go (privacy/SecureZero.h
// for bytes).
//
// Thread: any (the caller's image).
#pragma once

#include "privacy/SecureZero.h"

#include <QImage>

namespace gc {

// Drops `image`, zeroing its pixels first when this is the last reference (a frame the RDP
// session's pool has already let go of is freed by whoever holds it last). A shared image is
// only released: another holder still uses it. Returns the bytes zeroed.
inline qsizetype secureDrop(QImage& image) {
  qsizetype zeroed = 0;
  if (!image.isNull() && image.isDetached()) {
    zeroed = image.sizeInBytes();
    secureZero(image.bits(), std::size_t(zeroed));
  }
  image = QImage();
  return zeroed;
}

} // namespace gc
