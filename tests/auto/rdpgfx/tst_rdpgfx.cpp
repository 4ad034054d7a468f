// The console's own RDPGFX client (src/rdp/gfx/): the validating front, one row per rule
// (issue 24.1), the execution into the surface of record (issue 27.1: the output surface IS
// the DesktopSurface; moves on it stay moves), frame acknowledgement and its pacing, the
// caps offered, and ZGFX against FreeRDP's own (zgfx_compress output, and compressed token
// streams FreeRDP's zgfx_decompress reads the same way).
#include "GfxBytes.h"
#include "rdp/DesktopSurface.h"
#include "rdp/gfx/GfxCaps.h"
#include "rdp/gfx/GfxChannel.h"
#include "rdp/gfx/GfxClient.h"
#include "rdp/gfx/GfxPdu.h"
#include "rdp/gfx/Zgfx.h"

#include <QElapsedTimer>
#include <QImage>
#include <QRandomGenerator>
#include <QSet>
#include <QTest>

#include <freerdp/codec/planar.h>
#include <freerdp/codec/progressive.h>
#include <freerdp/codec/region.h>
#include <freerdp/codec/zgfx.h>
#include <winpr/stream.h>

#include <cstdlib>
#include <cstring>
#include <optional>

using namespace gfxbytes;
using gc::DesktopSurface;
using gc::front::Violation;
using gc::gfx::GfxClient;

Q_DECLARE_METATYPE(gfxbytes::Bytes)

namespace {

constexpr int kW = 64, kH = 48;
constexpr uint32_t kCaps107 = 0x000A0701;
constexpr uint32_t kCaps107Flags = 0x02 | 0x20 | 0x80;

gc::front::Limits smallLimits() {
  gc::front::Limits l;
  l.desktopWidth = kW;
  l.desktopHeight = kH;
  return l;
}

// The client on a small desktop, with what it wrote and the frames it handed on.
struct Rig {
  explicit Rig(gc::front::Limits limits = smallLimits())
      : desktop(qsizetype(limits.desktopWidth) * limits.desktopHeight * 4), client(limits, desktop, [this] {
          ++framesEnded;
          const DesktopSurface::Changes c = desktop.takeChanges();
          moves += c.moves;
          damage += c.damage;
          if (c.resized)
            resized = c.resized;
        }) {
    client.opened([this](std::span<const uint8_t> b) {
      written.emplace_back(b.begin(), b.end());
      return true;
    });
  }
  gc::front::Checked<gc::front::Ok> send(const Bytes& plain) { return client.receive(zgfx(plain)); }
  bool ok(const Bytes& plain) { return !gc::front::isViolation(send(plain)); }
  // Caps 10.7, a desktop reset, surface 1 of the desktop's size mapped at (0,0).
  bool ready() {
    return ok(cat({capsConfirm(kCaps107, kCaps107Flags), resetGraphics(kW, kH), createSurface(1, kW, kH),
                   mapToOutput(1, 0, 0)}));
  }
  quint32 pixel(int x, int y) const {
    quint32 v;
    std::memcpy(&v, desktop.constBits() + y * desktop.stride() + x * 4, 4);
    return v & 0x00FFFFFF;
  }
  // FrameAcknowledge PDUs written: their frameIds.
  QList<uint32_t> acks() const {
    QList<uint32_t> ids;
    for (const auto& w : written) {
      if (w.size() == 20 && w[0] == 0x0D && w[1] == 0)
        ids.append(uint32_t(w[12] | w[13] << 8 | w[14] << 16 | w[15] << 24));
    }
    return ids;
  }

  DesktopSurface desktop;
  GfxClient client;
  std::vector<Bytes> written;
  int framesEnded = 0;
  QList<DesktopSurface::Move> moves;
  QList<QRect> damage;
  std::optional<QSize> resized;
};

Bytes bgrx(int w, int h, quint32 seed) {
  Bytes b;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const quint32 v = (seed * 2654435761u) ^ quint32(x * 7919 + y * 104729);
      u8(b, v & 0xFF);
      u8(b, (v >> 8) & 0xFF);
      u8(b, (v >> 16) & 0xFF);
      u8(b, 0xFF);
    }
  return b;
}

// ---- a ZGFX encoder of our own, for compressed token streams (FreeRDP's compressor only
// writes raw segments) -----------------------------------------------------------------
struct BitWriter {
  Bytes out;
  int used = 0; // bits used in the last byte
  void put(uint32_t value, int bits) {
    for (int i = bits - 1; i >= 0; --i) {
      if (used == 0)
        out.push_back(0);
      out.back() |= uint8_t(((value >> i) & 1u) << (7 - used));
      used = (used + 1) % 8;
    }
  }
  void align() { used = 0; }
  Bytes finish() {
    Bytes b = out;
    b.push_back(uint8_t(used ? 8 - used : 0)); // padding bits of the last byte
    return b;
  }
};

// One compressed segment producing `plain` from literals, matches into what it produced and
// unencoded runs (random choices), the history starting empty.
Bytes compressSegment(const Bytes& plain, QRandomGenerator& rng) {
  BitWriter w;
  std::size_t i = 0;
  while (i < plain.size()) {
    const int choice = int(rng.bounded(10));
    // A match of 3..(up to 600) bytes found earlier in this segment.
    if (choice < 4 && i >= 3) {
      const std::size_t maxLen = std::min<std::size_t>(plain.size() - i, 600);
      std::size_t bestLen = 0, bestDist = 0;
      for (std::size_t d = 1; d <= std::min<std::size_t>(i, 2000); ++d) {
        std::size_t l = 0;
        while (l < maxLen && plain[i + l] == plain[i + l - d])
          ++l;
        if (l > bestLen) {
          bestLen = l;
          bestDist = d;
        }
      }
      if (bestLen >= 3) {
        // distance tokens: 10001 (5 bits, base 0), 10010 (7, 32), 10011 (9, 160), 10100 (10, 672), 10101 (12,
        // 1696)
        struct D {
          uint32_t code, len, bits, base;
        } const dt[] = {{17, 5, 5, 0}, {18, 5, 7, 32}, {19, 5, 9, 160}, {20, 5, 10, 672}, {21, 5, 12, 1696}};
        const D* t = nullptr;
        for (const D& d : dt)
          if (bestDist >= d.base && bestDist < d.base + (1u << d.bits))
            t = &d;
        if (t) {
          w.put(t->code, int(t->len));
          w.put(uint32_t(bestDist - t->base), int(t->bits));
          const uint32_t count = uint32_t(bestLen);
          if (count == 3) {
            w.put(0, 1);
          } else {
            // 1, then k ones and a zero: base = 4 << k, then (2 + k) bits of (count - base)
            uint32_t base = 4;
            int extra = 2;
            while (count >= base * 2) {
              base *= 2;
              ++extra;
            }
            w.put(1, 1);
            for (int k = 2; k < extra; ++k)
              w.put(1, 1);
            w.put(0, 1);
            w.put(count - base, extra);
          }
          i += bestLen;
          continue;
        }
      }
    }
    if (choice == 4) {
      // Unencoded: distance token 10001 with value 0, a 15-bit count, aligned bytes.
      const uint32_t n = uint32_t(std::min<std::size_t>(plain.size() - i, 1 + rng.bounded(40)));
      w.put(17, 5);
      w.put(0, 5);
      w.put(n, 15);
      w.align();
      for (uint32_t k = 0; k < n; ++k)
        w.out.push_back(plain[i + k]);
      i += n;
      continue;
    }
    const uint8_t c = plain[i];
    if (c == 0x00 && choice < 8) {
      w.put(0b11000, 5);
    } else if (c == 0xFF && choice < 8) {
      w.put(0b110110, 6);
    } else {
      w.put(0, 1);
      w.put(c, 8);
    }
    ++i;
  }
  Bytes seg{0x24}; // RDP 8.0 | PACKET_COMPRESSED
  const Bytes body = w.finish();
  seg.insert(seg.end(), body.begin(), body.end());
  return seg;
}

std::optional<Bytes> freerdpDecompress(ZGFX_CONTEXT* z, const Bytes& in) {
  BYTE* out = nullptr;
  UINT32 size = 0;
  const int rc = zgfx_decompress(z, in.data(), UINT32(in.size()), &out, &size, 0);
  if (rc < 0) {
    free(out);
    return std::nullopt;
  }
  Bytes b(out, out + size);
  free(out);
  return b;
}

} // namespace

class tst_RdpGfx : public QObject {
  Q_OBJECT

private slots:
  void answersAReadvertiseWithOneCapsConfirm();
  void resetGraphicsDeletesEverySurface();
  void deletingASurfaceTheResetDeletedIsAcceptedOnce();
  void refusesEachRuleBreach_data();
  void refusesEachRuleBreach();
  void refusesFramesBeyondTheInFlightBound();
  void refusesMoreSurfacesThanTheBound();
  void stopsAtTheFirstViolationAndKeepsIt();
  void advertisesOnlyTheLosslessCapsItDecodes();
  void paintsFillsAndUncompressedBitmapsIntoTheSurfaceOfRecord();
  void adoptsTheOutputSurfaceInsteadOfCopyingIt();
  void keepsMovesOnTheOutputAsMoves();
  void composesASurfaceMappedAtAnOffset();
  void acknowledgesEveryFrameAndPacingHoldsThem();
  void resetsTheDesktopToTheGrantsSizeOnly();
  void decodesPlanarToThePixelsEncoded();
  void progressiveRedrawOfTheSamePixelsIsNoDamage();
  void measuresTheProgressiveTileHashAt1080p();
  void closeForgetsSurfacesCacheAndCaps();
  void appliesAlphaToAnArgbSurfaceOnly_data();
  void appliesAlphaToAnArgbSurfaceOnly();
  void refusesASecondGraphicsChannelAndEndlessReopens();
  void aReservedPoolServesEveryLargerMessageFromOneStream();
  void zgfxReadsWhatFreeRdpCompresses_data();
  void zgfxReadsWhatFreeRdpCompresses();
  void zgfxAgreesWithFreeRdpOnCompressedTokens();
  void zgfxBoundsDeclaredSizesBeforeReserving_data();
  void zgfxBoundsDeclaredSizesBeforeReserving();
};

void tst_RdpGfx::refusesEachRuleBreach_data() {
  QTest::addColumn<bool>("ready");  // caps, reset, surface 1 mapped at (0,0) first
  QTest::addColumn<Bytes>("setup"); // then these, which must pass
  QTest::addColumn<Bytes>("breach");
  QTest::addColumn<int>("kind");
  QTest::addColumn<QString>("pdu");
  QTest::addColumn<QString>("rule");
  const int P = int(Violation::Kind::Protocol), Rs = int(Violation::Kind::Resource),
            D = int(Violation::Kind::Desktop);
  const Bytes none;
  const Bytes s2 = createSurface(2, 16, 16);

  // Caps.
  QTest::newRow("a PDU before CapsConfirm")
      << false << none << solidFill(1, 1, 2, 3, {}) << P << "rdpgfx.SolidFill"
      << "PDU before CapsConfirm";
  QTest::newRow("caps never advertised (10.3)")
      << false << none << capsConfirm(0x000A0301, 0x20) << P << "rdpgfx.CapsConfirm"
      << "a capability set never advertised";
  QTest::newRow("caps 10.7 without AVC_DISABLED")
      << false << none << capsConfirm(kCaps107, 0x02) << P << "rdpgfx.CapsConfirm"
      << "a capability set never advertised";
  QTest::newRow("caps 8.1 with AVC420")
      << false << none << capsConfirm(0x00080105, 0x12) << P << "rdpgfx.CapsConfirm"
      << "a capability set never advertised";
  QTest::newRow("caps with thin client")
      << false << none << capsConfirm(0x00080004, 0x03) << P << "rdpgfx.CapsConfirm"
      << "a capability set never advertised";
  QTest::newRow("second CapsConfirm")
      << true << none << capsConfirm(kCaps107, kCaps107Flags) << P << "rdpgfx.CapsConfirm"
      << "second CapsConfirm";
  // ResetGraphics: every size the guest names.
  QTest::newRow("reset 0x0") << true << none << resetGraphics(0, 0, 0) << P << "rdpgfx.ResetGraphics"
                             << "desktop of zero size";
  QTest::newRow("reset other than the grant's")
      << true << none << resetGraphics(32, 32) << D << "rdpgfx.ResetGraphics"
      << "desktop size other than the grant's";
  QTest::newRow("reset 65535x65535") << true << none << resetGraphics(65535, 65535) << Rs
                                     << "rdpgfx.ResetGraphics"
                                     << "desktop side beyond the bound";
  QTest::newRow("reset not 340 bytes")
      << true << none << resetGraphics(kW, kH, 1, 300) << P << "rdpgfx.ResetGraphics"
      << "pduLength is not 340";
  QTest::newRow("reset 17 monitors") << true << none << resetGraphics(kW, kH, 17) << P
                                     << "rdpgfx.ResetGraphics"
                                     << "more than 16 monitors";
  // Surfaces.
  QTest::newRow("create 0x16") << true << none << createSurface(2, 0, 16) << P << "rdpgfx.CreateSurface"
                               << "surface of zero size";
  QTest::newRow("create an existing id")
      << true << none << createSurface(1, 16, 16) << P << "rdpgfx.CreateSurface"
      << "surface already exists";
  QTest::newRow("create 65535x16 (issue 24)")
      << true << none << createSurface(2, 65535, 16) << Rs << "rdpgfx.CreateSurface"
      << "surface side beyond the bound";
  QTest::newRow("create beyond the pixel budget")
      << true << none << createSurface(2, kW, kH * 4) << Rs << "rdpgfx.CreateSurface"
      << "pixel memory beyond the budget";
  QTest::newRow("create with a bad pixel format")
      << true << none << createSurface(2, 16, 16, 0x11) << P << "rdpgfx.CreateSurface"
      << "pixel format is neither XRGB nor ARGB";
  QTest::newRow("delete an unknown surface")
      << true << none << deleteSurface(9) << P << "rdpgfx.DeleteSurface"
      << "surface does not exist";
  QTest::newRow("map outside the desktop")
      << true << s2 << mapToOutput(2, kW, 0) << P << "rdpgfx.MapSurfaceToOutput"
      << "origin outside the desktop";
  QTest::newRow("map an unknown surface")
      << true << none << mapToOutput(9, 0, 0) << P << "rdpgfx.MapSurfaceToOutput"
      << "surface does not exist";
  QTest::newRow("scaled output map") << true << none << pdu(0x0017, Bytes(20, 0)) << P
                                     << "rdpgfx.MapSurfaceToScaledOutput"
                                     << "scaled maps: the console never scales";
  QTest::newRow("window map") << true << none << pdu(0x0015, Bytes(18, 0)) << P << "rdpgfx.MapSurfaceToWindow"
                              << "window maps need RAIL, which the console does not run";
  QTest::newRow("scaled window map") << true << none << pdu(0x0018, Bytes(26, 0)) << P
                                     << "rdpgfx.MapSurfaceToScaledWindow"
                                     << "window maps need RAIL, which the console does not run";
  QTest::newRow("cache import reply")
      << true << none << pdu(0x0011, Bytes{1, 0, 1, 0}) << P << "rdpgfx.CacheImportReply"
      << "reply to a cache import never offered";
  QTest::newRow("a client-to-server PDU")
      << true << none << pdu(0x000D, Bytes(12, 0)) << P << "rdpgfx.FrameAcknowledge"
      << "a client-to-server PDU from the server";
  // Fills and copies.
  QTest::newRow("fill outside the surface")
      << true << none << solidFill(1, 1, 2, 3, {{60, 0, 65, 4}}) << P << "rdpgfx.SolidFill"
      << "fill rectangle outside the surface";
  QTest::newRow("fill an unknown surface")
      << true << none << solidFill(7, 1, 2, 3, {{0, 0, 1, 1}}) << P << "rdpgfx.SolidFill"
      << "surface does not exist";
  {
    Bytes body;
    u16(body, 1);
    u32(body, 0);
    u16(body, 1025);
    body.resize(body.size() + 1025 * 8, 0);
    QTest::newRow("fill with 1025 rectangles")
        << true << none << pdu(0x0004, body) << Rs << "rdpgfx.SolidFill"
        << "more rectangles than one PDU may carry";
    Bytes shortBody;
    u16(shortBody, 1);
    u32(shortBody, 0);
    u16(shortBody, 3);
    shortBody.resize(shortBody.size() + 8, 0);
    QTest::newRow("fill count beyond its length")
        << true << none << pdu(0x0004, shortBody) << P << "rdpgfx.SolidFill"
        << "fillRectCount differs from pduLength";
  }
  QTest::newRow("fill of more than 4 desktops")
      << true << none
      << solidFill(1, 1, 2, 3, {{0, 0, kW, kH}, {0, 0, kW, kH}, {0, 0, kW, kH}, {0, 0, kW, kH}, {0, 0, 1, 1}})
      << Rs << "rdpgfx.SolidFill"
      << "more pixels than one PDU may write";
  QTest::newRow("a blit to 5 places of a whole desktop")
      << true << none << surfaceToSurface(1, 1, {0, 0, kW, kH}, {{0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}})
      << Rs << "rdpgfx.SurfaceToSurface"
      << "more pixels than one PDU may write";
  QTest::newRow("a cache blit to 5 places of a whole desktop")
      << true << surfaceToCache(1, 9, {0, 0, kW, kH})
      << cacheToSurface(9, 1, {{0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}}) << Rs << "rdpgfx.CacheToSurface"
      << "more pixels than one PDU may write";
  QTest::newRow("surface-to-surface to x=65000 (issue 24)")
      << true << none << surfaceToSurface(1, 1, {0, 0, 16, 16}, {{65000, 0}}) << P
      << "rdpgfx.SurfaceToSurface"
      << "destination rectangle outside the surface";
  QTest::newRow("surface-to-surface from outside")
      << true << none << surfaceToSurface(1, 1, {0, 0, 4000, 16}, {{0, 0}}) << P << "rdpgfx.SurfaceToSurface"
      << "source rectangle outside the surface";
  QTest::newRow("surface-to-surface from an unknown surface")
      << true << none << surfaceToSurface(4, 1, {0, 0, 1, 1}, {{0, 0}}) << P << "rdpgfx.SurfaceToSurface"
      << "surface does not exist";
  // Cache.
  QTest::newRow("cache slot 0") << true << none << surfaceToCache(1, 0, {0, 0, 8, 8}) << P
                                << "rdpgfx.SurfaceToCache"
                                << "cache slot outside 1..maxCacheSlots";
  QTest::newRow("cache slot 4097") << true << none << surfaceToCache(1, 4097, {0, 0, 8, 8}) << P
                                   << "rdpgfx.SurfaceToCache"
                                   << "cache slot outside 1..maxCacheSlots";
  QTest::newRow("cache from outside the surface")
      << true << none << surfaceToCache(1, 1, {0, 0, 65, 8}) << P << "rdpgfx.SurfaceToCache"
      << "source rectangle outside the surface";
  QTest::newRow("cache beyond the pixel budget")
      << true << createSurface(2, kW, kH * 2) << surfaceToCache(2, 1, {0, 0, kW, kH * 2}) << Rs
      << "rdpgfx.SurfaceToCache"
      << "pixel memory beyond the budget";
  QTest::newRow("cache-to-surface from an empty slot")
      << true << none << cacheToSurface(5, 1, {{0, 0}}) << P << "rdpgfx.CacheToSurface"
      << "cache slot not occupied";
  QTest::newRow("cache-to-surface outside (issue 24)")
      << true << surfaceToCache(1, 5, {0, 0, 16, 16}) << cacheToSurface(5, 1, {{60, 40}}) << P
      << "rdpgfx.CacheToSurface"
      << "destination rectangle outside the surface";
  QTest::newRow("evict an empty slot") << true << none << evict(3) << P << "rdpgfx.EvictCacheEntry"
                                       << "cache slot not occupied";
  // Surface commands: codecs only as advertised, never a decode of another.
  const Bytes tiny(16, 0);
  QTest::newRow("AVC420 (issue 24)") << true << none << wireToSurface1(1, 0x000B, {0, 0, 8, 8}, tiny) << P
                                     << "rdpgfx.WireToSurface1"
                                     << "codec the console did not advertise";
  QTest::newRow("AVC444") << true << none << wireToSurface1(1, 0x000E, {0, 0, 8, 8}, tiny) << P
                          << "rdpgfx.WireToSurface1"
                          << "codec the console did not advertise";
  QTest::newRow("AVC444v2") << true << none << wireToSurface1(1, 0x000F, {0, 0, 8, 8}, tiny) << P
                            << "rdpgfx.WireToSurface1"
                            << "codec the console did not advertise";
  QTest::newRow("RemoteFX") << true << none << wireToSurface1(1, 0x0003, {0, 0, 8, 8}, tiny) << P
                            << "rdpgfx.WireToSurface1"
                            << "codec the console did not advertise";
  QTest::newRow("progressive in WireToSurface1")
      << true << none << wireToSurface1(1, 0x0009, {0, 0, 8, 8}, tiny) << P << "rdpgfx.WireToSurface1"
      << "progressive outside WireToSurface2";
  QTest::newRow("an unknown codec") << true << none << wireToSurface1(1, 0x0077, {0, 0, 8, 8}, tiny) << P
                                    << "rdpgfx.WireToSurface1"
                                    << "unknown codec";
  QTest::newRow("bitmap outside the surface")
      << true << none << wireToSurface1(1, 0x000A, {60, 40, 70, 50}, tiny) << P << "rdpgfx.WireToSurface1"
      << "destination rectangle outside the surface";
  QTest::newRow("uncompressed of the wrong size")
      << true << none << wireToSurface1(1, 0x0000, {0, 0, 8, 8}, tiny) << P << "rdpgfx.WireToSurface1"
      << "uncompressed bitmap size differs from its rectangle";
  QTest::newRow("bitmap in a bad pixel format")
      << true << none << wireToSurface1(1, 0x000A, {0, 0, 2, 2}, tiny, 0x10) << P << "rdpgfx.WireToSurface1"
      << "pixel format is neither XRGB nor ARGB";
  // The project's own decoders (issue 24) name themselves and the rule the bytes broke.
  QTest::newRow("planar that does not decode")
      << true << none << wireToSurface1(1, 0x000A, {0, 0, 8, 8}, tiny) << P << "codec.Planar"
      << "raw planes shorter than the bitmap";
  QTest::newRow("alpha without its signature")
      << true << none << wireToSurface1(1, 0x000C, {0, 0, 2, 2}, tiny) << P << "codec.Alpha"
      << "wrong signature";
  QTest::newRow("WireToSurface2 not progressive")
      << true << none << wireToSurface2(1, 0x000A, tiny) << P << "rdpgfx.WireToSurface2"
      << "codec other than progressive";
  QTest::newRow("WireToSurface2 on an unknown surface")
      << true << none << wireToSurface2(3, 0x0009, tiny) << P << "rdpgfx.WireToSurface2"
      << "surface does not exist";
  // Frames.
  QTest::newRow("frame inside a frame") << true << startFrame(1) << startFrame(2) << P << "rdpgfx.StartFrame"
                                        << "frame started inside a frame";
  QTest::newRow("end outside a frame") << true << none << endFrame(1) << P << "rdpgfx.EndFrame"
                                       << "frame ended outside a frame";
  QTest::newRow("end of another frame") << true << startFrame(1) << endFrame(2) << P << "rdpgfx.EndFrame"
                                        << "frameId differs from its StartFrame";
  // Structure.
  QTest::newRow("an unknown cmdId") << true << none << pdu(0x0099, Bytes{}) << P << "rdpgfx"
                                    << "unknown cmdId";
  {
    Bytes b = createSurface(2, 4, 4);
    b[4] = 0xFF; // pduLength beyond the message
    QTest::newRow("pduLength beyond the message") << true << none << b << P << "rdpgfx.CreateSurface"
                                                  << "pduLength outside the message";
    Bytes longer = pdu(0x000A, Bytes{1, 0, 0, 0});
    QTest::newRow("pduLength beyond its fields") << true << none << longer << P << "rdpgfx.DeleteSurface"
                                                 << "pduLength beyond its fields";
    QTest::newRow("header truncated") << true << none << Bytes{0x0A, 0, 0} << P << "rdpgfx"
                                      << "RDPGFX_HEADER truncated";
  }
}

void tst_RdpGfx::refusesEachRuleBreach() {
  QFETCH(bool, ready);
  QFETCH(Bytes, setup);
  QFETCH(Bytes, breach);
  QFETCH(int, kind);
  QFETCH(QString, pdu);
  QFETCH(QString, rule);
  Rig rig;
  if (ready)
    QVERIFY(rig.ready());
  if (!setup.empty())
    QVERIFY(rig.ok(setup));
  const auto result = rig.send(breach);
  QVERIFY(gc::front::isViolation(result));
  const Violation v = std::get<Violation>(result);
  QCOMPARE(QString::fromLatin1(v.pdu.data(), qsizetype(v.pdu.size())), pdu);
  QCOMPARE(QString::fromLatin1(v.rule.data(), qsizetype(v.rule.size())), rule);
  QCOMPARE(int(v.kind), kind);
}

void tst_RdpGfx::refusesFramesBeyondTheInFlightBound() {
  Rig rig;
  rig.client.setPacing([](uint32_t) { return false; }); // nothing acknowledged
  QVERIFY(rig.ready());
  const uint32_t bound = smallLimits().maxFramesInFlight;
  for (uint32_t id = 1; id <= bound; ++id)
    QVERIFY(rig.ok(cat({startFrame(id), endFrame(id)})));
  QCOMPARE(rig.acks().size(), 0);
  QCOMPARE(rig.client.deferredAcknowledgements(), std::size_t(bound));
  const auto over = rig.send(startFrame(bound + 1));
  QVERIFY(gc::front::isViolation(over));
  QCOMPARE(std::get<Violation>(over).rule, std::string_view("more frames in flight than the bound"));
  QCOMPARE(std::get<Violation>(over).kind, Violation::Kind::Resource);
}

void tst_RdpGfx::refusesMoreSurfacesThanTheBound() {
  Rig rig;
  QVERIFY(rig.ready());
  const uint32_t bound = smallLimits().maxSurfaces;
  for (uint16_t id = 2; id <= bound; ++id)
    QVERIFY(rig.ok(createSurface(id, 1, 1)));
  const auto over = rig.send(createSurface(uint16_t(bound + 1), 1, 1));
  QVERIFY(gc::front::isViolation(over));
  QCOMPARE(std::get<Violation>(over).rule, std::string_view("more surfaces than the bound"));
  QCOMPARE(rig.client.table().surfaceCount(), std::size_t(bound));
}

void tst_RdpGfx::stopsAtTheFirstViolationAndKeepsIt() {
  Rig rig;
  QVERIFY(rig.ready());
  // The fill before the breach in the same message executes; the one after never does.
  const auto r = rig.send(cat({solidFill(1, 0x10, 0x20, 0x30, {{0, 0, 1, 1}}), deleteSurface(9),
                               solidFill(1, 0x40, 0x50, 0x60, {{1, 0, 2, 1}})}));
  QVERIFY(gc::front::isViolation(r));
  QCOMPARE(rig.pixel(0, 0), 0x102030u);
  QCOMPARE(rig.pixel(1, 0), 0u);
  // Nothing more executes, and the first violation is what is kept.
  const auto again = rig.send(solidFill(1, 1, 1, 1, {{2, 0, 3, 1}}));
  QVERIFY(gc::front::isViolation(again));
  QCOMPARE(rig.pixel(2, 0), 0u);
  QVERIFY(rig.client.violation());
  QCOMPARE(rig.client.violation()->pdu, std::string_view("rdpgfx.DeleteSurface"));
}

void tst_RdpGfx::advertisesOnlyTheLosslessCapsItDecodes() {
  Rig rig;
  QVERIFY(!rig.written.empty());
  const Bytes& adv = rig.written.front();
  QCOMPARE(int(adv[0] | adv[1] << 8), 0x0012); // CapsAdvertise
  QCOMPARE(std::size_t(adv[4] | adv[5] << 8 | adv[6] << 16 | adv[7] << 24), adv.size());
  const int count = adv[8] | adv[9] << 8;
  QVERIFY(count >= 2);
  QCOMPARE(std::size_t(10 + count * 12), adv.size());
  for (int i = 0; i < count; ++i) {
    const uint8_t* set = adv.data() + 10 + i * 12;
    const uint32_t version = set[0] | set[1] << 8 | set[2] << 16 | uint32_t(set[3]) << 24;
    const uint32_t length = set[4] | set[5] << 8;
    const uint32_t flags = set[8] | set[9] << 8 | set[10] << 16 | uint32_t(set[11]) << 24;
    QCOMPARE(length, 4u);
    QVERIFY2(!(flags & 0x01), "no thin client");
    QVERIFY2(flags & 0x02, "small cache");
    QVERIFY2(!(flags & 0x10), "no AVC420");
    QVERIFY2(!(flags & 0x40), "no AVC thin client");
    if (version >= 0x000A0000)
      QVERIFY2(flags & 0x20, "AVC disabled in every 10.x");
    QVERIFY2(version != 0x000A0100 && version != 0x000A0301, "10.1 and 10.3 not offered");
  }
  // Never a cache import offer.
  for (const Bytes& w : rig.written)
    QVERIFY(!(w[0] == 0x10 && w[1] == 0));
}

void tst_RdpGfx::paintsFillsAndUncompressedBitmapsIntoTheSurfaceOfRecord() {
  Rig rig;
  QVERIFY(rig.ready());
  const Bytes bitmap = bgrx(8, 4, 7);
  QVERIFY(rig.ok(cat({startFrame(1), solidFill(1, 0xAA, 0xBB, 0xCC, {{0, 0, kW, kH}}),
                      wireToSurface1(1, 0x0000, {10, 20, 18, 24}, bitmap), endFrame(1)})));
  QCOMPARE(rig.pixel(0, 0), 0xAABBCCu);
  QCOMPARE(rig.pixel(kW - 1, kH - 1), 0xAABBCCu);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 8; ++x) {
      const uint8_t* p = bitmap.data() + (y * 8 + x) * 4;
      QCOMPARE(rig.pixel(10 + x, 20 + y), quint32(p[0] | p[1] << 8 | p[2] << 16));
    }
  QVERIFY(rig.framesEnded >= 1);
  QVERIFY(!rig.damage.isEmpty());
  // Compare-and-copy: the same fill again changes nothing, so it is no damage.
  rig.damage.clear();
  QVERIFY(rig.ok(cat({startFrame(2), solidFill(1, 0xAA, 0xBB, 0xCC, {{0, 0, 8, 8}}), endFrame(2)})));
  QVERIFY(rig.damage.isEmpty());
}

void tst_RdpGfx::adoptsTheOutputSurfaceInsteadOfCopyingIt() {
  Rig rig;
  QVERIFY(
      rig.ok(cat({capsConfirm(kCaps107, kCaps107Flags), resetGraphics(kW, kH), createSurface(1, kW, kH)})));
  // Drawn before it is mapped: kept in its own buffer, then copied into the desktop once.
  QVERIFY(rig.ok(solidFill(1, 1, 2, 3, {{0, 0, 4, 4}})));
  const auto* before = rig.client.table().surface(1);
  QVERIFY(before && before->own && !before->adopted);
  QCOMPARE(rig.pixel(0, 0), 0u);
  QVERIFY(rig.ok(mapToOutput(1, 0, 0)));
  const auto* s = rig.client.table().surface(1);
  QVERIFY(s->adopted);
  QVERIFY(!s->own); // its pixels are the DesktopSurface's, not a second copy
  QCOMPARE(rig.pixel(3, 3), 0x010203u);
  QVERIFY(rig.ok(solidFill(1, 4, 5, 6, {{8, 8, 9, 9}})));
  QCOMPARE(rig.pixel(8, 8), 0x040506u);
  QCOMPARE(rig.client.table().surfaceBytes(), uint64_t(kW) * kH * 4); // counted once, in the budget
}

void tst_RdpGfx::keepsMovesOnTheOutputAsMoves() {
  Rig rig;
  QVERIFY(rig.ready());
  QVERIFY(rig.ok(cat({wireToSurface1(1, 0x0000, {0, 0, 16, 16}, bgrx(16, 16, 3))})));
  rig.moves.clear();
  rig.damage.clear();
  // A scroll: SurfaceToSurface on the output is a move.
  QVERIFY(rig.ok(cat({startFrame(1), surfaceToSurface(1, 1, {0, 0, 16, 16}, {{20, 4}}), endFrame(1)})));
  QCOMPARE(rig.moves.size(), 1);
  QCOMPARE(rig.moves.first().source, QRect(0, 0, 16, 16));
  QCOMPARE(rig.moves.first().target, QPoint(20, 4));
  QVERIFY(rig.damage.isEmpty());
  // A cache blit of pixels the output still shows where they were cached from: a move too.
  rig.moves.clear();
  QVERIFY(rig.ok(cat({startFrame(2), surfaceToCache(1, 7, {20, 4, 36, 20}), cacheToSurface(7, 1, {{40, 30}}),
                      endFrame(2)})));
  QCOMPARE(rig.moves.size(), 1);
  QCOMPARE(rig.moves.first().source, QRect(20, 4, 16, 16));
  QCOMPARE(rig.moves.first().target, QPoint(40, 30));
  QCOMPARE(rig.pixel(40, 30), rig.pixel(20, 4));
  // Once the origin changed, the blit is a write of the cached pixels, not a move.
  const quint32 cached = rig.pixel(21, 5);
  rig.moves.clear();
  QVERIFY(rig.ok(cat({startFrame(3), solidFill(1, 9, 9, 9, {{20, 4, 36, 20}}),
                      cacheToSurface(7, 1, {{0, 30}}), endFrame(3)})));
  QVERIFY(rig.moves.isEmpty());
  QCOMPARE(rig.pixel(1, 31), cached);
}

void tst_RdpGfx::composesASurfaceMappedAtAnOffset() {
  Rig rig;
  QVERIFY(rig.ready());
  QVERIFY(
      rig.ok(cat({createSurface(2, 8, 8), solidFill(2, 7, 8, 9, {{0, 0, 8, 8}}), mapToOutput(2, 60, 44)})));
  QVERIFY(!rig.client.table().surface(2)->adopted);
  QCOMPARE(rig.pixel(60, 44), 0x070809u);
  QCOMPARE(rig.pixel(63, 47), 0x070809u); // clipped at the desktop's edge
  QVERIFY(rig.ok(solidFill(2, 1, 1, 1, {{1, 1, 2, 2}})));
  QCOMPARE(rig.pixel(61, 45), 0x010101u);
}

void tst_RdpGfx::acknowledgesEveryFrameAndPacingHoldsThem() {
  Rig rig;
  QVERIFY(rig.ready());
  QVERIFY(rig.ok(cat({startFrame(5), endFrame(5), startFrame(6), endFrame(6)})));
  QCOMPARE(rig.acks(), (QList<uint32_t>{5, 6}));
  bool now = false;
  rig.client.setPacing([&now](uint32_t) { return now; });
  QVERIFY(rig.ok(cat({startFrame(7), endFrame(7), startFrame(8), endFrame(8)})));
  QCOMPARE(rig.acks(), (QList<uint32_t>{5, 6}));
  QCOMPARE(rig.client.front().unacknowledged(), 2u);
  rig.client.acknowledgeDeferred();
  QCOMPARE(rig.acks(), (QList<uint32_t>{5, 6, 7, 8}));
  QCOMPARE(rig.client.front().unacknowledged(), 0u);
  now = true;
  QVERIFY(rig.ok(cat({startFrame(9), endFrame(9)})));
  QCOMPARE(rig.acks().last(), 9u);
  QCOMPARE(rig.client.framesDecoded(), 5u);
}

void tst_RdpGfx::resetsTheDesktopToTheGrantsSizeOnly() {
  gc::front::Limits fromServer = smallLimits();
  fromServer.sizeFromServer = true;
  Rig rig(fromServer);
  QVERIFY(rig.ok(cat({capsConfirm(kCaps107, kCaps107Flags), resetGraphics(32, 48)})));
  QCOMPARE(rig.desktop.size(), QSize(32, 48));
  QVERIFY(rig.resized);
  // With size_from "server" the grant's pixel count still bounds it.
  const auto r = rig.send(resetGraphics(kW, kH + 1));
  QVERIFY(gc::front::isViolation(r));
  QCOMPARE(std::get<Violation>(r).rule, std::string_view("desktop larger than the grant's"));
}

void tst_RdpGfx::decodesPlanarToThePixelsEncoded() {
  Rig rig;
  QVERIFY(rig.ready());
  const int w = 24, h = 10;
  Bytes image = bgrx(w, h, 11);
  BITMAP_PLANAR_CONTEXT* planar = freerdp_bitmap_planar_context_new(0, w, h);
  QVERIFY(planar);
  freerdp_planar_topdown_image(planar, TRUE); // RDPGFX planar is top-down (MS-RDPEGFX 2.2.4.2)
  UINT32 size = 0;
  BYTE* encoded =
      freerdp_bitmap_compress_planar(planar, image.data(), PIXEL_FORMAT_BGRX32, w, h, w * 4, nullptr, &size);
  QVERIFY(encoded && size > 0);
  const Bytes data(encoded, encoded + size);
  free(encoded);
  freerdp_bitmap_planar_context_free(planar);
  QVERIFY(
      rig.ok(cat({startFrame(1), wireToSurface1(1, 0x000A, {5, 6, uint16_t(5 + w), uint16_t(6 + h)}, data),
                  endFrame(1)})));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const uint8_t* p = image.data() + (y * w + x) * 4;
      QCOMPARE(rig.pixel(5 + x, 6 + y), quint32(p[0] | p[1] << 8 | p[2] << 16));
    }
}

void tst_RdpGfx::progressiveRedrawOfTheSamePixelsIsNoDamage() {
  Rig rig;
  QVERIFY(rig.ready());
  Bytes image = bgrx(kW, kH, 5);
  PROGRESSIVE_CONTEXT* enc = progressive_context_new(TRUE);
  QVERIFY(enc);
  REGION16 region;
  region16_init(&region);
  const RECTANGLE_16 all{0, 0, kW, kH};
  region16_union_rect(&region, &region, &all);
  BYTE* out = nullptr;
  UINT32 size = 0;
  const int rc = progressive_compress(enc, image.data(), UINT32(image.size()), PIXEL_FORMAT_BGRX32, kW, kH,
                                      kW * 4, &region, &out, &size);
  region16_uninit(&region);
  QVERIFY2(rc >= 0 && out && size > 0, "FreeRDP's progressive encoder");
  const Bytes data(out, out + size);
  progressive_context_free(enc); // owns `out`
  QVERIFY(rig.ok(cat({startFrame(1), wireToSurface2(1, 0x0009, data), endFrame(1)})));
  QVERIFY(!rig.damage.isEmpty()); // the first decode painted the desktop
  QVERIFY(rig.pixel(10, 10) != 0u || rig.pixel(20, 20) != 0u);
  rig.damage.clear();
  // The same tiles again decode to the same pixels: the tile hashes say nothing changed.
  QVERIFY(rig.ok(cat({startFrame(2), wireToSurface2(1, 0x0009, data), endFrame(2)})));
  QVERIFY(rig.damage.isEmpty());
  // Deleting the surface deletes its progressive state too; a new one starts afresh.
  QVERIFY(rig.ok(cat({deleteSurface(1), createSurface(1, kW, kH), mapToOutput(1, 0, 0)})));
  QVERIFY(rig.ok(cat({startFrame(3), wireToSurface2(1, 0x0009, data), endFrame(3)})));
}

// A figure, not a bound: what the per-tile damage compare costs beside the decode itself
// (a full 1920x1080 progressive redraw of unchanged pixels).
void tst_RdpGfx::measuresTheProgressiveTileHashAt1080p() {
  gc::front::Limits limits;
  Rig rig(limits);
  QVERIFY(rig.ok(cat({capsConfirm(kCaps107, kCaps107Flags), resetGraphics(1920, 1080),
                      createSurface(1, 1920, 1080), mapToOutput(1, 0, 0)})));
  Bytes image = bgrx(1920, 1080, 9);
  PROGRESSIVE_CONTEXT* enc = progressive_context_new(TRUE);
  REGION16 region;
  region16_init(&region);
  const RECTANGLE_16 all{0, 0, 1920, 1080};
  region16_union_rect(&region, &region, &all);
  BYTE* out = nullptr;
  UINT32 size = 0;
  QVERIFY(progressive_compress(enc, image.data(), UINT32(image.size()), PIXEL_FORMAT_BGRX32, 1920, 1080,
                               1920 * 4, &region, &out, &size) >= 0);
  region16_uninit(&region);
  const Bytes data(out, out + size);
  progressive_context_free(enc);
  QVERIFY(rig.ok(cat({startFrame(1), wireToSurface2(1, 0x0009, data), endFrame(1)})));
  rig.damage.clear();
  QElapsedTimer t;
  t.start();
  const int rounds = 5;
  for (int i = 0; i < rounds; ++i)
    QVERIFY(rig.ok(
        cat({startFrame(uint32_t(2 + i)), wireToSurface2(1, 0x0009, data), endFrame(uint32_t(2 + i))})));
  const double perFrame = double(t.nsecsElapsed()) / 1e6 / rounds;
  QVERIFY(rig.damage.isEmpty()); // the same pixels again: no damage
  // The hash alone: every tile of the desktop once, as noteDecoded does for a full redraw.
  std::vector<QRect> whole{QRect(0, 0, 1920, 1080)};
  auto* s = const_cast<gc::gfx::SurfaceTable&>(rig.client.table()).surface(1);
  t.restart();
  for (int i = 0; i < rounds; ++i)
    const_cast<gc::gfx::SurfaceTable&>(rig.client.table()).noteDecoded(*s, whole);
  const double hashPerFrame = double(t.nsecsElapsed()) / 1e6 / rounds;
  QVERIFY(!rig.desktop.hasChanges());
  qInfo("FIGURE progressive_1080p_redraw_ms %.1f (decode + tile compare), tile_hash_1080p_ms %.1f (%s build)",
        perFrame, hashPerFrame,
#if defined(__SANITIZE_ADDRESS__)
        "ASan"
#else
        "plain"
#endif
  );
}

// The lock's gfx_caps rung: the connect's CapsAdvertise written again, byte for byte; the
// server's CapsConfirm is its answer (reported once), and only as many as were asked for are
// taken: one more is a violation, as before.
void tst_RdpGfx::answersAReadvertiseWithOneCapsConfirm() {
  Rig rig;
  QVERIFY(rig.ready());
  int confirmed = 0;
  rig.client.setCapsConfirmed([&] { ++confirmed; });
  QVERIFY(!rig.written.empty());
  const Bytes first = rig.written.front();
  QVERIFY(rig.client.readvertise());
  QCOMPARE(rig.written.back(), first);
  QVERIFY(rig.ok(capsConfirm(kCaps107, kCaps107Flags)));
  QCOMPARE(confirmed, 1);
  // Drawing goes on as before the answer.
  QVERIFY(rig.ok(solidFill(1, 0x11, 0x22, 0x33, {{0, 0, 4, 4}})));
  // Two re-advertises (the first unanswered at its lock): the late answer to the first is
  // taken, not reported; the answer to the second is.
  QVERIFY(rig.client.readvertise());
  QVERIFY(rig.client.readvertise());
  QVERIFY(rig.ok(capsConfirm(kCaps107, kCaps107Flags)));
  QCOMPARE(confirmed, 1);
  QVERIFY(rig.ok(capsConfirm(kCaps107, kCaps107Flags)));
  QCOMPARE(confirmed, 2);
  const auto r = rig.send(capsConfirm(kCaps107, kCaps107Flags));
  QVERIFY(gc::front::isViolation(r));
  QCOMPARE(std::get<Violation>(r).rule, std::string_view("second CapsConfirm"));
}

// ResetGraphics deletes every surface (MS-RDPEGFX): the server creates them again with the
// same ids (shadow after a CapsConfirm), and what it draws reaches the desktop again.
void tst_RdpGfx::resetGraphicsDeletesEverySurface() {
  Rig rig;
  QVERIFY(rig.ready());
  QVERIFY(rig.ok(createSurface(2, 8, 8)));
  QCOMPARE(rig.client.table().surfaceCount(), std::size_t(2));
  QVERIFY(rig.ok(resetGraphics(kW, kH)));
  QCOMPARE(rig.client.table().surfaceCount(), std::size_t(0));
  QVERIFY(rig.ok(cat({createSurface(1, kW, kH), mapToOutput(1, 0, 0), startFrame(5),
                      solidFill(1, 0x10, 0x20, 0x30, {{0, 0, 4, 4}}), endFrame(5)})));
  QCOMPARE(rig.pixel(1, 1), quint32(0x102030));
}

// A server written against FreeRDP's client (which keeps surfaces over a reset) deletes them
// after it; that must not end the session, but only once, and never for a surface recreated.
void tst_RdpGfx::deletingASurfaceTheResetDeletedIsAcceptedOnce() {
  Rig rig;
  QVERIFY(rig.ready());
  QVERIFY(rig.ok(createSurface(2, 8, 8)));
  QVERIFY(rig.ok(resetGraphics(kW, kH)));
  QVERIFY(rig.ok(cat({deleteSurface(1), deleteSurface(2)})));
  QCOMPARE(rig.client.table().surfaceCount(), std::size_t(0));
  auto r = rig.send(deleteSurface(2));
  QVERIFY(gc::front::isViolation(r));
  QCOMPARE(std::get<Violation>(r).rule, std::string_view("surface does not exist"));
  // Created again after the reset, then deleted: a second delete is the guest's error again.
  Rig again;
  QVERIFY(again.ready());
  QVERIFY(again.ok(resetGraphics(kW, kH)));
  QVERIFY(again.ok(cat({createSurface(1, kW, kH), deleteSurface(1)})));
  r = again.send(deleteSurface(1));
  QVERIFY(gc::front::isViolation(r));
  QCOMPARE(std::get<Violation>(r).rule, std::string_view("surface does not exist"));
}

void tst_RdpGfx::closeForgetsSurfacesCacheAndCaps() {
  Rig rig;
  QVERIFY(rig.ready());
  QVERIFY(rig.ok(cat(
      {createSurface(2, 8, 8), solidFill(2, 1, 1, 1, {{0, 0, 8, 8}}), surfaceToCache(2, 3, {0, 0, 8, 8})})));
  QVERIFY(rig.client.table().pixelBytes() > 0);
  rig.client.closed();
  QCOMPARE(rig.client.table().surfaceCount(), std::size_t(0));
  QCOMPARE(rig.client.table().pixelBytes(), uint64_t(0));
  QVERIFY(!rig.client.table().cacheEntry(3));
  // A new channel starts with caps again.
  rig.client.opened([](std::span<const uint8_t>) { return true; });
  const auto r = rig.send(createSurface(2, 8, 8));
  QVERIFY(gc::front::isViolation(r));
  QCOMPARE(std::get<Violation>(r).rule, std::string_view("PDU before CapsConfirm"));
}

void tst_RdpGfx::appliesAlphaToAnArgbSurfaceOnly_data() {
  QTest::addColumn<Bytes>("alpha");
  // 4x2: raw alpha bytes, and the same as runs (the last one with the 0xFF-escaped 16-bit length).
  QTest::newRow("raw") << Bytes{0x4C, 0x41, 0, 0, 1, 1, 1, 2, 2, 3, 3, 3};
  QTest::newRow("runs") << Bytes{0x4C, 0x41, 1, 0, 1, 3, 2, 2, 3, 0xFF, 3, 0};
}

void tst_RdpGfx::appliesAlphaToAnArgbSurfaceOnly() {
  QFETCH(Bytes, alpha);
  Rig rig;
  QVERIFY(rig.ready());
  QVERIFY(rig.ok(cat({createSurface(2, 8, 8, 0x21), solidFill(2, 0x11, 0x22, 0x33, {{0, 0, 8, 8}}),
                      wireToSurface1(2, 0x000C, {2, 3, 6, 5}, alpha, 0x21)})));
  const auto* s = rig.client.table().surface(2);
  QVERIFY(s && s->own);
  const uint8_t want[2][4] = {{1, 1, 1, 2}, {2, 3, 3, 3}};
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 4; ++x) {
      const uchar* p = s->own.get() + (3 + y) * 32 + (2 + x) * 4;
      QCOMPARE(int(p[3]), int(want[y][x]));
      QCOMPARE(int(p[0] | p[1] << 8 | p[2] << 16), 0x112233); // the colour stays
    }
  // Runs that do not cover the rectangle exactly are a violation.
  Bytes bad = alpha;
  bad.pop_back();
  QVERIFY(gc::front::isViolation(rig.send(wireToSurface1(2, 0x000C, {2, 3, 6, 5}, bad, 0x21))));
}

namespace {
// A dynamic channel as drdynvc hands it to a plugin: its Write records what the plugin sends.
struct FakeChannel {
  IWTSVirtualChannel iface{};
  std::vector<Bytes> written;
  static UINT write(IWTSVirtualChannel* c, ULONG size, const BYTE* data, void*) {
    reinterpret_cast<FakeChannel*>(c)->written.emplace_back(data, data + size);
    return CHANNEL_RC_OK;
  }
  FakeChannel() { iface.Write = &write; }
};
} // namespace

// drdynvc's pool (winpr's StreamPool) hands out the first free stream big enough and keeps every
// stream it made: frames that grow a little at a time each cost a new stream, for the session.
void tst_RdpGfx::aReservedPoolServesEveryLargerMessageFromOneStream() {
  const size_t reserve = gc::front::Limits{}.maxDvcMessageBytes;
  auto streamsFor = [](wStreamPool* pool) {
    QSet<const void*> buffers;
    for (size_t i = 0; i < 24; ++i) {
      wStream* s = StreamPool_Take(pool, 900000 + i * 700); // each message a little larger
      if (!s)
        return qsizetype(-1);
      buffers.insert(Stream_Buffer(s));
      Stream_Release(s);
    }
    return buffers.size();
  };
  wStreamPool* plain = StreamPool_New(TRUE, 10);
  QVERIFY(plain);
  QCOMPARE(streamsFor(plain), 24);
  StreamPool_Free(plain);

  wStreamPool* reserved = StreamPool_New(TRUE, 10);
  QVERIFY(reserved);
  QVERIFY(gc::gfx::GfxChannel::reservePool(reserved, reserve));
  QCOMPARE(streamsFor(reserved), 1);
  StreamPool_Free(reserved);
  QVERIFY(!gc::gfx::GfxChannel::reservePool(nullptr, reserve));
}

void tst_RdpGfx::refusesASecondGraphicsChannelAndEndlessReopens() {
  DesktopSurface desktop(kW * kH * 4);
  gc::ChannelReport report;
  gc::gfx::GfxChannel channel(
      smallLimits(), desktop, [] {}, &report);
  FakeChannel vc1, vc2;
  GENERIC_CHANNEL_CALLBACK cb1{}, cb2{};
  cb1.channel = &vc1.iface;
  cb2.channel = &vc2.iface;
  QCOMPARE(channel.onOpen(&cb1), UINT(CHANNEL_RC_OK));
  QCOMPARE(vc1.written.size(), std::size_t(1)); // CapsAdvertise
  QVERIFY(report.snapshot().gfxOpened);
  // A message on the open channel goes to the client.
  const Bytes msg = zgfx(capsConfirm(kCaps107, kCaps107Flags));
  wStream s;
  Stream_StaticConstInit(&s, msg.data(), msg.size());
  QCOMPARE(channel.onData(&cb1, &s), UINT(CHANNEL_RC_OK));
  QVERIFY(channel.client().front().caps());
  // A second graphics channel while the first is open: refused, the session ends.
  QVERIFY(channel.onOpen(&cb2) != CHANNEL_RC_OK);
  QVERIFY(channel.violation());
  QCOMPARE(channel.violation()->rule, std::string_view("a second graphics channel"));
  QCOMPARE(channel.violation()->kind, Violation::Kind::Resource);

  // Reopened again and again: refused past kMaxOpens.
  gc::gfx::GfxChannel again(
      smallLimits(), desktop, [] {}, nullptr);
  for (int i = 0; i < gc::gfx::GfxChannel::kMaxOpens; ++i) {
    QCOMPARE(again.onOpen(&cb1), UINT(CHANNEL_RC_OK));
    QCOMPARE(again.onClose(&cb1), UINT(CHANNEL_RC_OK));
  }
  QVERIFY(again.onOpen(&cb1) != CHANNEL_RC_OK);
  QCOMPARE(again.violation()->rule, std::string_view("graphics channel reopened too often"));
}

void tst_RdpGfx::zgfxReadsWhatFreeRdpCompresses_data() {
  QTest::addColumn<int>("size");
  for (const int size : {1, 100, 65535, 65536, 200000, 1 << 20})
    QTest::addRow("%d bytes", size) << size;
}

void tst_RdpGfx::zgfxReadsWhatFreeRdpCompresses() {
  QFETCH(int, size);
  Bytes plain(static_cast<std::size_t>(size));
  QRandomGenerator rng{static_cast<uint32_t>(size)};
  for (auto& b : plain)
    b = uint8_t(rng.bounded(256));
  ZGFX_CONTEXT* z = zgfx_context_new(TRUE);
  BYTE* out = nullptr;
  UINT32 outSize = 0, flags = 0;
  QCOMPARE(zgfx_compress(z, plain.data(), UINT32(plain.size()), &out, &outSize, &flags), 0);
  const Bytes compressed(out, out + outSize);
  free(out);
  zgfx_context_free(z);
  QCOMPARE(compressed.front(), uint8_t(size > 65535 ? 0xE1 : 0xE0));
  gc::gfx::Zgfx ours(32u << 20);
  const auto r = ours.decompress(compressed);
  QVERIFY(!gc::front::isViolation(r));
  const auto got = std::get<std::span<const uint8_t>>(r);
  QVERIFY(std::equal(got.begin(), got.end(), plain.begin(), plain.end()));
}

void tst_RdpGfx::zgfxAgreesWithFreeRdpOnCompressedTokens() {
  QRandomGenerator rng(20261201);
  ZGFX_CONTEXT* theirs = zgfx_context_new(FALSE);
  gc::gfx::Zgfx ours(32u << 20);
  // Messages sharing one history: text-like runs, zeros, 0xFF, repeats, random bytes.
  for (int message = 0; message < 40; ++message) {
    Bytes plain;
    const int n = 1 + int(rng.bounded(message % 5 == 0 ? 20000 : 3000));
    while (int(plain.size()) < n) {
      switch (rng.bounded(4)) {
      case 0:
        plain.insert(plain.end(), std::size_t(1 + rng.bounded(50)), 0x00);
        break;
      case 1:
        plain.insert(plain.end(), std::size_t(1 + rng.bounded(30)), 0xFF);
        break;
      case 2:
        if (plain.size() > 8) {
          const std::size_t from = rng.bounded(uint32_t(plain.size() - 4));
          const Bytes copy(plain.begin() + std::ptrdiff_t(from),
                           plain.begin() +
                               std::ptrdiff_t(std::min(plain.size(), from + 1 + rng.bounded(300))));
          plain.insert(plain.end(), copy.begin(), copy.end());
        }
        break;
      default:
        for (int k = 0; k < 20; ++k)
          plain.push_back(uint8_t(rng.bounded(256)));
      }
    }
    if (plain.size() > 65535)
      plain.resize(65535);
    Bytes message1{0xE0};
    const Bytes segment = compressSegment(plain, rng);
    message1.insert(message1.end(), segment.begin(), segment.end());
    const std::optional<Bytes> reference = freerdpDecompress(theirs, message1);
    QVERIFY(reference);
    QVERIFY2(*reference == plain, "our test encoder writes what FreeRDP reads");
    const auto r = ours.decompress(message1);
    QVERIFY2(!gc::front::isViolation(r), gc::front::isViolation(r) ? std::get<Violation>(r).rule.data() : "");
    const auto got = std::get<std::span<const uint8_t>>(r);
    QVERIFY(std::equal(got.begin(), got.end(), reference->begin(), reference->end()));
  }
  zgfx_context_free(theirs);
}

void tst_RdpGfx::zgfxBoundsDeclaredSizesBeforeReserving_data() {
  QTest::addColumn<Bytes>("message");
  QTest::addColumn<int>("kind");
  QTest::addColumn<QString>("rule");
  const int P = int(Violation::Kind::Protocol), Rs = int(Violation::Kind::Resource);
  Bytes bomb{0xE1};
  u16(bomb, 65535);
  u32(bomb, 0xFFFFFFFF); // 4 GiB declared
  QTest::newRow("multipart declaring 4 GiB") << bomb << Rs << "uncompressedSize beyond the message bound";
  Bytes over{0xE1};
  u16(over, 1);
  u32(over, 70000);
  QTest::newRow("more than its segments can hold")
      << over << P << "uncompressedSize beyond what the segments can hold";
  Bytes fewer{0xE1};
  u16(fewer, 100);
  u32(fewer, 1000);
  QTest::newRow("segments beyond the bytes") << fewer << P << "fewer bytes than the segments declared";
  QTest::newRow("unknown descriptor")
      << Bytes{0xE5, 0x04} << P << "descriptor is neither single nor multipart";
  QTest::newRow("not RDP 8.0") << Bytes{0xE0, 0x02, 1, 2} << P << "compression type is not RDP 8.0";
  // A match 10 bytes back in an empty history: 10001 + 5 bits of 10, then length 3 (0).
  BitWriter w;
  w.put(17, 5);
  w.put(10, 5);
  w.put(0, 1);
  Bytes far{0xE0, 0x24};
  const Bytes body = w.finish();
  far.insert(far.end(), body.begin(), body.end());
  QTest::newRow("match beyond the history") << far << P << "match distance beyond the history";
  // A raw single segment of more than 65535 bytes.
  Bytes big{0xE0, 0x04};
  big.resize(2 + 65536, 0);
  QTest::newRow("segment beyond 65535") << big << Rs << "raw segment beyond its bound";
}

void tst_RdpGfx::zgfxBoundsDeclaredSizesBeforeReserving() {
  QFETCH(Bytes, message);
  QFETCH(int, kind);
  QFETCH(QString, rule);
  gc::gfx::Zgfx z(32u << 20);
  const auto r = z.decompress(message);
  QVERIFY(gc::front::isViolation(r));
  const Violation v = std::get<Violation>(r);
  QCOMPARE(QString::fromLatin1(v.rule.data(), qsizetype(v.rule.size())), rule);
  QCOMPARE(int(v.kind), kind);
}

QTEST_GUILESS_MAIN(tst_RdpGfx)
#include "tst_rdpgfx.moc"
