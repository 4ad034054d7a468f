// DynvcFront: a sequence of drdynvc messages (each a 2-byte little-endian length and the
// message). Besides crashes and sanitizer findings, a differential check: a front that sees
// only each message's head (DynvcFront::kMaxHeadBytes, as FrontGuard keeps it) and its total
// must decide exactly as one that sees the whole message, and every reassembly it reports
// stays within the declared length and the bound.
#include "rdp/front/DynvcFront.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gc::front::Limits limits;
  limits.maxDvcMessageBytes = 1u << 16; // small enough for the fuzzer to reach
  gc::front::DynvcFront whole(limits);
  gc::front::DynvcFront head(limits);
  size_t at = 0;
  while (at + 2 <= size) {
    const size_t length = size_t(data[at]) | size_t(data[at + 1]) << 8;
    at += 2;
    if (length > size - at)
      break;
    const std::span<const uint8_t> message(data + at, length);
    at += length;
    const auto a = whole.check(message);
    const auto b =
        head.checkHead(message.first(std::min(length, gc::front::DynvcFront::kMaxHeadBytes)), length);
    if (gc::front::isViolation(a) != gc::front::isViolation(b))
      std::abort();
    if (const auto* v = std::get_if<gc::front::Violation>(&a)) {
      const auto& w = std::get<gc::front::Violation>(b);
      if (v->pdu != w.pdu || v->rule != w.rule || v->pdu.empty() || v->rule.empty())
        std::abort();
      return 0;
    }
    const auto& x = std::get<gc::front::DynvcInfo>(a);
    const auto& y = std::get<gc::front::DynvcInfo>(b);
    if (x.kind != y.kind || x.channelId != y.channelId || x.complete != y.complete ||
        x.carried != y.carried || x.declaredLength != y.declaredLength || x.name != y.name)
      std::abort();
    if (x.declaredLength > limits.maxDvcMessageBytes)
      std::abort();
    for (char c : x.name) {
      if (c < 0x20 || c > 0x7E)
        std::abort();
    }
  }
  return 0;
}
