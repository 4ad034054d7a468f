// gc-bench-fronts: what the validating fronts cost on a worst-case 1080p stream at 60 fps,
// the whole desktop changing every frame, in the two shapes the console reads:
// - bitmaps: uncompressed Set Surface Bits in 64 KiB bands (as the test guest sends them),
//   each split into fast-path fragments of at most 16 KiB, inside Frame Markers;
// - gfx: RDPGFX bytes over drdynvc, DATA_FIRST/DATA messages of one 1600-byte static channel
//   chunk each, the chunk through PduFront and the message through DynvcFront as FrontGuard
//   does it (a one-chunk message is judged in place).
// The PDUs are built once (tests/auto/rdpfront/PduBuilder.h); only the checks are timed.
// Usage: gc-bench-fronts [frames]   (default 120). Build it without sanitizers.
#include "PduBuilder.h"
#include "rdp/front/DynvcFront.h"
#include "rdp/front/PduFront.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

using namespace gc::front;
using namespace gc::front::build;

namespace {

constexpr uint16_t kWidth = 1920, kHeight = 1080;
constexpr std::size_t kBandBytes = 64 * 1024;
constexpr std::size_t kFragmentBytes = 16 * 1024;
constexpr std::size_t kChunkBytes = 1600;

Limits limits1080() {
  Limits l;
  l.desktopWidth = kWidth;
  l.desktopHeight = kHeight;
  return l;
}

PduFront activeFront() {
  PduFront front(limits1080());
  for (const Bytes& pdu : connectionToActive(kWidth, kHeight)) {
    if (front.wantsChannels()) {
      const uint16_t statics[] = {1004};
      front.setStaticChannels(statics);
    }
    if (isViolation(front.check(pdu)))
      std::abort();
  }
  return front;
}

// One frame of the bitmap path: fast-path PDUs.
std::vector<Bytes> bitmapFrame() {
  std::vector<Bytes> pdus;
  const int rows = int(kBandBytes / (std::size_t(kWidth) * 4));
  std::vector<Bytes> updates{frameMarker(0, 1)};
  for (int top = 0; top < kHeight; top += rows)
    updates.push_back(surfaceBits(0, uint16_t(top), kWidth, uint16_t(std::min<int>(top + rows, kHeight))));
  updates.push_back(frameMarker(1, 1));
  for (const Bytes& u : updates) {
    if (u.size() <= kFragmentBytes) {
      pdus.push_back(fastPath({fpUpdate(4, 0, u)}));
      continue;
    }
    for (std::size_t at = 0; at < u.size(); at += kFragmentBytes) {
      const std::size_t n = std::min(kFragmentBytes, u.size() - at);
      const uint8_t frag = at == 0 ? 2 : at + n == u.size() ? 1 : 3;
      pdus.push_back(fastPath(
          {fpUpdate(4, frag, Bytes(u.begin() + std::ptrdiff_t(at), u.begin() + std::ptrdiff_t(at + n)))}));
    }
  }
  return pdus;
}

// One frame of the gfx path: static channel PDUs carrying drdynvc messages.
std::vector<Bytes> gfxFrame() {
  std::vector<Bytes> pdus;
  const std::size_t frameBytes = std::size_t(kWidth) * kHeight * 4;
  const std::size_t message = 4u << 20; // RDPGFX messages of 4 MiB
  for (std::size_t done = 0; done < frameBytes; done += message) {
    const std::size_t total = std::min(message, frameBytes - done);
    std::size_t sent = 0;
    bool first = true;
    while (sent < total) {
      const std::size_t room = kChunkBytes - (first ? 6 : 2);
      const std::size_t n = std::min(room, total - sent);
      const Bytes dvc = first ? dvcDataFirst(3, uint32_t(total), n) : dvcData(3, n);
      pdus.push_back(channelChunk(1004, uint32_t(dvc.size()), 0x3, dvc));
      sent += n;
      first = false;
    }
  }
  return pdus;
}

struct Result {
  uint64_t pdus = 0;
  uint64_t bytes = 0;
  double seconds = 0;
};

Result runBitmaps(int frames) {
  const std::vector<Bytes> frame = bitmapFrame();
  PduFront front = activeFront();
  Result r;
  const auto start = std::chrono::steady_clock::now();
  for (int f = 0; f < frames; ++f) {
    for (const Bytes& pdu : frame) {
      if (isViolation(front.check(pdu)))
        std::abort();
      ++r.pdus;
      r.bytes += pdu.size();
    }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

Result runGfx(int frames) {
  const std::vector<Bytes> frame = gfxFrame();
  PduFront front = activeFront();
  DynvcFront dynvc(limits1080());
  if (isViolation(dynvc.check(dvcCreate(3, "Microsoft::Windows::RDS::Graphics"))))
    std::abort();
  Result r;
  const auto start = std::chrono::steady_clock::now();
  for (int f = 0; f < frames; ++f) {
    for (const Bytes& pdu : frame) {
      const auto checked = front.check(pdu);
      if (isViolation(checked))
        std::abort();
      const PduInfo& info = std::get<PduInfo>(checked);
      // FrontGuard::checkDynvcChunk for a FIRST|LAST chunk: judged where it lies.
      const std::span<const uint8_t> message(pdu.data() + info.chunkOffset, info.chunkLength);
      if (isViolation(dynvc.checkHead(message, message.size())))
        std::abort();
      ++r.pdus;
      r.bytes += pdu.size();
    }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

void print(const char* name, const Result& r, int frames) {
  const double perFrameMs = r.seconds * 1e3 / frames;
  std::printf("%-8s %d frames of 1920x1080: %llu PDUs, %.1f MiB in %.3f s: %.0f ns/PDU, %.2f ms/frame, "
              "%.0f MiB/s; at 60 fps %.2f%% of one core\n",
              name, frames, static_cast<unsigned long long>(r.pdus), double(r.bytes) / (1 << 20), r.seconds,
              r.seconds * 1e9 / double(r.pdus), perFrameMs, double(r.bytes) / (1 << 20) / r.seconds,
              perFrameMs * 60 / 10);
}

} // namespace

int main(int argc, char** argv) {
  const int frames = argc > 1 ? std::max(1, std::atoi(argv[1])) : 120;
  print("bitmaps", runBitmaps(frames), frames);
  print("gfx", runGfx(frames), frames);
  return 0;
}
