// CodecDispatch: from an RDPGFX codec id to its decoder, the one file that calls codec
// libraries. Decoders write into a bounded scratch of exactly the command's rectangle (its
// caller then writes it into the surface, compare-and-copy); progressive decodes in place
// per surface (FreeRDP keeps per-surface tile state: created lazily at the first progressive
// command for a surface, deleted with the surface).
//
// Until the project's own codecs land (src/rdp/codec/, gc_rdp_codec), planar, ClearCodec
// and progressive are FreeRDP's, called here only, with every size checked first; alpha
// (MS-RDPEGFX 2.2.4.3) is ours. The swap is this file.
//
// Thread: the RDP worker only.
#pragma once

#include "rdp/front/Violation.h"

#include <QRect>
#include <QSize>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace gc::gfx {

// A destination of `width` x `height` BGRX32 (or BGRA32) pixels, rows `stride` bytes apart.
struct Pixels {
  uint8_t* bits = nullptr;
  qsizetype stride = 0;
  int width = 0;
  int height = 0;
};

class CodecDispatch {
public:
  CodecDispatch();
  ~CodecDispatch();
  CodecDispatch(const CodecDispatch&) = delete;
  CodecDispatch& operator=(const CodecDispatch&) = delete;

  // A WireToSurface1 codec (planar, ClearCodec, alpha) into `out`, which holds what the
  // surface shows there (ClearCodec and alpha draw over it). `alpha`: an ARGB surface.
  front::Checked<front::Ok> decode(uint16_t codecId, std::span<const uint8_t> data, Pixels out, bool alpha);
  // Progressive (WireToSurface2) in place on surface `surfaceId` of `surface`'s size;
  // `touched`: the rectangles it wrote, in surface coordinates.
  front::Checked<front::Ok> decodeProgressive(uint16_t surfaceId, std::span<const uint8_t> data,
                                              Pixels surface, bool alpha, uint32_t frameId,
                                              std::vector<QRect>& touched);
  // The surface is gone: its progressive state too.
  void deleteSurface(uint16_t surfaceId);
  // The channel closed: every codec's state starts afresh.
  void reset();

  struct State;

private:
  std::unique_ptr<State> m_state;
};

} // namespace gc::gfx
