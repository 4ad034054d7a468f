// CodecDispatch: from an RDPGFX codec id to its decoder, the one file that calls codec
// libraries. Decoders write into a bounded scratch of exactly the command's rectangle (its
// caller then writes it into the surface, compare-and-copy); progressive decodes in place
// per surface (tile state for the tiles decoded: created lazily at the first progressive
// command for a surface, deleted with the surface).
//
// Every codec here is the project's own (src/rdp/codec/, gc_rdp_codec: every length checked
// before a byte is used, nothing written outside the rectangle): planar, ClearCodec, alpha,
// and RemoteFX Progressive (codec::ProgressiveDecoder, behind codec::ProgressiveFront, which
// validates the whole stream first). No FreeRDP codec context is created.
//
// Thread: the RDP worker only.
#pragma once

#include "rdp/front/Limits.h"
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
  explicit CodecDispatch(const front::Limits& limits);
  ~CodecDispatch();
  CodecDispatch(const CodecDispatch&) = delete;
  CodecDispatch& operator=(const CodecDispatch&) = delete;

  // A WireToSurface1 codec (planar, ClearCodec, alpha) into `out`, which holds what the
  // surface shows there (ClearCodec and alpha draw over it). `alpha`: an ARGB surface.
  front::Checked<front::Ok> decode(uint16_t codecId, std::span<const uint8_t> data, Pixels out, bool alpha);
  // Progressive (WireToSurface2) in place on surface `surfaceId` of `surface`'s size;
  // `touched`: the rectangles it wrote, in surface coordinates.
  front::Checked<front::Ok> decodeProgressive(uint16_t surfaceId, std::span<const uint8_t> data,
                                              Pixels surface, bool alpha, std::vector<QRect>& touched);
  // The surface is gone: its progressive state too.
  void deleteSurface(uint16_t surfaceId);
  // RDPGFX ResetGraphics: ClearCodec takes the next sequence number as it comes.
  void resetGraphics();
  // The channel closed: every codec's state starts afresh (what held guest pixels is zeroed).
  void reset();

  struct State;

private:
  std::unique_ptr<State> m_state;
};

} // namespace gc::gfx
