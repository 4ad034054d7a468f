// PduFront: a sequence of server-to-client PDUs (each a 2-byte little-endian length and the
// PDU, as the seeds tst_rdpfront writes), checked in order as FrontGuard does, once with a
// desktop bounded by the grant's pixel count and once with the grant's exact size. Besides
// crashes and sanitizer findings: what an accepted PDU reports must lie within the PDU and
// within the bounds, and a refusal must name its PDU kind and rule.
#include "rdp/front/PduFront.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace {

void run(const uint8_t* data, size_t size, bool sizeFromServer) {
  gc::front::Limits limits;
  limits.desktopWidth = 1024;
  limits.desktopHeight = 768;
  limits.sizeFromServer = sizeFromServer;
  gc::front::PduFront front(limits);
  size_t at = 0;
  while (at + 2 <= size) {
    const size_t length = size_t(data[at]) | size_t(data[at + 1]) << 8;
    at += 2;
    if (length > size - at)
      break;
    const std::span<const uint8_t> pdu(data + at, length);
    at += length;
    if (front.wantsChannels()) {
      const uint16_t statics[] = {1004};
      front.setStaticChannels(statics);
    }
    const auto result = front.check(pdu);
    if (const auto* v = std::get_if<gc::front::Violation>(&result)) {
      if (v->pdu.empty() || v->rule.empty())
        std::abort();
      return; // the connection would be over
    }
    const auto& info = std::get<gc::front::PduInfo>(result);
    if (info.kind == gc::front::PduInfo::Kind::ChannelData &&
        (size_t(info.chunkOffset) + info.chunkLength > pdu.size() || info.chunkLength > info.channelTotal))
      std::abort();
    if (info.demandActive) {
      const uint64_t pixels = uint64_t(info.desktopWidth) * info.desktopHeight;
      if (pixels == 0 || pixels > uint64_t(limits.desktopWidth) * limits.desktopHeight)
        std::abort();
    }
    if (front.framesOpen() > limits.maxFramesInFlight)
      std::abort();
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  run(data, size, true);
  run(data, size, false);
  return 0;
}
