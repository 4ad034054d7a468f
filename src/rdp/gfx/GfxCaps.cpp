#include "rdp/gfx/GfxCaps.h"

#include "rdp/gfx/GfxPdu.h"

namespace gc::gfx {

namespace {

using namespace caps;

constexpr CapsSet kAdvertised[] = {
    {kVersion107, kSmallCache | kAvcDisabled | kScaledMapDisable},
    {kVersion106, kSmallCache | kAvcDisabled},
    {kVersion105, kSmallCache | kAvcDisabled},
    {kVersion104, kSmallCache | kAvcDisabled},
    {kVersion102, kSmallCache | kAvcDisabled},
    {kVersion10, kSmallCache | kAvcDisabled},
    {kVersion81, kSmallCache},
    {kVersion8, kSmallCache},
};

void put16(std::vector<uint8_t>& out, uint32_t v) {
  out.push_back(uint8_t(v));
  out.push_back(uint8_t(v >> 8));
}
void put32(std::vector<uint8_t>& out, uint32_t v) {
  put16(out, v & 0xFFFF);
  put16(out, v >> 16);
}
void header(std::vector<uint8_t>& out, Cmd cmd, uint32_t length) {
  put16(out, uint16_t(cmd));
  put16(out, 0); // flags
  put32(out, length);
}

} // namespace

std::span<const CapsSet> advertisedCaps() {
  return kAdvertised;
}

std::optional<CapsSet> confirmedSet(uint32_t version, uint32_t flags) {
  for (const CapsSet& set : kAdvertised) {
    if (set.version != version)
      continue;
    // The server may drop a flag of ours; it may not add one (AVC420, thin client...).
    // AVC_DISABLED must stay: without it the server may send AVC.
    const bool avcOff = version < kVersion10 || (flags & kAvcDisabled);
    if ((flags & ~set.flags) == 0 && avcOff)
      return CapsSet{version, flags};
    return std::nullopt;
  }
  return std::nullopt;
}

std::vector<uint8_t> encodeCapsAdvertise() {
  const auto sets = advertisedCaps();
  std::vector<uint8_t> out;
  const uint32_t length = 8 + 2 + uint32_t(sets.size()) * 12;
  header(out, Cmd::CapsAdvertise, length);
  put16(out, uint32_t(sets.size()));
  for (const CapsSet& set : sets) {
    put32(out, set.version);
    put32(out, 4); // capsDataLength: the flags
    put32(out, set.flags);
  }
  return out;
}

std::vector<uint8_t> encodeFrameAcknowledge(uint32_t queueDepth, uint32_t frameId,
                                            uint32_t totalFramesDecoded) {
  std::vector<uint8_t> out;
  header(out, Cmd::FrameAcknowledge, 8 + 12);
  put32(out, queueDepth);
  put32(out, frameId);
  put32(out, totalFramesDecoded);
  return out;
}

} // namespace gc::gfx
