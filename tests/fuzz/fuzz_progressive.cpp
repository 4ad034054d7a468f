// The console's RemoteFX Progressive path (ProgressiveFront, then ProgressiveDecoder, as
// CodecDispatch runs them) against FreeRDP 3.10.3's progressive_decompress on its C primitives
// (Differential.h), over a session of messages on one surface: tile state carries from message
// to message on both sides. Input: two 16-bit little-endian numbers whose larger one gives the
// square surface's side (1 + n modulo 128; bit 7 of the fourth byte makes it an ARGB surface),
// then messages (16-bit length + bytes), each decoded in place on the whole surface. The session
// ends at the first message either side refuses.
//
// Beyond the comparison: the decoder writes only inside the rectangles it reports as touched
// (the console shows, and the panel is sent, exactly those).
#include "Differential.h"
#include "rdp/codec/ProgressiveDecoder.h"
#include "rdp/codec/ProgressiveFront.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

using gc::codec::ProgressiveDecoder;
using gc::codec::ProgressiveFront;
using namespace gc::fuzz;

namespace {

constexpr uint16_t kSurface = 1;

class ProgressiveDifferential : public Differential {
public:
  ProgressiveDifferential() : Differential("progressive", 4) {}
  bool argb = false;

protected:
  const char* freerdpLenient(std::string_view, std::string_view rule, const Message&) const override {
    // progressive_decompress reads no block and draws the region it kept from the stream before.
    if (rule == "empty stream")
      return "FreeRDP too lenient: a stream of no bytes, on which FreeRDP draws the previous stream's region "
             "again (MS-RDPEGFX RFX_PROGRESSIVE_BITMAP_STREAM: a stream is its blocks)";
    // update_tiles intersects every rectangle with the surface.
    if (rule == "rectangle outside the surface")
      return "FreeRDP too lenient: a region rectangle beyond the surface, which FreeRDP clips (MS-RDPEGFX "
             "RFX_PROGRESSIVE_REGION: the rectangles are areas of the surface the region updates)";
    // rfx_rlgr_decode of no bytes fills the component with zeros.
    if (rule == "empty RLGR component")
      return "FreeRDP too lenient: a component of no bytes, which FreeRDP decodes as 4096 zeros (MS-RDPEGFX "
             "RFX_PROGRESSIVE_TILE_SIMPLE/FIRST: yLen, cbLen, crLen are the byte counts of RLGR1 data for "
             "4096 "
             "coefficients, which take at least one byte)";
    // Only RFX_TILE_DIFFERENCE is read; other bits are ignored.
    if (rule == "unknown tile flags")
      return "FreeRDP too lenient: tile flags other than RFX_TILE_DIFFERENCE, which FreeRDP ignores "
             "(MS-RDPEGFX RFX_PROGRESSIVE_TILE_SIMPLE/FIRST: no other flag is defined)";
    // The difference is added to the tile's buffers whatever they hold.
    if (rule == "tile difference on a tile never decoded")
      return "FreeRDP too lenient: a tile difference on a tile with no earlier pass, which FreeRDP adds to "
             "coefficients it never decoded (MS-RDPEGFX RFX_TILE_DIFFERENCE: the coefficients are the "
             "difference from the tile's previous ones)";
    // progressive_rfx_upgrade_component finds its streams' lengths wrong, logs, and the tile's
    // upgrade is dropped after the components before it changed; the result stays success.
    if (rule == "upgrade bit streams do not end with their bits")
      return "FreeRDP too lenient: an upgrade whose SRL or RAW stream does not end where its bit planes do, "
             "which FreeRDP logs and leaves half applied (MS-RDPEGFX RFX_PROGRESSIVE_TILE_UPGRADE: "
             "srlByteCount "
             "and rawByteCount are the lengths of those streams)";
    // Each tile block is decoded in turn; the later pass on the same tile wins.
    if (rule == "tile twice in one region")
      return "FreeRDP too lenient: a tile twice in one region, which FreeRDP decodes twice (MS-RDPEGFX "
             "RFX_PROGRESSIVE_REGION: numTiles tiles, each a tile of the region's grid)";
    if (rule == "raw length outside what the upgrade reads")
      return "FreeRDP too lenient: an upgrade whose RAW stream is longer or shorter than its bit planes "
             "take, "
             "which FreeRDP logs and leaves half applied (MS-RDPEGFX RFX_PROGRESSIVE_TILE_UPGRADE: "
             "rawByteCount is the length of the RAW stream)";
    // progressive_tile_read checks yIdx x gridWidth + xIdx against the grid's size only.
    if (rule == "tile outside the surface")
      return "FreeRDP too lenient: a tile index beyond the surface's grid, which FreeRDP keeps in the slot "
             "of "
             "another tile (MS-RDPEGFX RFX_PROGRESSIVE_TILE_SIMPLE/FIRST/UPGRADE: xIdx and yIdx index the "
             "surface's 64 x 64 grid)";
    // 3.10.3 upgrades the tile's buffers whatever they hold (an advisory fixed after 3.10.3).
    if (rule == "upgrade of a tile never decoded")
      return "FreeRDP too lenient: an upgrade of a tile with no first pass, which FreeRDP applies to buffers "
             "it "
             "never wrote (MS-RDPEGFX RFX_PROGRESSIVE_TILE_UPGRADE: it refines a tile's earlier passes)";
    // progressive_rfx_upgrade_block reads as many bits per coefficient as the counts say.
    if (rule == "upgrade of more than 15 bits")
      return "FreeRDP too lenient: an upgrade pass of more than 15 bit planes, more than a 16-bit "
             "coefficient "
             "holds beside its sign (MS-RDPEGFX RFX_PROGRESSIVE_TILE_UPGRADE: the bit planes between two "
             "qualities of the tile's 16-bit coefficients)";
    if (rule == "upgrade lowers the quality")
      return "FreeRDP too lenient: an upgrade to a quality below the tile's, whose bit-plane counts FreeRDP "
             "takes modulo 2^32 and then drops as a length mismatch (MS-RDPEGFX "
             "RFX_PROGRESSIVE_TILE_UPGRADE: "
             "an upgrade adds the bit planes between the tile's quality and a higher one)";
    // progressive_decompress_tile_first/_upgrade return an error for such a tile, which
    // progressive_process_tiles_tile_work_callback drops: the tile is skipped, the stream succeeds.
    if (rule == "quantization index out of range")
      return "FreeRDP too lenient: a tile whose quantization index is beyond the region's tables, which "
             "FreeRDP logs and skips (MS-RDPEGFX RFX_PROGRESSIVE_TILE_SIMPLE/FIRST/UPGRADE: quantIdxY, "
             "quantIdxCb, quantIdxCr index the region's quantVals)";
    if (rule == "quality index out of range")
      return "FreeRDP too lenient: a tile whose quality is neither 0xFF nor an index of the region's "
             "progressive tables, which FreeRDP logs and skips (MS-RDPEGFX "
             "RFX_PROGRESSIVE_TILE_FIRST/UPGRADE: "
             "quality indexes quantProgVals)";
    // progressive_wb_sync logs a duplicate and carries on.
    if (rule == "second SYNC block")
      return "FreeRDP too lenient: a second SYNC block, which FreeRDP logs and ignores (MS-RDPEGFX "
             "RFX_PROGRESSIVE_SYNC: the block that starts the session's stream, once)";
    // progressive_wb_frame_begin sets a flag that nothing checks when the stream ends.
    if (rule == "frame not ended")
      return "FreeRDP too lenient: a frame begun and never ended, which FreeRDP decodes as if it had ended "
             "(MS-RDPEGFX RFX_PROGRESSIVE_FRAME_END: it ends the frame its FRAME_BEGIN opened)";
    // progressive_tile_read_upgrade/_read grow the tile cache by 1024 slots as tiles come.
    if (rule == "more tiles than the surface has")
      return "FreeRDP too lenient: a region of more tiles than the surface's grid holds, so one tile at "
             "least twice or beyond the grid, which FreeRDP decodes (MS-RDPEGFX RFX_PROGRESSIVE_REGION: "
             "numTiles tiles, each a tile of the region's grid)";
    return nullptr;
  }
  // On an ARGB surface the console keeps the alpha the surface had (progressive carries none);
  // FreeRDP writes it opaque. The colour is compared on both kinds, alpha on XRGB only.
  size_t compared(const Message&) const override { return argb ? 3 : 4; }
};

uint32_t le16(const uint8_t* p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8);
}

bool inside(const std::vector<ProgressiveDecoder::Rect>& rects, uint32_t x, uint32_t y) {
  return std::any_of(rects.begin(), rects.end(), [&](const ProgressiveDecoder::Rect& r) {
    return x >= r.x && x - r.x < r.width && y >= r.y && y - r.y < r.height;
  });
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4)
    return 0;
  static ProgressiveDifferential diff;
  static gc::front::Limits limits;
  // reset() per input: the wiping of tile state is exercised too.
  static ProgressiveFront front(limits);
  static ProgressiveDecoder ours(limits);
  static std::vector<ProgressiveDecoder::Rect> touched;
  static std::vector<uint8_t> before;
  front.reset();
  ours.reset();

  const uint16_t side = uint16_t(1 + std::max(le16(data), le16(data + 2) & 0x7FFF) % oracle::kMaxSide);
  diff.argb = (data[3] & 0x80) != 0;
  oracle::Begin b;
  b.codec = oracle::Codec::Progressive;
  b.side = side;
  b.argb = diff.argb ? 1 : 0;
  b.fillSeed = uint32_t(size);
  diff.begin(b, {data, size});
  if (gc::front::isViolation(front.createSurface(kSurface, side, side)) ||
      gc::front::isViolation(ours.createSurface(kSurface, side, side)))
    std::abort(); // every side up to 128 is a surface both take

  size_t index = 0;
  forEachMessage(data, size, 4, [&](std::span<const uint8_t> message) {
    Message m;
    m.index = index++;
    m.data = message;
    m.d.w = side;
    m.d.h = side;
    const gc::codec::Pixels surface = diff.ours().pixels();
    before.assign(diff.ours().bits(), diff.ours().bits() + surface.stride * side);
    gc::front::Checked<gc::front::Ok> result = gc::front::Ok{};
    if (auto checked = front.check(kSurface, message); gc::front::isViolation(checked))
      result = std::get<gc::front::Violation>(checked);
    else
      result = ours.decode(kSurface, message, surface, diff.argb, touched);
    if (!gc::front::isViolation(result))
      for (uint32_t y = 0; y < side; ++y)
        for (uint32_t x = 0; x < side; ++x) {
          const size_t at = size_t(y) * surface.stride + size_t(x) * 4;
          if (std::memcmp(diff.ours().bits() + at, before.data() + at, 4) != 0 && !inside(touched, x, y)) {
            std::fprintf(stderr, "\n==progressive: pixel (%u,%u) written outside the touched rectangles\n", x,
                         y);
            std::abort();
          }
        }
    return diff.step(m, result);
  });
  return 0;
}
