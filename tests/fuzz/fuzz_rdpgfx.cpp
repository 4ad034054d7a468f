// libFuzzer target for the console's own RDPGFX client: ZGFX, the PDU parser, the front and
// the execution into a small surface of record, with the codecs (issue 24.5). Input: a flag
// byte (bit 0: start from a ready channel — caps confirmed, a 64x64 desktop, surface 1 mapped
// at (0,0) — so the executor is reached at once; bit 1: send each message as it is, ZGFX
// included, instead of wrapped in a raw single segment), then messages, each a 16-bit
// little-endian length and that many bytes. Every input starts a fresh client.
#include "rdp/DesktopSurface.h"
#include "rdp/gfx/GfxClient.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace {

void put16(std::vector<uint8_t>& b, uint32_t v) {
  b.push_back(uint8_t(v));
  b.push_back(uint8_t(v >> 8));
}
void put32(std::vector<uint8_t>& b, uint32_t v) {
  put16(b, v & 0xFFFF);
  put16(b, v >> 16);
}
void header(std::vector<uint8_t>& b, uint16_t cmd, uint32_t length) {
  put16(b, cmd);
  put16(b, 0);
  put32(b, length);
}

std::vector<uint8_t> readyMessage() {
  std::vector<uint8_t> b{0xE0, 0x04};
  header(b, 0x0013, 20); // CapsConfirm 10.7
  put32(b, 0x000A0701);
  put32(b, 4);
  put32(b, 0x02 | 0x20 | 0x80);
  header(b, 0x000E, 340); // ResetGraphics 64x64, one monitor
  const std::size_t at = b.size();
  put32(b, 64);
  put32(b, 64);
  put32(b, 1);
  b.resize(at + 332, 0);
  header(b, 0x0009, 15); // CreateSurface 1, 64x64, XRGB
  put16(b, 1);
  put16(b, 64);
  put16(b, 64);
  b.push_back(0x20);
  header(b, 0x000F, 20); // MapSurfaceToOutput 1 at (0,0)
  put16(b, 1);
  put16(b, 0);
  put32(b, 0);
  put32(b, 0);
  return b;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1)
    return 0;
  const uint8_t flags = data[0];
  gc::front::Limits limits;
  limits.desktopWidth = 64;
  limits.desktopHeight = 64;
  limits.maxGfxMessageBytes = 1u << 20;
  gc::DesktopSurface desktop(64 * 64 * 4);
  int frames = 0;
  gc::gfx::GfxClient client(limits, desktop, [&] {
    ++frames;
    (void)desktop.takeChanges();
  });
  client.setPacing([](uint32_t id) { return (id & 3) != 0; }); // some held back
  client.opened([](std::span<const uint8_t>) { return true; });
  if (flags & 1)
    (void)client.receive(readyMessage());
  std::size_t pos = 1;
  std::vector<uint8_t> message;
  while (pos + 2 <= size) {
    const std::size_t length = std::size_t(data[pos]) | std::size_t(data[pos + 1]) << 8;
    pos += 2;
    const std::size_t take = std::min(length, size - pos);
    message.clear();
    if (!(flags & 2)) {
      message.push_back(0xE0);
      message.push_back(0x04);
    }
    message.insert(message.end(), data + pos, data + pos + take);
    pos += take;
    if (gc::front::isViolation(client.receive(message)))
      break;
    if (frames % 5 == 4)
      client.acknowledgeDeferred();
  }
  client.closed();
  return 0;
}
