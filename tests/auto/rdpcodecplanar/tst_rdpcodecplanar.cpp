// PlanarDecoder (issue 24 part 2): the console's own planar decoder against FreeRDP 3.10.3's on
// valid streams (FreeRDP's encoder for RGB, a spec encoder here for YCoCg, subsampling and
// alpha), and one refusal per rule.
#include "rdp/codec/PlanarDecoder.h"
#include "tests/auto/rdpcodec/CodecTestSupport.h"

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

// ---- a spec encoder (MS-RDPEGDI 2.2.2.5.1) for what FreeRDP's encoder does not produce ----

struct PlanarFlags {
  unsigned cll = 0;
  bool cs = false;
  bool rle = false;
  bool na = false;
  bool bottomUp = false;
  bool pad = true; // raw streams: the pad byte the spec asks for
};

// One scanline of RLE symbols (values on the first scanline, encoded deltas after).
void rleRow(const uint8_t* sym, uint32_t n, std::vector<uint8_t>& out) {
  std::vector<uint8_t> raw;
  uint8_t last = 0;
  auto flush = [&](uint32_t run) {
    out.push_back(uint8_t((raw.size() << 4) | run));
    out.insert(out.end(), raw.begin(), raw.end());
    raw.clear();
  };
  auto pushRaw = [&](uint8_t s) {
    if (raw.size() == 15)
      flush(0);
    raw.push_back(s);
    last = s;
  };
  uint32_t i = 0;
  while (i < n) {
    uint32_t k = 1;
    while (i + k < n && sym[i + k] == sym[i])
      ++k;
    if (k < 3) {
      pushRaw(sym[i++]);
      continue;
    }
    if (!(raw.empty() && sym[i] == last)) {
      pushRaw(sym[i++]);
      --k;
    }
    if (k < 3) {
      while (k--)
        pushRaw(sym[i++]);
      continue;
    }
    const uint32_t r = std::min<uint32_t>(k, 15);
    flush(r);
    i += r;
    k -= r;
    while (k >= 16) {
      const uint32_t m = std::min<uint32_t>(k, 47);
      out.push_back(uint8_t(m >= 32 ? ((m - 32) << 4) | 2 : ((m - 16) << 4) | 1));
      i += m;
      k -= m;
    }
    if (k >= 3) {
      out.push_back(uint8_t(k));
      i += k;
    }
  }
  if (!raw.empty())
    flush(0);
}

std::vector<uint8_t> rlePlane(const std::vector<uint8_t>& plane, uint32_t w, uint32_t h) {
  std::vector<uint8_t> out;
  std::vector<uint8_t> sym(w);
  for (uint32_t y = 0; y < h; ++y) {
    for (uint32_t x = 0; x < w; ++x) {
      const uint8_t cur = plane[size_t(y) * w + x];
      if (y == 0) {
        sym[x] = cur;
      } else {
        const int d = int8_t(uint8_t(cur - plane[size_t(y - 1) * w + x]));
        sym[x] = uint8_t(d >= 0 ? 2 * d : 2 * -d - 1);
      }
    }
    rleRow(sym.data(), w, out);
  }
  return out;
}

std::vector<uint8_t> encodePlanar(const std::vector<uint8_t>& bgrx, uint32_t w, uint32_t h, PlanarFlags f) {
  const uint32_t subW = f.cs ? (w + 1) / 2 : w;
  const uint32_t subH = f.cs ? (h + 1) / 2 : h;
  std::vector<uint8_t> a(size_t(w) * h), p0(size_t(w) * h), p1(size_t(subW) * subH), p2(size_t(subW) * subH);
  const int shift = f.cll > 0 ? int(f.cll) - 1 : 0;
  for (uint32_t r = 0; r < h; ++r)
    for (uint32_t x = 0; x < w; ++x) {
      const uint32_t y = f.bottomUp ? h - 1 - r : r;
      const uint8_t* px = &bgrx[(size_t(y) * w + x) * 4];
      const int B = px[0], G = px[1], R = px[2];
      a[size_t(r) * w + x] = px[3];
      const bool chromaSample = !f.cs || (x % 2 == 0 && r % 2 == 0);
      const size_t c = f.cs ? size_t(r / 2) * subW + x / 2 : size_t(r) * w + x;
      if (f.cll == 0) {
        p0[size_t(r) * w + x] = uint8_t(R);
        p1[c] = uint8_t(G);
        p2[c] = uint8_t(B);
      } else {
        const int Y = (R + 2 * G + B) / 4;
        p0[size_t(r) * w + x] = uint8_t(Y);
        if (chromaSample) {
          p1[c] = uint8_t(((B - R) / 2) >> shift);
          p2[c] = uint8_t((G - Y) >> shift);
        }
      }
    }
  std::vector<uint8_t> s;
  s.push_back(uint8_t(f.cll | (f.cs ? 0x08 : 0) | (f.rle ? 0x10 : 0) | (f.na ? 0x20 : 0)));
  auto add = [&](const std::vector<uint8_t>& p, uint32_t pw, uint32_t ph) {
    const std::vector<uint8_t> e = f.rle ? rlePlane(p, pw, ph) : p;
    s.insert(s.end(), e.begin(), e.end());
  };
  if (!f.na)
    add(a, w, h);
  add(p0, w, h);
  add(p1, subW, subH);
  add(p2, subW, subH);
  if (!f.rle && f.pad)
    s.push_back(0);
  return s;
}

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
    for (bool alpha : {false, true}) {
      const Decoded mine = ours(stream, w, h,
                                {bottomUp ? PlanarDecoder::Rows::BottomUp : PlanarDecoder::Rows::TopDown,
                                 alpha ? PlanarDecoder::Alpha::FromStream : PlanarDecoder::Alpha::Opaque});
      QVERIFY(mine.guardIntact);
      std::vector<uint8_t> theirs;
      if (!freerdpDecode(stream, w, h, bottomUp, alpha ? PIXEL_FORMAT_BGRA32 : PIXEL_FORMAT_BGRX32, theirs)) {
        // 3.10.3's RLE encoder writes truncated or raw-sized planes for pictures RLE does not
        // shrink, which its own decoder refuses: refused here too.
        QVERIFY2(!mine.ok, "FreeRDP refuses its own stream, the console's decoder accepted it");
        continue;
      }
      QVERIFY2(mine.ok, mine.rule.c_str());
      const QString diff = firstDifference(mine.pixels, theirs, w);
      QVERIFY2(diff.isEmpty(), qPrintable(diff));
      // RGB planes are lossless: the picture comes back (its alpha too, when asked for).
      const QString lossless =
          firstDifference(mine.pixels, picture, w, alpha && !(flags & PLANAR_FORMAT_HEADER_NA) ? 4 : 3);
      QVERIFY2(lossless.isEmpty(), qPrintable(lossless));
    }
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
    for (bool alpha : {false, true}) {
      const Decoded mine = ours(stream, w, h,
                                {bottomUp ? PlanarDecoder::Rows::BottomUp : PlanarDecoder::Rows::TopDown,
                                 alpha ? PlanarDecoder::Alpha::FromStream : PlanarDecoder::Alpha::Opaque});
      QVERIFY(mine.guardIntact);
      std::vector<uint8_t> theirs;
      if (!freerdpDecode(stream, w, h, bottomUp, alpha ? PIXEL_FORMAT_BGRA32 : PIXEL_FORMAT_BGRX32, theirs)) {
        // 3.10.3's RLE encoder writes truncated or raw-sized planes for pictures RLE does not
        // shrink, which its own decoder refuses: refused here too.
        QVERIFY2(!mine.ok, "FreeRDP refuses its own stream, the console's decoder accepted it");
        continue;
      }
      QVERIFY2(mine.ok, mine.rule.c_str());
      const QString diff = firstDifference(mine.pixels, theirs, w);
      QVERIFY2(diff.isEmpty(), qPrintable(diff));
    }
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
