// InterleavedDecoder (issue 24 part 2): legacy interleaved RLE bitmaps at 15, 16 and 24 bpp,
// from FreeRDP 3.10.3's encoder and from a generator here that uses every order
// (MS-RDPBCGR 2.2.9.1.1.3.1.2.4) the encoder does not, decoded like FreeRDP's decoder; one
// refusal per rule.
#include "rdp/codec/InterleavedDecoder.h"
#include "tests/auto/rdpcodec/CodecTestSupport.h"

#include <QTest>

#include <freerdp/codec/color.h>
#include <freerdp/codec/interleaved.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

using gc::codec::InterleavedDecoder;
using namespace codectest;

namespace {

// Orders by hand: each helper picks the shortest form for its run (regular/lite with the run
// in the header, with one extra byte, or mega-mega with 16 bits).
struct Orders {
  Bytes b;
  uint32_t bpp;
  explicit Orders(uint32_t depth) : bpp(depth) {}

  Orders& pixel(uint32_t v) {
    b.u8(v & 0xFF).u8((v >> 8) & 0xFF);
    if (bpp == 24)
      b.u8((v >> 16) & 0xFF);
    return *this;
  }
  // Regular orders: 5-bit run in the header, or 0 and one byte of run - 32.
  Orders& regular(uint8_t code, uint8_t mega, uint32_t n) {
    if (n >= 1 && n <= 31)
      b.u8((code << 5) | n);
    else if (n >= 32 && n < 32 + 256)
      b.u8(code << 5).u8(n - 32);
    else
      b.u8(mega).u16(n);
    return *this;
  }
  // Lite orders: 4-bit run, or 0 and one byte of run - 16.
  Orders& lite(uint8_t code, uint8_t mega, uint32_t n) {
    if (n >= 1 && n <= 15)
      b.u8((code << 4) | n);
    else if (n >= 16 && n < 16 + 256)
      b.u8(code << 4).u8(n - 16);
    else
      b.u8(mega).u16(n);
    return *this;
  }
  Orders& bgRun(uint32_t n) { return regular(0, 0xF0, n); }
  Orders& fgRun(uint32_t n) { return regular(1, 0xF1, n); }
  Orders& setFgRun(uint32_t n, uint32_t fg) { return lite(0xC, 0xF6, n).pixel(fg); }
  Orders& dithered(uint32_t n, uint32_t a, uint32_t c) { return lite(0xE, 0xF8, n).pixel(a).pixel(c); }
  Orders& colorRun(uint32_t n, uint32_t c) { return regular(3, 0xF3, n).pixel(c); }
  Orders& fgbg(uint32_t n, std::mt19937& rng, bool setFg = false, uint32_t fg = 0) {
    const uint8_t code = setFg ? 0xD : 0x2;
    const uint32_t headerMax = setFg ? 15 : 31;
    if (n % 8 == 0 && n / 8 >= 1 && n / 8 <= headerMax)
      b.u8(setFg ? (0xD0 | (n / 8)) : (0x40 | (n / 8)));
    else if (n >= 1 && n <= 256)
      b.u8(setFg ? 0xD0 : 0x40).u8(n - 1);
    else
      b.u8(setFg ? 0xF7 : 0xF2).u16(n);
    (void)code;
    if (setFg)
      pixel(fg);
    for (uint32_t i = 0; i < (n + 7) / 8; ++i)
      b.u8(uint8_t(rng()));
    return *this;
  }
  Orders& colorImage(const std::vector<uint32_t>& px) {
    regular(4, 0xF4, uint32_t(px.size()));
    for (uint32_t v : px)
      pixel(v);
    return *this;
  }
};

// A stream of random orders that fills w x h exactly: every kind of order, runs that cross
// scanlines, background runs back to back (the inserted foreground pixel), first-line forms.
std::vector<uint8_t> orderSoup(uint32_t w, uint32_t h, uint32_t bpp, uint32_t seed) {
  std::mt19937 rng(seed);
  Orders o(bpp);
  const uint32_t mask = bpp == 24 ? 0xFFFFFF : 0xFFFF;
  uint64_t left = uint64_t(w) * h;
  auto len = [&](uint64_t max) {
    const uint32_t pick = rng() % 4;
    const uint64_t n = pick == 0   ? 1 + rng() % 8
                       : pick == 1 ? 16 + rng() % 40
                       : pick == 2 ? 30 + rng() % 300
                                   : 300 + rng() % 800;
    return uint32_t(std::min<uint64_t>(n, max));
  };
  while (left > 0) {
    const uint32_t kind = rng() % 11;
    if (kind == 6 || kind == 7) { // specials write 8 / 1 pixels
      if (kind == 6 && left >= 8) {
        o.b.u8(rng() % 2 ? 0xF9 : 0xFA);
        left -= 8;
      } else {
        o.b.u8(rng() % 2 ? 0xFD : 0xFE);
        left -= 1;
      }
      continue;
    }
    if (kind == 3) { // dithered: 2 pixels a repeat
      if (left < 2)
        continue;
      const uint32_t n = std::max<uint32_t>(1, len(left / 2));
      o.dithered(n, rng() & mask, rng() & mask);
      left -= 2ull * n;
      continue;
    }
    const uint32_t n = std::max<uint32_t>(1, len(left));
    switch (kind) {
    case 0:
      o.bgRun(n);
      if (rng() % 2 && left > n) { // another background run right after it
        const uint32_t m = std::max<uint32_t>(1, len(left - n));
        o.bgRun(m);
        left -= m;
      }
      break;
    case 1:
      o.fgRun(n);
      break;
    case 2:
      o.setFgRun(n, rng() & mask);
      break;
    case 4:
      o.colorRun(n, rng() & mask);
      break;
    case 5:
      o.fgbg(n, rng);
      break;
    case 8:
      o.fgbg(n, rng, true, rng() & mask);
      break;
    default: {
      std::vector<uint32_t> px(std::min<uint32_t>(n, 100));
      for (auto& v : px)
        v = rng() & mask;
      o.colorImage(px);
      left -= px.size();
      continue;
    }
    }
    left -= n;
  }
  return o.b.v;
}

struct InterleavedCtx {
  BITMAP_INTERLEAVED_CONTEXT* p = bitmap_interleaved_context_new(FALSE);
  ~InterleavedCtx() { bitmap_interleaved_context_free(p); }
};

bool freerdpDecode(const std::vector<uint8_t>& s, uint32_t w, uint32_t h, uint32_t bpp,
                   std::vector<uint8_t>& dst) {
  InterleavedCtx ctx;
  dst.assign(size_t(w) * h * 4, 0x77);
  return interleaved_decompress(ctx.p, s.data(), UINT32(s.size()), w, h, bpp, dst.data(), PIXEL_FORMAT_BGRX32,
                                w * 4, 0, 0, w, h, nullptr);
}

QByteArray q(const std::vector<uint8_t>& v) {
  return toQByteArray(v);
}

// `stream` decoded by the console's decoder and by FreeRDP 3.10.3's: both accept it, the
// decoder writes nothing outside its pixels, and B, G, R agree. Returns the first problem.
QString compareWithFreeRdp(const std::vector<uint8_t>& stream, uint32_t w, uint32_t h, uint32_t bpp) {
  std::vector<uint8_t> theirs;
  if (!freerdpDecode(stream, w, h, bpp, theirs))
    return QStringLiteral("FreeRDP refused the stream");
  Image mine(w, h, 0x11);
  InterleavedDecoder decoder;
  const auto r = decoder.decode(stream, bpp, mine.pixels());
  if (gc::front::isViolation(r))
    return QString::fromStdString(ruleOf(r));
  if (!mine.guardIntact())
    return QStringLiteral("the decoder wrote outside its pixels");
  return firstDifference(mine.packed(), theirs, w, 3);
}

} // namespace

class tst_RdpCodecInterleaved : public QObject {
  Q_OBJECT
private slots:
  void decodesFreeRdpEncodedBitmapsLikeFreeRdp_data() {
    QTest::addColumn<uint>("w");
    QTest::addColumn<uint>("h");
    QTest::addColumn<uint>("bpp");
    QTest::addColumn<int>("pattern");
    for (uint bpp : {15u, 16u, 24u})
      for (const QSize& s : {QSize(4, 1), QSize(8, 8), QSize(16, 64), QSize(64, 64), QSize(60, 13)})
        for (Pattern p : {Pattern::Flat, Pattern::Gradient, Pattern::Noise, Pattern::Text, Pattern::Stripes})
          QTest::addRow("%ubpp-%dx%d-%s", bpp, s.width(), s.height(), patternName(p))
              << uint(s.width()) << uint(s.height()) << bpp << int(p);
  }
  void decodesFreeRdpEncodedBitmapsLikeFreeRdp() {
    QFETCH(uint, w);
    QFETCH(uint, h);
    QFETCH(uint, bpp);
    QFETCH(int, pattern);
    const auto picture = makePicture(w, h, Pattern(pattern), w * h + bpp);
    InterleavedCtx enc;
    std::vector<uint8_t> stream(64 * 64 * 4 + 1024);
    UINT32 size = UINT32(stream.size());
    QVERIFY(interleaved_compress(enc.p, stream.data(), &size, w, h, picture.data(), PIXEL_FORMAT_BGRX32,
                                 w * 4, 0, 0, nullptr, bpp));
    stream.resize(size);
    const QString problem = compareWithFreeRdp(stream, w, h, bpp);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
  }

  void decodesEveryOrderLikeFreeRdp_data() {
    QTest::addColumn<uint>("w");
    QTest::addColumn<uint>("h");
    QTest::addColumn<uint>("bpp");
    QTest::addColumn<uint>("seed");
    for (uint bpp : {15u, 16u, 24u})
      for (const QSize& s :
           {QSize(1, 1), QSize(3, 7), QSize(8, 2), QSize(64, 64), QSize(333, 47), QSize(1024, 16)})
        for (uint seed = 1; seed <= 4; ++seed)
          QTest::addRow("%ubpp-%dx%d-%u", bpp, s.width(), s.height(), seed)
              << uint(s.width()) << uint(s.height()) << bpp << seed;
  }
  void decodesEveryOrderLikeFreeRdp() {
    QFETCH(uint, w);
    QFETCH(uint, h);
    QFETCH(uint, bpp);
    QFETCH(uint, seed);
    const auto stream = orderSoup(w, h, bpp, seed * 7919 + w);
    const QString problem = compareWithFreeRdp(stream, w, h, bpp);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
  }

  // Seeds for fuzz_interleaved: width - 1, height - 1, depth index (15, 16, 24), stream.
  void writesFuzzSeeds() {
    QString dir;
    if (!seedDirectory(dir))
      QSKIP("GC_CODEC_SEED_DIR not set");
    int n = 0;
    const uint32_t depths[3] = {15, 16, 24};
    for (uint8_t d = 0; d < 3; ++d) {
      const uint32_t bpp = depths[d];
      auto seed = [&](uint32_t w, uint32_t h, const std::vector<uint8_t>& stream) {
        Bytes b;
        b.u8(w - 1).u8(h - 1).u8(d).bytes(stream);
        QVERIFY(writeSeed(dir, "interleaved", QStringLiteral("seed-%1").arg(n++, 2, 10, QLatin1Char('0')),
                          b.span()));
      };
      InterleavedCtx enc;
      std::vector<uint8_t> stream(64 * 64 * 4 + 1024);
      UINT32 size = UINT32(stream.size());
      const auto pic = makePicture(32, 16, Pattern::Text);
      QVERIFY(interleaved_compress(enc.p, stream.data(), &size, 32, 16, pic.data(), PIXEL_FORMAT_BGRX32,
                                   32 * 4, 0, 0, nullptr, bpp));
      stream.resize(size);
      seed(32, 16, stream);
      seed(13, 9, orderSoup(13, 9, bpp, 11 + d));
      seed(40, 3, orderSoup(40, 3, bpp, 23 + d));
    }
  }

  void refusesMalformedStreams_data() {
    QTest::addColumn<QByteArray>("stream");
    QTest::addColumn<uint>("w");
    QTest::addColumn<uint>("h");
    QTest::addColumn<uint>("bpp");
    QTest::addColumn<QString>("rule");
    Orders fill(16);
    fill.colorRun(16, 0x1234);
    QTest::newRow("no bitmap") << q(fill.b.v) << 0u << 4u << 16u << "bitmap size out of range";
    QTest::newRow("8 bpp") << q(fill.b.v) << 4u << 4u << 8u << "colour depth not 15, 16 or 24";
    QTest::newRow("32 bpp") << q(fill.b.v) << 4u << 4u << 32u << "colour depth not 15, 16 or 24";
    QTest::newRow("mega run length cut") << QByteArray("\xF3\x10", 2) << 4u << 4u << 16u << "order cut short";
    QTest::newRow("extended run length cut") << QByteArray("\x60", 1) << 4u << 4u << 16u << "order cut short";
    QTest::newRow("colour run without its colour")
        << QByteArray("\x70\x34", 2) << 4u << 4u << 16u << "order cut short";
    QTest::newRow("set-fg run without its colour")
        << QByteArray("\xC4\x11\x22", 3) << 4u << 4u << 24u << "order cut short";
    QTest::newRow("dithered without its second colour")
        << QByteArray("\xE2\x01\x02\x03", 4) << 4u << 4u << 16u << "order cut short";
    QTest::newRow("fgbg without its masks")
        << QByteArray("\x42\xFF", 2) << 4u << 4u << 16u << "order cut short";
    QTest::newRow("colour image without its pixels")
        << QByteArray("\x83\x01\x02\x03\x04", 5) << 4u << 4u << 16u << "order cut short";
    Orders zero(16);
    zero.bgRun(3);
    zero.b.u8(0xF0).u16(0);
    QTest::newRow("empty background run after one")
        << q(zero.b.v) << 4u << 4u << 16u << "empty background run after a background run";
    for (auto [name, stream] : std::initializer_list<std::pair<const char*, QByteArray>>{
             {"background run", QByteArray("\x11", 1)},
             {"foreground run", QByteArray("\x31", 1)},
             {"colour run", QByteArray("\xF3\xFF\xFF\x01\x02", 5)},
             {"dithered run", QByteArray("\xE9\x01\x02\x03\x04", 5)},
             {"fgbg image", QByteArray("\x43\x00\x00\x00", 4)},
             {"colour image", QByteArray("\x91", 1) + QByteArray(34, '\x01')},
             {"special fgbg", QByteArray("\x8C", 1) + QByteArray(24, '\x01') + QByteArray("\xF9", 1)},
             {"white pixel", QByteArray("\x70\x11\x11\xFD", 4)}})
      QTest::addRow("%s past the bitmap", name)
          << stream << 4u << 4u << 16u << "order writes past the bitmap";
    for (const char* code : {"\xA0", "\xB5", "\xF5", "\xFB", "\xFC", "\xFF"})
      QTest::addRow("order 0x%02x", uint8_t(code[0]))
          << QByteArray(code, 1) << 4u << 4u << 16u << "unknown order";
    QTest::newRow("empty stream") << QByteArray() << 4u << 4u << 16u
                                  << "stream ends before the bitmap is complete";
    QTest::newRow("short stream") << QByteArray("\x6F\x34\x12", 3) << 4u << 4u << 16u
                                  << "stream ends before the bitmap is complete";
  }
  void refusesMalformedStreams() {
    QFETCH(QByteArray, stream);
    QFETCH(uint, w);
    QFETCH(uint, h);
    QFETCH(uint, bpp);
    QFETCH(QString, rule);
    Image img(std::max(w, 1u), std::max(h, 1u));
    gc::codec::Pixels px = img.pixels();
    px.width = w;
    InterleavedDecoder decoder;
    const auto r = decoder.decode(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(stream.constData()), size_t(stream.size())),
        bpp, px);
    QVERIFY(gc::front::isViolation(r));
    const auto& v = std::get<gc::front::Violation>(r);
    QCOMPARE(QString::fromLatin1(v.pdu.data(), qsizetype(v.pdu.size())), QStringLiteral("codec.Interleaved"));
    QCOMPARE(QString::fromStdString(ruleOf(r)), rule);
    QVERIFY(img.guardIntact());
  }
};

QTEST_APPLESS_MAIN(tst_RdpCodecInterleaved)
#include "tst_rdpcodecinterleaved.moc"
