// PlanarDecoder (issue 24 part 2): the console's own planar decoder against FreeRDP 3.10.3's on
// valid streams (FreeRDP's encoder for RGB, a spec encoder here for YCoCg, subsampling and
// alpha), and one refusal per rule.
#include "rdp/codec/PlanarDecoder.h"
#include "tests/auto/rdpcodec/CodecTestSupport.h"
#include "tests/auto/rdpcodec/PlanarSpecEncoder.h"
#include "tests/auto/rdpcodec/SpecVectors.h"

#include <QTest>

#include <freerdp/codec/color.h>
#include <freerdp/codec/planar.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

using gc::codec::PlanarDecoder;
using namespace codectest;

namespace {

// ---- FreeRDP's side ----

struct PlanarCtx {
  BITMAP_PLANAR_CONTEXT* p;
  PlanarCtx(DWORD flags, uint32_t w, uint32_t h) : p(freerdp_bitmap_planar_context_new(flags, w, h)) {}
  ~PlanarCtx() { freerdp_bitmap_planar_context_free(p); }
};

bool freerdpDecode(const std::vector<uint8_t>& s, uint32_t w, uint32_t h, bool bottomUp, UINT32 format,
                   std::vector<uint8_t>& dst) {
  PlanarCtx ctx(0, w, h);
  dst.assign(size_t(w) * h * 4, 0);
  return planar_decompress(ctx.p, s.data(), UINT32(s.size()), w, h, dst.data(), format, w * 4, 0, 0, w, h,
                           bottomUp);
}

std::vector<uint8_t> freerdpEncode(const std::vector<uint8_t>& bgrx, uint32_t w, uint32_t h, DWORD flags,
                                   bool topDown) {
  PlanarCtx ctx(flags, w, h);
  freerdp_planar_topdown_image(ctx.p, topDown);
  UINT32 size = 0;
  BYTE* out =
      freerdp_bitmap_compress_planar(ctx.p, bgrx.data(), PIXEL_FORMAT_BGRA32, w, h, w * 4, nullptr, &size);
  std::vector<uint8_t> v(out, out + size);
  free(out);
  return v;
}

struct Decoded {
  bool ok = false;
  std::string rule;
  std::vector<uint8_t> pixels;
  bool guardIntact = false;
};

Decoded ours(const std::vector<uint8_t>& s, uint32_t w, uint32_t h, PlanarDecoder::Options o) {
  Image img(w, h, 0x5A);
  const auto r = PlanarDecoder::decode(s, img.pixels(), o);
  return {!gc::front::isViolation(r), ruleOf(r), img.packed(), img.guardIntact()};
}

// The stream decoded both ways (opaque, and alpha from the stream) against FreeRDP 3.10.3's
// decoder: the same pixels, or — where FreeRDP refuses its own stream (`refusalAllowed`) —
// refused by the console's decoder too. With `picture`, the RGB planes (and, when
// `pictureAlpha`, the alpha plane) must come back exactly. Returns the first problem found.
QString compareWithFreeRdp(const std::vector<uint8_t>& stream, uint32_t w, uint32_t h, bool bottomUp,
                           bool refusalAllowed, const std::vector<uint8_t>* picture = nullptr,
                           bool pictureAlpha = false) {
  for (bool alpha : {false, true}) {
    const Decoded mine = ours(stream, w, h,
                              {bottomUp ? PlanarDecoder::Rows::BottomUp : PlanarDecoder::Rows::TopDown,
                               alpha ? PlanarDecoder::Alpha::FromStream : PlanarDecoder::Alpha::Opaque});
    if (!mine.guardIntact)
      return QStringLiteral("the decoder wrote outside its pixels");
    std::vector<uint8_t> theirs;
    if (!freerdpDecode(stream, w, h, bottomUp, alpha ? PIXEL_FORMAT_BGRA32 : PIXEL_FORMAT_BGRX32, theirs)) {
      if (!refusalAllowed)
        return QStringLiteral("FreeRDP refused the stream");
      if (mine.ok)
        return QStringLiteral("FreeRDP refuses its own stream, the console's decoder accepted it");
      continue;
    }
    if (!mine.ok)
      return QString::fromStdString(mine.rule);
    if (const QString diff = firstDifference(mine.pixels, theirs, w); !diff.isEmpty())
      return diff;
    if (picture)
      if (const QString lossless = firstDifference(mine.pixels, *picture, w, alpha && pictureAlpha ? 4 : 3);
          !lossless.isEmpty())
        return QStringLiteral("not lossless: ") + lossless;
  }
  return {};
}

// MS-RDPEGDI 3.1.9.2's examples as a whole stream: RLE, no alpha, RGB, the example's segments
// as each of the three planes (so every pixel is grey: B = G = R = the plane's value).
std::vector<uint8_t> specStream(const std::vector<uint8_t>& plane) {
  std::vector<uint8_t> s{0x30}; // RLE | NA, colour loss level 0
  for (int i = 0; i < 3; ++i)
    s.insert(s.end(), plane.begin(), plane.end());
  return s;
}

} // namespace

class tst_RdpCodecPlanar : public QObject {
  Q_OBJECT
private slots:
  void decodesFreeRdpEncodedStreamsLikeFreeRdp_data() {
    QTest::addColumn<uint>("w");
    QTest::addColumn<uint>("h");
    QTest::addColumn<int>("pattern");
    QTest::addColumn<uint>("flags");
    QTest::addColumn<bool>("bottomUp");
    const QList<QSize> sizes{{1, 1}, {3, 2}, {64, 64}, {65, 33}, {257, 13}, {300, 200}};
    const QList<Pattern> patterns{Pattern::Flat, Pattern::Gradient, Pattern::Noise, Pattern::Text};
    const QList<uint> flags{PLANAR_FORMAT_HEADER_RLE | PLANAR_FORMAT_HEADER_NA, PLANAR_FORMAT_HEADER_RLE,
                            PLANAR_FORMAT_HEADER_NA, 0};
    for (const QSize& s : sizes)
      for (Pattern p : patterns)
        for (uint f : flags)
          for (bool bottomUp : {false, true})
            QTest::addRow("%dx%d-%s-%s%s-%s", s.width(), s.height(), patternName(p),
                          (f & PLANAR_FORMAT_HEADER_RLE) ? "rle" : "raw",
                          (f & PLANAR_FORMAT_HEADER_NA) ? "" : "-alpha", bottomUp ? "bottomup" : "topdown")
                << uint(s.width()) << uint(s.height()) << int(p) << f << bottomUp;
  }
  void decodesFreeRdpEncodedStreamsLikeFreeRdp() {
    QFETCH(uint, w);
    QFETCH(uint, h);
    QFETCH(int, pattern);
    QFETCH(uint, flags);
    QFETCH(bool, bottomUp);
    const auto picture = makePicture(w, h, Pattern(pattern), w * 31 + h);
    const auto stream = freerdpEncode(picture, w, h, flags, !bottomUp);

    if (stream.empty())
      QSKIP("FreeRDP 3.10.3's encoder produced nothing for this picture");
    // 3.10.3's RLE encoder writes truncated or raw-sized planes for pictures RLE does not
    // shrink, which its own decoder refuses: refused here too. RGB planes are lossless.
    const QString problem =
        compareWithFreeRdp(stream, w, h, bottomUp, true, &picture, !(flags & PLANAR_FORMAT_HEADER_NA));
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
  }

  void decodesYCoCgSubsampledAndAlphaStreamsLikeFreeRdp_data() {
    QTest::addColumn<uint>("w");
    QTest::addColumn<uint>("h");
    QTest::addColumn<int>("pattern");
    QTest::addColumn<uint>("cll");
    QTest::addColumn<bool>("cs");
    QTest::addColumn<bool>("rle");
    QTest::addColumn<bool>("na");
    QTest::addColumn<bool>("bottomUp");
    const QList<QSize> sizes{{1, 1}, {2, 2}, {5, 3}, {64, 64}, {67, 41}, {320, 17}};
    for (const QSize& s : sizes)
      for (Pattern p : {Pattern::Gradient, Pattern::Noise, Pattern::Text})
        for (uint cll : {0u, 1u, 3u, 7u})
          for (bool cs : {false, true})
            for (bool rle : {false, true})
              for (bool na : {false, true}) {
                if (cs && cll == 0)
                  continue;
                const bool bottomUp = (s.width() + cll) % 2 == 1; // both orientations, fewer rows
                QTest::addRow("%dx%d-%s-cll%u%s-%s%s%s", s.width(), s.height(), patternName(p), cll,
                              cs ? "-cs" : "", rle ? "rle" : "raw", na ? "" : "-alpha",
                              bottomUp ? "-bottomup" : "")
                    << uint(s.width()) << uint(s.height()) << int(p) << cll << cs << rle << na << bottomUp;
              }
  }
  void decodesYCoCgSubsampledAndAlphaStreamsLikeFreeRdp() {
    QFETCH(uint, w);
    QFETCH(uint, h);
    QFETCH(int, pattern);
    QFETCH(uint, cll);
    QFETCH(bool, cs);
    QFETCH(bool, rle);
    QFETCH(bool, na);
    QFETCH(bool, bottomUp);
    const auto picture = makePicture(w, h, Pattern(pattern), w + 7 * h);
    PlanarFlags f;
    f.cll = cll, f.cs = cs, f.rle = rle, f.na = na, f.bottomUp = bottomUp;
    const auto stream = encodePlanar(picture, w, h, f);
    if (stream.empty())
      QSKIP("FreeRDP 3.10.3's encoder produced nothing for this picture");
    const QString problem = compareWithFreeRdp(stream, w, h, bottomUp, true);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
  }

  // Planes of random bytes: every chroma and luma value, so every clamp of the conversion.
  void decodesRandomPlanesLikeFreeRdp_data() {
    QTest::addColumn<uint>("cll");
    QTest::addColumn<bool>("cs");
    QTest::addColumn<bool>("rle");
    QTest::addColumn<bool>("na");
    for (uint cll = 0; cll <= 7; ++cll)
      for (bool cs : {false, true})
        for (bool rle : {false, true})
          for (bool na : {false, true})
            if (!(cs && cll == 0))
              QTest::addRow("cll%u%s-%s%s", cll, cs ? "-cs" : "", rle ? "rle" : "raw", na ? "" : "-alpha")
                  << cll << cs << rle << na;
  }
  void decodesRandomPlanesLikeFreeRdp() {
    QFETCH(uint, cll);
    QFETCH(bool, cs);
    QFETCH(bool, rle);
    QFETCH(bool, na);
    const uint32_t w = 77, h = 45;
    PlanarFlags f;
    f.cll = cll, f.cs = cs, f.rle = rle, f.na = na, f.randomPlanes = true,
    f.seed = cll * 8 + cs * 4 + rle * 2 + na;
    const auto stream = encodePlanar(makePicture(w, h, Pattern::Flat), w, h, f);
    const QString problem = compareWithFreeRdp(stream, w, h, false, false);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
  }

  // MS-RDPEGDI 3.1.9.2's annotated segments (tests/auto/rdpcodec/SpecVectors.h): decoded to the
  // values the section gives, and as FreeRDP 3.10.3 decodes them.
  void decodesTheSpecificationsRleExamples_data() {
    QTest::addColumn<uint>("w");
    QTest::addColumn<uint>("h");
    QTest::addColumn<QByteArray>("stream");
    QTest::addColumn<QByteArray>("values"); // row-major, one per pixel
    QTest::newRow("MS-RDPEGDI 3.1.9.2 segments")
        << 12u << 1u << toQByteArray(specStream(codectest::spec::planarRleExampleEncoded()))
        << toQByteArray(codectest::spec::planarRleExamplePlain());
    QTest::newRow("MS-RDPEGDI 3.1.9.2 deltas")
        << 6u << 3u << toQByteArray(specStream(codectest::spec::planarDeltaExampleEncoded()))
        << toQByteArray(codectest::spec::planarDeltaExamplePlain());
  }
  void decodesTheSpecificationsRleExamples() {
    QFETCH(uint, w);
    QFETCH(uint, h);
    QFETCH(QByteArray, stream);
    QFETCH(QByteArray, values);
    const std::vector<uint8_t> s(stream.begin(), stream.end());
    const Decoded mine = ours(s, w, h, {});
    QVERIFY2(mine.ok, mine.rule.c_str());
    for (uint32_t i = 0; i < w * h; ++i)
      for (int c = 0; c < 3; ++c)
        QCOMPARE(mine.pixels[size_t(i) * 4 + size_t(c)], uint8_t(values[qsizetype(i)]));
    const QString problem = compareWithFreeRdp(s, w, h, false, false);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
  }

  void acceptsARawStreamWithoutItsPadByte() {
    const auto picture = makePicture(7, 5, Pattern::Noise);
    PlanarFlags f;
    f.na = true, f.pad = false;
    const Decoded mine = ours(encodePlanar(picture, 7, 5, f), 7, 5, {});
    QVERIFY2(mine.ok, mine.rule.c_str());
    QVERIFY(firstDifference(mine.pixels, picture, 7, 3).isEmpty());
  }

  void refusesMalformedStreams_data() {
    QTest::addColumn<QByteArray>("stream");
    QTest::addColumn<uint>("w");
    QTest::addColumn<uint>("h");
    QTest::addColumn<QString>("rule");
    const auto picture = makePicture(4, 3, Pattern::Noise);
    PlanarFlags raw;
    raw.na = true;
    auto rawStream = encodePlanar(picture, 4, 3, raw);
    PlanarFlags rle;
    rle.rle = true;
    rle.cll = 3;
    rle.cs = true;
    auto rleStream = encodePlanar(picture, 4, 3, rle);

    QTest::newRow("empty") << QByteArray() << 4u << 3u << "empty stream";
    QTest::newRow("no bitmap") << toQByteArray(rawStream) << 0u << 3u << "bitmap size out of range";
    QTest::newRow("beyond the largest side")
        << toQByteArray(rawStream) << 8193u << 1u << "bitmap size out of range";
    QTest::newRow("subsampled RGB") << QByteArray("\x28", 1) << 4u << 3u
                                    << "chroma subsampling without YCoCg";
    auto shortRaw = rawStream;
    shortRaw.pop_back(); // the pad
    shortRaw.pop_back(); // and one plane byte
    QTest::newRow("raw plane short") << toQByteArray(shortRaw) << 4u << 3u
                                     << "raw planes shorter than the bitmap";
    auto longRaw = rawStream;
    longRaw.push_back(0);
    QTest::newRow("raw with two pad bytes")
        << toQByteArray(longRaw) << 4u << 3u << "bytes after the raw planes";
    QTest::newRow("raw for a larger bitmap")
        << toQByteArray(encodePlanar(makePicture(5, 3, Pattern::Noise), 5, 3, raw)) << 4u << 3u
        << "bytes after the raw planes";
    QTest::newRow("run past the scanline")
        << QByteArray("\x30\x05", 2) << 4u << 1u << "RLE segment runs past the scanline";
    QTest::newRow("long run past the scanline")
        << QByteArray("\x30\x01", 2) << 4u << 1u << "RLE segment runs past the scanline";
    QTest::newRow("raw values past the stream")
        << QByteArray("\x30\x40\x01\x02", 4) << 4u << 1u << "RLE plane ends before its last scanline";
    QTest::newRow("missing planes") << QByteArray("\x30\x04", 2) << 4u << 1u
                                    << "RLE plane ends before its last scanline";
    auto longRle = rleStream;
    longRle.push_back(0x04);
    QTest::newRow("bytes after the RLE planes")
        << toQByteArray(longRle) << 4u << 3u << "bytes after the RLE planes";
    // Flat RGB, one run per scanline: 3 planes x 5 scanlines for a 4x5 bitmap, read as 4x3.
    QTest::newRow("RLE for a taller bitmap")
        << (QByteArray("\x30", 1) + QByteArray(15, '\x04')) << 4u << 3u << "bytes after the RLE planes";
    QTest::newRow("RLE for a wider bitmap")
        << toQByteArray(encodePlanar(makePicture(9, 3, Pattern::Noise), 9, 3, rle)) << 4u << 3u
        << "RLE segment runs past the scanline";
  }
  void refusesMalformedStreams() {
    QFETCH(QByteArray, stream);
    QFETCH(uint, w);
    QFETCH(uint, h);
    QFETCH(QString, rule);
    Image img(std::max(w, 1u), std::max(h, 1u));
    gc::codec::Pixels px = img.pixels();
    px.width = w, px.height = h;
    if (w > 8192) {
      static std::vector<uint8_t> wide(size_t(w) * 4 + 64);
      px = {wide.data(), size_t(w) * 4, w, h};
    }
    const auto r = PlanarDecoder::decode(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(stream.constData()), size_t(stream.size())),
        px);
    QVERIFY(gc::front::isViolation(r));
    const auto& v = std::get<gc::front::Violation>(r);
    QCOMPARE(v.kind, gc::front::Violation::Kind::Protocol);
    QCOMPARE(QString::fromLatin1(v.pdu.data(), qsizetype(v.pdu.size())), QStringLiteral("codec.Planar"));
    QCOMPARE(QString::fromStdString(ruleOf(r)), rule);
    QVERIFY(img.guardIntact());
  }

  // Seeds for fuzz_planar: width - 1, height - 1, options (bit 0 bottom-up, bit 1 alpha), stream.
  void writesFuzzSeeds() {
    QString dir;
    if (!seedDirectory(dir))
      QSKIP("GC_CODEC_SEED_DIR not set");
    int n = 0;
    auto seed = [&](uint32_t w, uint32_t h, uint8_t options, const std::vector<uint8_t>& stream) {
      Bytes b;
      b.u8(w - 1).u8(h - 1).u8(options).bytes(stream);
      QVERIFY(
          writeSeed(dir, "planar", QStringLiteral("seed-%1").arg(n++, 2, 10, QLatin1Char('0')), b.span()));
    };
    for (Pattern p : {Pattern::Text, Pattern::Gradient}) {
      const auto pic = makePicture(24, 16, p);
      seed(24, 16, 0, freerdpEncode(pic, 24, 16, PLANAR_FORMAT_HEADER_RLE | PLANAR_FORMAT_HEADER_NA, true));
      seed(24, 16, 3, freerdpEncode(pic, 24, 16, PLANAR_FORMAT_HEADER_RLE, false));
      for (unsigned cll : {1u, 3u})
        for (bool cs : {false, true})
          for (bool rle : {false, true}) {
            PlanarFlags f;
            f.cll = cll, f.cs = cs, f.rle = rle, f.na = cll == 3;
            seed(rle ? 24 : 9, rle ? 16 : 7, uint8_t(cll == 3 ? 2 : 1),
                 encodePlanar(pic, rle ? 24 : 9, rle ? 16 : 7, f));
          }
    }
    PlanarFlags raw;
    raw.na = true;
    seed(5, 3, 0, encodePlanar(makePicture(5, 3, Pattern::Noise), 5, 3, raw));
    seed(12, 1, 0, specStream(codectest::spec::planarRleExampleEncoded()));
    seed(6, 3, 1, specStream(codectest::spec::planarDeltaExampleEncoded()));
  }

  // The attack: a YCoCg + RLE stream for more pixels than the bitmap. FreeRDP 3.10.3
  // overflowed its RLE buffer; here the stream is refused and nothing outside the bitmap moves.
  void refusesAYCoCgStreamLargerThanItsBitmap() {
    PlanarFlags f;
    f.cll = 2, f.cs = true, f.rle = true, f.na = true;
    const auto big = encodePlanar(makePicture(640, 480, Pattern::Noise), 640, 480, f);
    Image img(64, 64);
    const auto r = PlanarDecoder::decode(big, img.pixels());
    QVERIFY(gc::front::isViolation(r));
    QVERIFY(img.guardIntact());
  }
};

QTEST_APPLESS_MAIN(tst_RdpCodecPlanar)
#include "tst_rdpcodecplanar.moc"
