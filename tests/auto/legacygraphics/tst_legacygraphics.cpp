// LegacyGraphics: the legacy path's bitmaps and surface bits drawn by the project's decoders into
// the surface of record, with no FreeRDP GDI or codec context. Streams come from FreeRDP's own
// encoders (what freerdp-shadow-cli3 sends a client without the graphics pipeline) and FreeRDP's
// decoders are the oracle; a bitmap that breaks a rule draws nothing.
#include "rdp/DesktopSurface.h"
#include "rdp/FrontGuard.h"
#include "rdp/LegacyGraphics.h"
#include "rdp/LegacyUpdates.h"
#include "rdp/RdpContext.h"

#include <QTest>

#include <freerdp/codec/color.h>
#include <freerdp/codec/interleaved.h>
#include <freerdp/codec/planar.h>
#include <freerdp/pointer.h>
#include <freerdp/update.h>

#include <cstring>
#include <memory>
#include <vector>

using gc::DesktopSurface;
using gc::LegacyGraphics;
using gc::front::Violation;

namespace {

constexpr QSize kDesktop(256, 128);

// A picture with flat areas (RLE runs), a gradient and single-pixel detail, BGRX.
std::vector<uint8_t> picture(uint32_t w, uint32_t h) {
  std::vector<uint8_t> p(size_t(w) * h * 4);
  for (uint32_t y = 0; y < h; ++y)
    for (uint32_t x = 0; x < w; ++x) {
      uint8_t* px = &p[(size_t(y) * w + x) * 4];
      px[0] = uint8_t(x < w / 2 ? 0x20 : x * 7);
      px[1] = uint8_t(y * 5);
      px[2] = uint8_t((x ^ y) & 1 ? 0xF0 : 0x10);
      px[3] = 0xFF;
    }
  return p;
}

// FreeRDP's planar encoder, as a server encodes a legacy 32 bpp bitmap (rows bottom-up).
std::vector<uint8_t> encodePlanar(const std::vector<uint8_t>& bgrx, uint32_t w, uint32_t h, DWORD flags) {
  BITMAP_PLANAR_CONTEXT* ctx = freerdp_bitmap_planar_context_new(flags, w, h);
  UINT32 size = 0;
  BYTE* out =
      freerdp_bitmap_compress_planar(ctx, bgrx.data(), PIXEL_FORMAT_BGRX32, w, h, w * 4, nullptr, &size);
  std::vector<uint8_t> v(out, out + size);
  free(out);
  freerdp_bitmap_planar_context_free(ctx);
  return v;
}

// FreeRDP's interleaved encoder at `bpp`.
std::vector<uint8_t> encodeInterleaved(const std::vector<uint8_t>& bgrx, uint32_t w, uint32_t h,
                                       uint32_t bpp) {
  BITMAP_INTERLEAVED_CONTEXT* ctx = bitmap_interleaved_context_new(TRUE);
  std::vector<uint8_t> out(size_t(w) * h * 4 + 1024);
  UINT32 size = UINT32(out.size());
  const bool ok = ctx && interleaved_compress(ctx, out.data(), &size, w, h, bgrx.data(), PIXEL_FORMAT_BGRX32,
                                              w * 4, 0, 0, nullptr, bpp);
  bitmap_interleaved_context_free(ctx);
  out.resize(ok ? size : 0);
  return out;
}

// FreeRDP's interleaved decoder: the oracle, BGRX32 top-down.
std::vector<uint8_t> decodeInterleavedByFreeRdp(const std::vector<uint8_t>& stream, uint32_t w, uint32_t h,
                                                uint32_t bpp) {
  BITMAP_INTERLEAVED_CONTEXT* ctx = bitmap_interleaved_context_new(FALSE);
  std::vector<uint8_t> out(size_t(w) * h * 4);
  const bool ok = ctx && interleaved_decompress(ctx, stream.data(), UINT32(stream.size()), w, h, bpp,
                                                out.data(), PIXEL_FORMAT_BGRX32, w * 4, 0, 0, w, h, nullptr);
  bitmap_interleaved_context_free(ctx);
  return ok ? out : std::vector<uint8_t>();
}

// Rows flipped: how a legacy raw bitmap carries a top-down picture.
std::vector<uint8_t> bottomUp(const std::vector<uint8_t>& rows, size_t rowBytes) {
  std::vector<uint8_t> out(rows.size());
  const size_t n = rows.size() / rowBytes;
  for (size_t r = 0; r < n; ++r)
    std::memcpy(out.data() + r * rowBytes, rows.data() + (n - 1 - r) * rowBytes, rowBytes);
  return out;
}

// Where the desktop differs from `want` (BGR, the X byte ignored) in `area`, or "".
QString differs(const DesktopSurface& desktop, const QRect& area, const uint8_t* want, size_t wantStride) {
  for (int y = 0; y < area.height(); ++y)
    for (int x = 0; x < area.width(); ++x) {
      const uchar* got =
          desktop.constBits() + qsizetype(area.top() + y) * desktop.stride() + qsizetype(area.left() + x) * 4;
      if (std::memcmp(got, want + size_t(y) * wantStride + size_t(x) * 4, 3) != 0)
        return QStringLiteral("pixel %1,%2 differs").arg(x).arg(y);
    }
  return {};
}

bool allZero(const DesktopSurface& desktop) {
  const qsizetype n = desktop.stride() * desktop.size().height();
  for (qsizetype i = 0; i < n; ++i)
    if (desktop.constBits()[i] != 0)
      return false;
  return true;
}

struct Desktop {
  DesktopSurface surface{qsizetype(kDesktop.width()) * kDesktop.height() * 4};
  Desktop() {
    surface.resize(kDesktop);
    surface.takeChanges();
    surface.takeNote();
  }
};

LegacyGraphics::Bitmap bitmapAt(QPoint at, uint32_t w, uint32_t h, uint32_t bpp, bool compressed,
                                const std::vector<uint8_t>& data) {
  LegacyGraphics::Bitmap b;
  b.left = uint32_t(at.x());
  b.top = uint32_t(at.y());
  b.right = b.left + w - 1;
  b.bottom = b.top + h - 1;
  b.width = w;
  b.height = h;
  b.bpp = bpp;
  b.compressed = compressed;
  b.data = data;
  return b;
}

// What LegacyUpdates recovers from FreeRDP's context: the session's fronts and graphics.
struct Handlers {
  Desktop d;
  LegacyGraphics graphics{d.surface};
  gc::FrontGuard front{gc::front::Limits{}};
  gc::RdpContext ctx{};
  Handlers() {
    ctx.front = &front;
    ctx.legacy = &graphics;
  }
  rdpContext* context() { return reinterpret_cast<rdpContext*>(&ctx); }
  QString failure() const {
    const auto f = front.failure();
    return f ? f->toString() : QString();
  }
};

} // namespace

class tst_LegacyGraphics : public QObject {
  Q_OBJECT
private slots:
  void planarBitmapsDrawTheServersPixels_data() {
    QTest::addColumn<uint>("w");
    QTest::addColumn<uint>("h");
    QTest::addColumn<uint>("flags");
    // Not 1x1 RLE: FreeRDP 3.10.3's encoder truncates planes RLE does not shrink, and its own
    // decoder refuses them too (tst_rdpcodecplanar).
    for (const QSize& s : {QSize(64, 64), QSize(13, 7), QSize(1, 1)})
      for (uint f : {uint(PLANAR_FORMAT_HEADER_RLE | PLANAR_FORMAT_HEADER_NA), uint(PLANAR_FORMAT_HEADER_NA)})
        if (s.width() > 1 || !(f & PLANAR_FORMAT_HEADER_RLE))
          QTest::addRow("%dx%d-%s", s.width(), s.height(), (f & PLANAR_FORMAT_HEADER_RLE) ? "rle" : "raw")
              << uint(s.width()) << uint(s.height()) << f;
  }
  void planarBitmapsDrawTheServersPixels() {
    QFETCH(uint, w);
    QFETCH(uint, h);
    QFETCH(uint, flags);
    Desktop d;
    LegacyGraphics graphics(d.surface);
    const std::vector<uint8_t> source = picture(w, h);
    const std::vector<uint8_t> stream = encodePlanar(source, w, h, flags);
    QVERIFY(!stream.empty());
    const QPoint at(100, 50);
    QVERIFY(!gc::front::isViolation(graphics.draw(bitmapAt(at, w, h, 32, true, stream))));
    QVERIFY(graphics.takeDrawn());
    const QString diff = differs(d.surface, QRect(at, QSize(int(w), int(h))), source.data(), size_t(w) * 4);
    QVERIFY2(diff.isEmpty(), qPrintable(diff));
    // The damage is what the bitmap changed, inside its rectangle.
    const DesktopSurface::Changes changes = d.surface.takeChanges();
    QVERIFY(!changes.damage.isEmpty());
    for (const QRect& r : changes.damage)
      QVERIFY(QRect(at, QSize(int(w), int(h))).contains(r));
  }

  void interleavedBitmapsDrawAsFreeRdpDecodesThem_data() {
    QTest::addColumn<uint>("bpp");
    for (uint bpp : {15u, 16u, 24u})
      QTest::addRow("%u bpp", bpp) << bpp;
  }
  void interleavedBitmapsDrawAsFreeRdpDecodesThem() {
    QFETCH(uint, bpp);
    const uint32_t w = 64, h = 64;
    const std::vector<uint8_t> stream = encodeInterleaved(picture(w, h), w, h, bpp);
    QVERIFY(!stream.empty());
    const std::vector<uint8_t> oracle = decodeInterleavedByFreeRdp(stream, w, h, bpp);
    QVERIFY(!oracle.empty());
    Desktop d;
    LegacyGraphics graphics(d.surface);
    const QPoint at(192, 64); // the desktop's bottom-right corner
    QVERIFY(!gc::front::isViolation(graphics.draw(bitmapAt(at, w, h, bpp, true, stream))));
    const QString diff = differs(d.surface, QRect(at, QSize(int(w), int(h))), oracle.data(), size_t(w) * 4);
    QVERIFY2(diff.isEmpty(), qPrintable(diff));
  }

  void uncompressedBitmapsDrawBottomUpRows_data() {
    QTest::addColumn<uint>("bpp");
    for (uint bpp : {32u, 24u})
      QTest::addRow("%u bpp", bpp) << bpp;
  }
  void uncompressedBitmapsDrawBottomUpRows() {
    QFETCH(uint, bpp);
    const uint32_t w = 8, h = 3; // 24 bpp rows of 24 bytes: no padding
    const std::vector<uint8_t> source = picture(w, h);
    std::vector<uint8_t> rows;
    for (size_t i = 0; i < source.size(); i += 4)
      rows.insert(rows.end(), source.begin() + qsizetype(i), source.begin() + qsizetype(i + bpp / 8));
    const std::vector<uint8_t> wire = bottomUp(rows, size_t(w) * bpp / 8);
    Desktop d;
    LegacyGraphics graphics(d.surface);
    QVERIFY(!gc::front::isViolation(graphics.draw(bitmapAt(QPoint(0, 0), w, h, bpp, false, wire))));
    const QString diff = differs(d.surface, QRect(0, 0, int(w), int(h)), source.data(), size_t(w) * 4);
    QVERIFY2(diff.isEmpty(), qPrintable(diff));
  }

  void aDestinationSmallerThanTheBitmapShowsItsTopLeft() {
    const uint32_t w = 16, h = 16;
    const std::vector<uint8_t> source = picture(w, h);
    const std::vector<uint8_t> stream = encodePlanar(source, w, h, PLANAR_FORMAT_HEADER_NA);
    Desktop d;
    LegacyGraphics graphics(d.surface);
    LegacyGraphics::Bitmap b = bitmapAt(QPoint(10, 20), w, h, 32, true, stream);
    b.right = b.left + 4; // 5 x 3 of the 16 x 16
    b.bottom = b.top + 2;
    QVERIFY(!gc::front::isViolation(graphics.draw(b)));
    QVERIFY(differs(d.surface, QRect(10, 20, 5, 3), source.data(), size_t(w) * 4).isEmpty());
    QVERIFY(d.surface.takeChanges().damage.first().united(QRect(10, 20, 5, 3)) == QRect(10, 20, 5, 3));
  }

  void aRepaintOfTheSamePixelsIsTouchedButNoDamage() {
    const uint32_t w = 32, h = 32;
    const std::vector<uint8_t> stream = encodePlanar(picture(w, h), w, h, PLANAR_FORMAT_HEADER_RLE);
    Desktop d;
    LegacyGraphics graphics(d.surface);
    QVERIFY(!gc::front::isViolation(graphics.draw(bitmapAt(QPoint(3, 4), w, h, 32, true, stream))));
    d.surface.takeChanges();
    d.surface.takeNote();
    QVERIFY(!gc::front::isViolation(graphics.draw(bitmapAt(QPoint(3, 4), w, h, 32, true, stream))));
    QVERIFY(d.surface.takeChanges().damage.isEmpty());
    const DesktopSurface::Note note = d.surface.takeNote();
    QVERIFY(!note.changed);
    QCOMPARE(note.touched, QList<QRect>{QRect(3, 4, int(w), int(h))});
  }

  void aBitmapThatBreaksARuleDrawsNothing_data() {
    QTest::addColumn<int>("left");
    QTest::addColumn<int>("top");
    QTest::addColumn<int>("right");
    QTest::addColumn<int>("bottom");
    QTest::addColumn<uint>("width");
    QTest::addColumn<uint>("height");
    QTest::addColumn<uint>("bpp");
    QTest::addColumn<bool>("truncate");
    QTest::addColumn<QString>("rule");
    QTest::addColumn<bool>("resource");
    QTest::newRow("right beyond the desktop") << 250 << 0 << 256 << 7 << 8u << 8u << 32u << false
                                              << "destination rectangle outside the desktop" << false;
    QTest::newRow("bottom beyond the desktop") << 0 << 125 << 7 << 132 << 8u << 8u << 32u << false
                                               << "destination rectangle outside the desktop" << false;
    QTest::newRow("inverted") << 9 << 0 << 2 << 7 << 8u << 8u << 32u << false
                              << "destination rectangle inverted" << false;
    QTest::newRow("destination larger than the bitmap")
        << 0 << 0 << 8 << 7 << 8u << 8u << 32u << false << "bitmap smaller than its destination rectangle"
        << false;
    QTest::newRow("bitmap larger than the desktop")
        << 0 << 0 << 7 << 7 << 257u << 129u << 32u << false << "bitmap larger than the desktop" << true;
    QTest::newRow("8 bpp") << 0 << 0 << 7 << 7 << 8u << 8u << 8u << false
                           << "bitsPerPixel the console does not decode" << false;
    QTest::newRow("truncated stream") << 0 << 0 << 7 << 7 << 8u << 8u << 32u << true << "" << false;
  }
  void aBitmapThatBreaksARuleDrawsNothing() {
    QFETCH(int, left);
    QFETCH(int, top);
    QFETCH(int, right);
    QFETCH(int, bottom);
    QFETCH(uint, width);
    QFETCH(uint, height);
    QFETCH(uint, bpp);
    QFETCH(bool, truncate);
    QFETCH(QString, rule);
    QFETCH(bool, resource);
    std::vector<uint8_t> stream = encodePlanar(picture(8, 8), 8, 8, PLANAR_FORMAT_HEADER_RLE);
    if (truncate)
      stream.resize(stream.size() / 2);
    Desktop d;
    LegacyGraphics graphics(d.surface);
    LegacyGraphics::Bitmap b = bitmapAt(QPoint(left, top), width, height, bpp, true, stream);
    b.right = uint32_t(right);
    b.bottom = uint32_t(bottom);
    const auto result = graphics.draw(b);
    QVERIFY(gc::front::isViolation(result));
    const Violation& v = std::get<Violation>(result);
    if (!rule.isEmpty()) {
      QCOMPARE(QString::fromLatin1(v.rule.data(), qsizetype(v.rule.size())), rule);
      QCOMPARE(QString::fromLatin1(v.pdu.data(), qsizetype(v.pdu.size())),
               QString::fromLatin1(LegacyGraphics::kBitmapPdu.data()));
    }
    QCOMPARE(v.kind, resource ? Violation::Kind::Resource : Violation::Kind::Protocol);
    QVERIFY(!graphics.takeDrawn());
    QVERIFY(d.surface.takeChanges().empty());
    QVERIFY(d.surface.takeNote().touched.isEmpty());
    QVERIFY(allZero(d.surface));
  }

  void surfaceBitsWithoutACodecDrawBottomUpRows() {
    const uint32_t w = 5, h = 4;
    const std::vector<uint8_t> source = picture(w, h);
    const std::vector<uint8_t> wire = bottomUp(source, size_t(w) * 4);
    Desktop d;
    LegacyGraphics graphics(d.surface);
    LegacyGraphics::SurfaceBits s{251, 124, 256, 128, w, h, 32, 0, wire}; // right, bottom exclusive
    QVERIFY(!gc::front::isViolation(graphics.draw(s)));
    QVERIFY(differs(d.surface, QRect(251, 124, int(w), int(h)), source.data(), size_t(w) * 4).isEmpty());
  }

  void surfaceBitsThatBreakARuleDrawNothing_data() {
    QTest::addColumn<uint>("right");
    QTest::addColumn<uint>("codec");
    QTest::addColumn<uint>("bpp");
    QTest::addColumn<int>("length");
    QTest::addColumn<QString>("rule");
    QTest::newRow("RemoteFX") << 8u << 3u << 32u << 8 * 4 * 4
                              << "a bitmap codec the console did not advertise";
    QTest::newRow("NSCodec") << 8u << 1u << 32u << 8 * 4 * 4
                             << "a bitmap codec the console did not advertise";
    QTest::newRow("24 bpp") << 8u << 0u << 24u << 8 * 4 * 4 << "bpp other than 32";
    QTest::newRow("beyond the desktop")
        << 257u << 0u << 32u << 8 * 4 * 4 << "destination rectangle outside the desktop";
    QTest::newRow("short data") << 8u << 0u << 32u << 8 * 4 * 4 - 1
                                << "bitmapDataLength inconsistent with width and height";
  }
  void surfaceBitsThatBreakARuleDrawNothing() {
    QFETCH(uint, right);
    QFETCH(uint, codec);
    QFETCH(uint, bpp);
    QFETCH(int, length);
    QFETCH(QString, rule);
    const std::vector<uint8_t> data(size_t(length), 0x7F);
    Desktop d;
    LegacyGraphics graphics(d.surface);
    LegacyGraphics::SurfaceBits s{right - 8, 0, right, 4, 8, 4, bpp, codec, data};
    const auto result = graphics.draw(s);
    QVERIFY(gc::front::isViolation(result));
    const Violation& v = std::get<Violation>(result);
    QCOMPARE(QString::fromLatin1(v.rule.data(), qsizetype(v.rule.size())), rule);
    QCOMPARE(v.kind, Violation::Kind::Protocol);
    QVERIFY(d.surface.takeChanges().empty());
    QVERIFY(allZero(d.surface));
  }

  // The handlers FreeRDP calls: what breaks a rule fails the update and becomes the session's
  // typed failure (the fronts' first violation), and nothing reaches the desktop.
  void aBitmapUpdateTheDecoderRefusesIsTheSessionsTypedFailure() {
    Handlers h;
    std::vector<uint8_t> garbage(64, 0xEE); // sizes the front accepts; no planar stream
    BITMAP_DATA rect{};
    rect.destRight = 7;
    rect.destBottom = 7;
    rect.width = 8;
    rect.height = 8;
    rect.bitsPerPixel = 32;
    rect.bitmapLength = UINT32(garbage.size());
    rect.bitmapDataStream = garbage.data();
    rect.compressed = TRUE;
    BITMAP_UPDATE update{};
    update.number = 1;
    update.rectangles = &rect;
    QCOMPARE(gc::LegacyUpdates::bitmapUpdate(h.context(), &update), FALSE);
    QVERIFY2(h.failure().startsWith(QStringLiteral("RDP_PROTOCOL_VIOLATION: codec.Planar: ")),
             qPrintable(h.failure()));
    QVERIFY(h.d.surface.takeChanges().empty());
    QVERIFY(allZero(h.d.surface));
  }

  void surfaceBitsWithACodecAreTheSessionsTypedFailure() {
    Handlers h;
    std::vector<uint8_t> data(8 * 4 * 4, 0x7F);
    SURFACE_BITS_COMMAND cmd{};
    cmd.destRight = 8;
    cmd.destBottom = 4;
    cmd.bmp.bpp = 32;
    cmd.bmp.codecID = 3; // RemoteFX
    cmd.bmp.width = 8;
    cmd.bmp.height = 4;
    cmd.bmp.bitmapDataLength = UINT32(data.size());
    cmd.bmp.bitmapData = data.data();
    QCOMPARE(gc::LegacyUpdates::surfaceBits(h.context(), &cmd), FALSE);
    QCOMPARE(h.failure(),
             QStringLiteral("RDP_PROTOCOL_VIOLATION: legacy.SurfaceBits: a bitmap codec the console "
                            "did not advertise"));
    QVERIFY(allZero(h.d.surface));
  }

  void pointerUpdatesAreAcceptedWithinTheAdvertisedCache() {
    Handlers h;
    const gc::front::Limits limits;
    POINTER_CACHED_UPDATE inside{limits.maxPointerCacheEntries - 1};
    QCOMPARE(gc::LegacyUpdates::pointerCached(h.context(), &inside), TRUE);
    POINTER_LARGE_UPDATE large{};
    large.width = UINT16(limits.maxPointerSide);
    large.height = UINT16(limits.maxPointerSide);
    QCOMPARE(gc::LegacyUpdates::pointerLarge(h.context(), &large), TRUE);
    QVERIFY(h.failure().isEmpty());
    POINTER_CACHED_UPDATE beyond{limits.maxPointerCacheEntries};
    QCOMPARE(gc::LegacyUpdates::pointerCached(h.context(), &beyond), FALSE);
    QCOMPARE(h.failure(),
             QStringLiteral("RDP_RESOURCE_LIMIT: legacy.Pointer: pointer cache index beyond the cache"));
  }
};

QTEST_APPLESS_MAIN(tst_LegacyGraphics)
#include "tst_legacygraphics.moc"
