// LegacyBitmaps: the legacy path's 32 bpp planar bitmaps go through the project's decoder in
// front of FreeRDP's GDI, so FreeRDP's desktop-sized planar context can go (issue 27.2). A real
// FreeRDP context with its GDI; streams from FreeRDP's own planar encoder (what
// freerdp-shadow-cli3 sends a client without the graphics pipeline).
#include "rdp/LegacyBitmaps.h"
#include "rdp/RdpContext.h"

#include <QTest>

#include <freerdp/codec/planar.h>
#include <freerdp/codecs.h>
#include <freerdp/constants.h>
#include <freerdp/gdi/gdi.h>
#include <freerdp/settings.h>

#include <cstring>
#include <utility>
#include <vector>

namespace {

struct Client {
  freerdp* instance = freerdp_new();
  Client(uint32_t w, uint32_t h) {
    instance->ContextSize = sizeof(gc::RdpContext);
    if (!freerdp_context_new(instance))
      return;
    std::memset(reinterpret_cast<char*>(instance->context) + sizeof(rdpClientContext), 0,
                sizeof(gc::RdpContext) - sizeof(rdpClientContext));
    rdpSettings* s = instance->context->settings;
    freerdp_settings_set_uint32(s, FreeRDP_DesktopWidth, w);
    freerdp_settings_set_uint32(s, FreeRDP_DesktopHeight, h);
    freerdp_settings_set_uint32(s, FreeRDP_ColorDepth, 32);
    // freerdp_connect makes the codecs; without a connection, the test does.
    if (!instance->context->codecs)
      instance->context->codecs = freerdp_client_codecs_new(0);
    ok = instance->context->codecs &&
         freerdp_client_codecs_prepare(instance->context->codecs, FREERDP_CODEC_ALL, w, h) &&
         gdi_init(instance, PIXEL_FORMAT_BGRX32);
  }
  ~Client() {
    if (instance->context) {
      freerdp_client_codecs_free(std::exchange(instance->context->codecs, nullptr));
      gdi_free(instance);
      freerdp_context_free(instance);
    }
    freerdp_free(instance);
  }
  bool ok = false;
};

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

// FreeRDP's encoder, as a server encodes a legacy bitmap (rows bottom-up on the wire).
std::vector<uint8_t> encode(const std::vector<uint8_t>& bgrx, uint32_t w, uint32_t h, DWORD flags) {
  BITMAP_PLANAR_CONTEXT* ctx = freerdp_bitmap_planar_context_new(flags, w, h);
  UINT32 size = 0;
  BYTE* out =
      freerdp_bitmap_compress_planar(ctx, bgrx.data(), PIXEL_FORMAT_BGRX32, w, h, w * 4, nullptr, &size);
  std::vector<uint8_t> v(out, out + size);
  free(out);
  freerdp_bitmap_planar_context_free(ctx);
  return v;
}

} // namespace

class tst_LegacyBitmaps : public QObject {
  Q_OBJECT
private slots:
  void planarBitmapsDecodeWithoutFreeRdpsPlanarContext_data() {
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
  void planarBitmapsDecodeWithoutFreeRdpsPlanarContext() {
    QFETCH(uint, w);
    QFETCH(uint, h);
    QFETCH(uint, flags);
    Client client(256, 128);
    QVERIFY(client.ok);
    rdpContext* context = client.instance->context;
    QVERIFY(gc::LegacyBitmaps::install(context));
    // What SessionSetup does next: FreeRDP's planar context is gone.
    freerdp_bitmap_planar_context_free(std::exchange(context->codecs->planar, nullptr));
    const std::vector<uint8_t> source = picture(w, h);
    const std::vector<uint8_t> stream = encode(source, w, h, flags);
    QVERIFY(!stream.empty());
    rdpBitmap* bitmap = Bitmap_Alloc(context);
    QVERIFY(bitmap);
    QVERIFY(bitmap->Decompress(context, bitmap, stream.data(), w, h, 32, UINT32(stream.size()), TRUE,
                               RDP_CODEC_ID_NONE));
    QCOMPARE(bitmap->format, UINT32(PIXEL_FORMAT_BGRX32));
    QCOMPARE(bitmap->length, UINT32(w * h * 4));
    QCOMPARE(bitmap->compressed, FALSE);
    // The pixels the server encoded, row for row (the decoder turned the rows the right way).
    for (uint32_t y = 0; y < h; ++y)
      for (uint32_t x = 0; x < w; ++x) {
        const uint8_t* got = bitmap->data + (size_t(y) * w + x) * 4;
        const uint8_t* want = source.data() + (size_t(y) * w + x) * 4;
        if (std::memcmp(got, want, 3) != 0)
          QFAIL(qPrintable(QStringLiteral("pixel %1,%2 differs").arg(x).arg(y)));
      }
    bitmap->Free(context, bitmap);
  }

  void aTruncatedPlanarBitmapFailsTheBitmap() {
    Client client(64, 64);
    QVERIFY(client.ok);
    rdpContext* context = client.instance->context;
    QVERIFY(gc::LegacyBitmaps::install(context));
    freerdp_bitmap_planar_context_free(std::exchange(context->codecs->planar, nullptr));
    std::vector<uint8_t> stream =
        encode(picture(32, 32), 32, 32, PLANAR_FORMAT_HEADER_RLE | PLANAR_FORMAT_HEADER_NA);
    stream.resize(stream.size() / 2);
    rdpBitmap* bitmap = Bitmap_Alloc(context);
    QVERIFY(bitmap);
    QVERIFY(!bitmap->Decompress(context, bitmap, stream.data(), 32, 32, 32, UINT32(stream.size()), TRUE,
                                RDP_CODEC_ID_NONE));
    bitmap->Free(context, bitmap);
  }

  void otherBitmapsStayFreeRdps() {
    Client client(64, 64);
    QVERIFY(client.ok);
    rdpContext* context = client.instance->context;
    QVERIFY(gc::LegacyBitmaps::install(context));
    // Uncompressed 32 bpp (bottom-up on the wire): FreeRDP's own Decompress, chained.
    const uint32_t w = 4, h = 2;
    std::vector<uint8_t> wire(size_t(w) * h * 4);
    for (size_t i = 0; i < wire.size(); ++i)
      wire[i] = uint8_t(i * 9 + 1);
    rdpBitmap* bitmap = Bitmap_Alloc(context);
    QVERIFY(bitmap);
    QVERIFY(bitmap->Decompress(context, bitmap, wire.data(), w, h, 32, UINT32(wire.size()), FALSE,
                               RDP_CODEC_ID_NONE));
    QCOMPARE(std::memcmp(bitmap->data, wire.data() + w * 4, 3), 0); // the last wire row is the top
    bitmap->Free(context, bitmap);
  }
};

QTEST_APPLESS_MAIN(tst_LegacyBitmaps)
#include "tst_legacybitmaps.moc"
