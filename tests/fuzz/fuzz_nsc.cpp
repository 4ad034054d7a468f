// NscDecoder against FreeRDP 3.10.3's nsc_process_message, called as clear_decompress calls it
// for ClearCodec's subcodec 1 (Differential.h). Input: width - 1, height - 1 (modulo 64), then
// the NSCodec stream, decoded into the top-left of a 64 x 64 surface.
#include "Differential.h"
#include "NscClasses.h"
#include "rdp/codec/NscDecoder.h"

#include <cstdint>

using gc::codec::NscDecoder;
using namespace gc::fuzz;

namespace {

constexpr uint32_t kSide = 64;

class NscDifferential : public Differential {
public:
  NscDifferential() : Differential("nsc", 3) {}

protected:
  const char* freerdpLenient(std::string_view, std::string_view rule, const Message&) const override {
    return nscFreeRdpLenient(rule);
  }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2)
    return 0;
  static NscDifferential diff;
  Message m;
  m.d.w = uint16_t(1 + data[0] % kSide);
  m.d.h = uint16_t(1 + data[1] % kSide);
  m.data = std::span<const uint8_t>(data + 2, size - 2);
  oracle::Begin b;
  b.codec = oracle::Codec::Nsc;
  b.side = kSide;
  b.fillSeed = data[0] ^ (data[1] << 8);
  diff.begin(b, {data, size});
  diff.step(m, NscDecoder::decode(m.data, diff.oursAt(m.d)));
  return 0;
}
