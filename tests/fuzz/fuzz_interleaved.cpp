// InterleavedDecoder against FreeRDP 3.10.3's interleaved_decompress (Differential.h). Input:
// width - 1, height - 1 (modulo 96), depth (modulo 4: 15, 16, 24, 8 bpp), then the RLE stream,
// decoded into the top-left of a 96 x 96 surface.
#include "Differential.h"
#include "rdp/codec/InterleavedDecoder.h"

#include <cstdint>

using gc::codec::InterleavedDecoder;
using namespace gc::fuzz;

namespace {

constexpr uint32_t kSide = 96;

class InterleavedDifferential : public Differential {
public:
  InterleavedDifferential() : Differential("interleaved", 3) {}

protected:
  const char* freerdpLenient(std::string_view, std::string_view rule, const Message& m) const override {
    if (rule == "colour depth not 15, 16 or 24" && m.d.param == 8)
      return "outside the console's contract: 8 bpp (its session is 32 bpp and its front refuses "
             "bitsPerPixel 8 before any decoder, src/rdp/front/UpdateStream.cpp)";
    if (rule == "stream ends before the bitmap is complete")
      return "FreeRDP too lenient: a stream that ends before its bitmap is complete, the rest shown from "
             "FreeRDP's context-wide scratch, i.e. earlier bitmaps' pixels (MS-RDPBCGR 2.2.9.1.1.3.1.2.4: "
             "the orders rebuild the whole bitmap)";
    return nullptr;
  }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3)
    return 0;
  static InterleavedDifferential diff;
  static InterleavedDecoder ours;
  static const uint32_t depths[4] = {15, 16, 24, 8};
  Message m;
  m.d.w = uint16_t(1 + data[0] % kSide);
  m.d.h = uint16_t(1 + data[1] % kSide);
  m.d.param = depths[data[2] % 4];
  m.data = std::span<const uint8_t>(data + 3, size - 3);
  oracle::Begin b;
  b.codec = oracle::Codec::Interleaved;
  b.side = kSide;
  b.fillSeed = data[0] ^ (data[1] << 8);
  diff.begin(b, {data, size});
  diff.step(m, ours.decode(m.data, m.d.param, diff.oursAt(m.d)));
  return 0;
}
