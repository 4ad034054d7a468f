// PlanarDecoder against FreeRDP 3.10.3's planar_decompress (Differential.h). Input: width - 1,
// height - 1 (modulo 96), options (bit 0 rows bottom-up as legacy bitmaps carry them, bit 1
// alpha from the stream), then the stream, decoded into the top-left of a 96 x 96 surface.
#include "Differential.h"
#include "rdp/codec/PlanarDecoder.h"

#include <cstdint>

using gc::codec::PlanarDecoder;
using namespace gc::fuzz;

namespace {

constexpr uint32_t kSide = 96;

class PlanarDifferential : public Differential {
public:
  PlanarDifferential() : Differential("planar", 4) {}

protected:
  const char* freerdpLenient(std::string_view, std::string_view rule, const Message&) const override {
    if (rule == "bytes after the raw planes")
      return "FreeRDP too lenient: bytes after the raw planes and their one pad byte (MS-RDPEGDI 2.2.2.5.1: "
             "the header, the planes and an optional pad byte are the stream)";
    if (rule == "bytes after the RLE planes")
      return "FreeRDP too lenient: bytes after the RLE planes (MS-RDPEGDI 2.2.2.5.1: the planes end the "
             "stream, "
             "the pad byte is for raw planes only)";
    return nullptr;
  }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3)
    return 0;
  static PlanarDifferential diff;
  Message m;
  m.d.w = uint16_t(1 + data[0] % kSide);
  m.d.h = uint16_t(1 + data[1] % kSide);
  m.d.param = data[2] & 3;
  m.data = std::span<const uint8_t>(data + 3, size - 3);
  const PlanarDecoder::Options options{
      (m.d.param & 1) ? PlanarDecoder::Rows::BottomUp : PlanarDecoder::Rows::TopDown,
      (m.d.param & 2) ? PlanarDecoder::Alpha::FromStream : PlanarDecoder::Alpha::Opaque};
  oracle::Begin b;
  b.codec = oracle::Codec::Planar;
  b.side = kSide;
  b.fillSeed = data[0] ^ (data[1] << 8);
  diff.begin(b, {data, size});
  diff.step(m, PlanarDecoder::decode(m.data, diff.oursAt(m.d), options));
  return 0;
}
