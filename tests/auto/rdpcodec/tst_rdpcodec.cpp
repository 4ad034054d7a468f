// AlphaDecoder and Uncompressed (issue 24 part 2): the RDPGFX alpha codec (MS-RDPEGFX 2.2.4.3)
// against the spec's definition, uncompressed RDPGFX and legacy raw bitmaps against FreeRDP
// 3.10.3's conversion (freerdp_image_copy, as its GDI uses it); one refusal per rule.
#include "rdp/codec/AlphaDecoder.h"
#include "rdp/codec/Uncompressed.h"
#include "tests/auto/rdpcodec/CodecTestSupport.h"

#include <QTest>

#include <freerdp/codec/color.h>

#include <cstdint>
#include <vector>

using gc::codec::AlphaDecoder;
using gc::codec::Uncompressed;
using namespace codectest;

namespace {

QByteArray q(const Bytes& b) {
  return toQByteArray(b.span());
}
std::span<const uint8_t> span(const QByteArray& a) {
  return {reinterpret_cast<const uint8_t*>(a.constData()), size_t(a.size())};
}

// A compressed alpha stream of (value, count) segments, each count in its shortest form.
Bytes alphaRuns(const std::vector<std::pair<uint8_t, uint32_t>>& runs) {
  Bytes b;
  b.u16(AlphaDecoder::kSignature).u16(1);
  for (auto [a, n] : runs) {
    b.u8(a);
    if (n < 0xFF)
      b.u8(n);
    else if (n < 0xFFFF)
      b.u8(0xFF).u16(n);
    else
      b.u8(0xFF).u16(0xFFFF).u32(n);
  }
  return b;
}

uint32_t freerdpFormat(uint32_t bpp) {
  switch (bpp) {
  case 15:
    return PIXEL_FORMAT_RGB15;
  case 16:
    return PIXEL_FORMAT_RGB16;
  case 24:
    return PIXEL_FORMAT_BGR24;
  default:
    return PIXEL_FORMAT_BGRA32;
  }
}

} // namespace

class tst_RdpCodec : public QObject {
  Q_OBJECT
private slots:
  void setsAlphaAndKeepsColours_data() {
    QTest::addColumn<uint>("w");
    QTest::addColumn<uint>("h");
    QTest::addColumn<QByteArray>("stream");
    QTest::addColumn<QByteArray>("alpha"); // what every pixel's X byte must become, row-major
    Bytes raw;
    raw.u16(AlphaDecoder::kSignature).u16(0);
    QByteArray rawAlpha;
    for (int i = 0; i < 15; ++i) {
      raw.u8(i * 17);
      rawAlpha.append(char(i * 17));
    }
    QTest::newRow("uncompressed") << 5u << 3u << q(raw) << rawAlpha;
    QTest::newRow("runs across rows") << 5u << 3u << q(alphaRuns({{0x10, 7}, {0x20, 0}, {0x30, 8}}))
                                      << (QByteArray(7, 0x10) + QByteArray(8, 0x30));
    QTest::newRow("16-bit count") << 300u << 2u << q(alphaRuns({{0xAA, 599}, {0xBB, 1}}))
                                  << (QByteArray(599, char(0xAA)) + QByteArray(1, char(0xBB)));
    QTest::newRow("32-bit count") << 300u << 300u << q(alphaRuns({{0x01, 90000}}))
                                  << QByteArray(90000, char(0x01));
  }
  void setsAlphaAndKeepsColours() {
    QFETCH(uint, w);
    QFETCH(uint, h);
    QFETCH(QByteArray, stream);
    QFETCH(QByteArray, alpha);
    Image img(w, h);
    const auto picture = makePicture(w, h, Pattern::Noise);
    for (uint32_t y = 0; y < h; ++y)
      std::memcpy(img.row(y), picture.data() + size_t(y) * w * 4, size_t(w) * 4);
    const auto r = AlphaDecoder::decode(span(stream), img.pixels());
    QVERIFY2(!gc::front::isViolation(r), ruleOf(r).c_str());
    QVERIFY(img.guardIntact());
    for (uint32_t y = 0; y < h; ++y)
      for (uint32_t x = 0; x < w; ++x) {
        const uint8_t* p = img.at(x, y);
        const uint8_t* o = picture.data() + (size_t(y) * w + x) * 4;
        QCOMPARE(p[0], o[0]);
        QCOMPARE(p[1], o[1]);
        QCOMPARE(p[2], o[2]);
        QCOMPARE(p[3], uint8_t(alpha[qsizetype(y * w + x)]));
      }
  }

  void refusesMalformedAlpha_data() {
    QTest::addColumn<QByteArray>("stream");
    QTest::addColumn<uint>("w");
    QTest::addColumn<QString>("rule");
    Bytes raw;
    raw.u16(AlphaDecoder::kSignature).u16(0).fill(16, 1);
    QTest::newRow("no bitmap") << q(raw) << 0u << "bitmap size out of range";
    QTest::newRow("header cut") << QByteArray("\x4C\x41\x00", 3) << 4u << "stream shorter than its header";
    QTest::newRow("signature") << QByteArray("\x41\x4C\x00\x00", 4) << 4u << "wrong signature";
    Bytes rawShort = raw;
    rawShort.v.pop_back();
    QTest::newRow("uncompressed short")
        << q(rawShort) << 4u << "uncompressed alpha does not match the bitmap";
    Bytes rawLong = raw;
    rawLong.u8(0);
    QTest::newRow("uncompressed long") << q(rawLong) << 4u << "uncompressed alpha does not match the bitmap";
    QTest::newRow("compression 2") << QByteArray("\x4C\x41\x02\x00", 4) << 4u << "unknown compression";
    QTest::newRow("segment cut") << QByteArray("\x4C\x41\x01\x00\x05", 5) << 4u << "segment cut short";
    QTest::newRow("16-bit count cut")
        << QByteArray("\x4C\x41\x01\x00\x05\xFF\x10", 7) << 4u << "segment cut short";
    QTest::newRow("32-bit count cut")
        << QByteArray("\x4C\x41\x01\x00\x05\xFF\xFF\xFF\x01", 9) << 4u << "segment cut short";
    QTest::newRow("past the bitmap") << q(alphaRuns({{1, 10}, {2, 7}})) << 4u
                                     << "segment runs past the bitmap";
    QTest::newRow("4G pixels") << q(alphaRuns({{1, 0xFFFFFFFF}})) << 4u << "segment runs past the bitmap";
    QTest::newRow("short of the bitmap")
        << q(alphaRuns({{1, 15}})) << 4u << "compressed alpha does not cover the bitmap";
  }
  void refusesMalformedAlpha() {
    QFETCH(QByteArray, stream);
    QFETCH(uint, w);
    QFETCH(QString, rule);
    Image img(4, 4);
    gc::codec::Pixels px = img.pixels();
    px.width = w;
    const auto r = AlphaDecoder::decode(span(stream), px);
    QCOMPARE(QString::fromStdString(ruleOf(r)), rule);
    QVERIFY(img.guardIntact());
  }

  void copiesRdpgfxUncompressedLikeFreeRdp_data() {
    QTest::addColumn<uint>("format");
    QTest::newRow("XRGB_8888") << uint(Uncompressed::kXrgb8888);
    QTest::newRow("ARGB_8888") << uint(Uncompressed::kArgb8888);
  }
  void copiesRdpgfxUncompressedLikeFreeRdp() {
    QFETCH(uint, format);
    const uint32_t w = 37, h = 11;
    const auto picture = makePicture(w, h, Pattern::Noise);
    Image mine(w, h);
    const auto r = Uncompressed::decodeGfx(picture, uint8_t(format), mine.pixels());
    QVERIFY2(!gc::front::isViolation(r), ruleOf(r).c_str());
    QVERIFY(mine.guardIntact());
    std::vector<uint8_t> theirs(size_t(w) * h * 4);
    const bool argb = format == Uncompressed::kArgb8888;
    QVERIFY(freerdp_image_copy_no_overlap(
        theirs.data(), argb ? PIXEL_FORMAT_BGRA32 : PIXEL_FORMAT_BGRX32, w * 4, 0, 0, w, h, picture.data(),
        argb ? PIXEL_FORMAT_BGRA32 : PIXEL_FORMAT_BGRX32, 0, 0, 0, nullptr, FREERDP_FLIP_NONE));
    QVERIFY(firstDifference(mine.packed(), theirs, w, 3).isEmpty());
    for (uint32_t y = 0; y < h; ++y)
      for (uint32_t x = 0; x < w; ++x)
        QCOMPARE(mine.at(x, y)[3], argb ? picture[(size_t(y) * w + x) * 4 + 3] : uint8_t(0xFF));
  }

  void copiesRawBitmapsLikeFreeRdp_data() {
    QTest::addColumn<uint>("w");
    QTest::addColumn<uint>("h");
    QTest::addColumn<uint>("bpp");
    QTest::addColumn<bool>("padded");
    for (uint bpp : {15u, 16u, 24u, 32u})
      for (uint w : {1u, 3u, 4u, 64u, 65u}) {
        QTest::addRow("%ubpp-%ux9", bpp, w) << w << 9u << bpp << false;
        if (Uncompressed::bitmapRowBytes(w, bpp, true) != Uncompressed::bitmapRowBytes(w, bpp, false))
          QTest::addRow("%ubpp-%ux9-padded", bpp, w) << w << 9u << bpp << true;
      }
  }
  void copiesRawBitmapsLikeFreeRdp() {
    QFETCH(uint, w);
    QFETCH(uint, h);
    QFETCH(uint, bpp);
    QFETCH(bool, padded);
    const size_t row = Uncompressed::bitmapRowBytes(w, bpp, padded);
    std::vector<uint8_t> data(row * h);
    std::mt19937 rng(w * bpp);
    for (auto& b : data)
      b = uint8_t(rng());
    Image mine(w, h);
    const auto r = Uncompressed::decodeBitmap(data, bpp, mine.pixels());
    QVERIFY2(!gc::front::isViolation(r), ruleOf(r).c_str());
    QVERIFY(mine.guardIntact());
    std::vector<uint8_t> theirs(size_t(w) * h * 4);
    QVERIFY(freerdp_image_copy_no_overlap(theirs.data(), PIXEL_FORMAT_BGRX32, w * 4, 0, 0, w, h, data.data(),
                                          freerdpFormat(bpp), UINT32(row), 0, 0, nullptr,
                                          FREERDP_FLIP_VERTICAL));
    const QString diff = firstDifference(mine.packed(), theirs, w, 3);
    QVERIFY2(diff.isEmpty(), qPrintable(diff));
  }

  void refusesMalformedUncompressed_data() {
    QTest::addColumn<bool>("gfx");
    QTest::addColumn<uint>("formatOrBpp");
    QTest::addColumn<uint>("w");
    QTest::addColumn<int>("length");
    QTest::addColumn<QString>("rule");
    QTest::newRow("gfx no bitmap") << true << 0x20u << 0u << 0 << "bitmap size out of range";
    QTest::newRow("gfx format 0x22") << true << 0x22u << 4u << 64 << "unknown pixel format";
    QTest::newRow("gfx short") << true << 0x20u << 4u << 63 << "length does not match the bitmap";
    QTest::newRow("gfx long") << true << 0x21u << 4u << 65 << "length does not match the bitmap";
    QTest::newRow("raw no bitmap") << false << 16u << 0u << 0 << "bitmap size out of range";
    QTest::newRow("raw 8 bpp") << false << 8u << 4u << 16 << "colour depth not 15, 16, 24 or 32";
    QTest::newRow("raw short") << false << 24u << 4u << 47 << "length does not match the bitmap";
    QTest::newRow("raw between tight and padded")
        << false << 24u << 3u << 40 << "length does not match the bitmap";
  }
  void refusesMalformedUncompressed() {
    QFETCH(bool, gfx);
    QFETCH(uint, formatOrBpp);
    QFETCH(uint, w);
    QFETCH(int, length);
    QFETCH(QString, rule);
    Image img(4, 4);
    gc::codec::Pixels px = img.pixels();
    px.width = w;
    const std::vector<uint8_t> data(size_t(length), 0x42);
    const auto r = gfx ? Uncompressed::decodeGfx(data, uint8_t(formatOrBpp), px)
                       : Uncompressed::decodeBitmap(data, formatOrBpp, px);
    QVERIFY(gc::front::isViolation(r));
    const auto& v = std::get<gc::front::Violation>(r);
    QCOMPARE(QString::fromLatin1(v.pdu.data(), qsizetype(v.pdu.size())),
             gfx ? QStringLiteral("codec.Uncompressed") : QStringLiteral("codec.RawBitmap"));
    QCOMPARE(QString::fromStdString(ruleOf(r)), rule);
    QVERIFY(img.guardIntact());
  }

  // Seeds for fuzz_alpha (width - 1, height - 1, x, y, surface ARGB, stream) and
  // fuzz_uncompressed (kind, width - 1, height - 1, then x, y, formats and the pixels, or the
  // depth index and the rows).
  void writesFuzzSeeds() {
    QString dir;
    if (!seedDirectory(dir))
      QSKIP("GC_CODEC_SEED_DIR not set");
    int n = 0;
    auto alphaSeed = [&](uint32_t w, uint32_t h, uint32_t x, uint32_t y, bool argb, const Bytes& stream) {
      Bytes b;
      b.u8(w - 1).u8(h - 1).u8(x).u8(y).u8(argb ? 1 : 0).bytes(stream);
      QVERIFY(writeSeed(dir, "alpha", QStringLiteral("seed-%1").arg(n++, 2, 10, QLatin1Char('0')), b.span()));
    };
    Bytes raw;
    raw.u16(AlphaDecoder::kSignature).u16(0);
    for (int i = 0; i < 15; ++i)
      raw.u8(i * 17);
    alphaSeed(5, 3, 0, 0, true, raw);
    alphaSeed(5, 3, 7, 9, false, raw);
    alphaSeed(5, 3, 2, 40, true, alphaRuns({{0x10, 7}, {0x20, 0}, {0x30, 8}}));
    alphaSeed(40, 10, 3, 1, true, alphaRuns({{0xAA, 399}, {0xBB, 1}}));
    alphaSeed(48, 48, 16, 16, true, alphaRuns({{0x01, 1000}, {0x80, 48 * 48 - 1000}}));

    int m = 0;
    auto uncompressedSeed = [&](const Bytes& b) {
      QVERIFY(writeSeed(dir, "uncompressed", QStringLiteral("seed-%1").arg(m++, 2, 10, QLatin1Char('0')),
                        b.span()));
    };
    for (uint8_t formats = 0; formats < 4; ++formats) {
      const auto picture = makePicture(7, 5, Pattern::Noise, formats);
      Bytes b;
      b.u8(0).u8(7 - 1).u8(5 - 1).u8(3 + formats).u8(11).u8(formats).bytes(picture);
      uncompressedSeed(b);
    }
    const uint32_t depths[4] = {15, 16, 24, 32};
    for (uint8_t d = 0; d < 4; ++d)
      for (bool padded : {false, true}) {
        const uint32_t w = 5, h = 3;
        const size_t row = Uncompressed::bitmapRowBytes(w, depths[d], padded);
        if (padded && row == Uncompressed::bitmapRowBytes(w, depths[d], false))
          continue;
        std::mt19937 rng(d * 2 + padded);
        Bytes b;
        b.u8(1).u8(w - 1).u8(h - 1).u8(d);
        for (size_t i = 0; i < row * h; ++i)
          b.u8(uint8_t(rng()));
        uncompressedSeed(b);
      }
  }

  void checksRdpgfxSizesWithoutPixels() {
    QVERIFY(!gc::front::isViolation(Uncompressed::checkGfx(8 * 2 * 4, 0x20, 8, 2)));
    QVERIFY(gc::front::isViolation(Uncompressed::checkGfx(8 * 2 * 4, 0x20, 8, 3)));
    // 65535 x 65535 x 4 would overflow 32 bits: refused by the size, not wrapped into a match.
    QVERIFY(gc::front::isViolation(Uncompressed::checkGfx(0xFFFC0004u, 0x20, 65535, 65535)));
  }
};

QTEST_APPLESS_MAIN(tst_RdpCodec)
#include "tst_rdpcodec.moc"
