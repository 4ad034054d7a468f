// ProgressiveDecoder: the console's own RemoteFX Progressive decoder, held to FreeRDP 3.10's C
// decoder (PureSoftPrimitives.cpp forces its C primitives) on the same streams, pixel for
// pixel on B, G and R: FreeRDP's encoder's SIMPLE tiles (classic DWT), the test guest's
// encoder's first passes and both upgrades (reduce-extrapolate DWT, SRL and RAW), tile
// differences; and its refusals, each before any state changes.
#include "ProgressiveEncoder.h"
#include "rdp/codec/ProgressiveDecoder.h"
#include "rdp/codec/RfxColor.h"
#include "rdp/codec/RfxDwt.h"
#include "tests/auto/rdpcodecprogressive/ProgressiveStreams.h"

#include <QTest>

#include <freerdp/codec/color.h>
#include <freerdp/codec/progressive.h>
#include <freerdp/codec/region.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <random>
#include <vector>

using gc::codec::ProgressiveDecoder;
using gc::codec::RfxColor;
using gc::codec::RfxDwt;
using namespace progtest;
using codectest::Image;
using codectest::makePicture;
using codectest::Pattern;

namespace {

constexpr uint16_t kSurface = 7;

gc::front::Limits limits1080() {
  gc::front::Limits l;
  l.desktopWidth = 1920;
  l.desktopHeight = 1080;
  return l;
}

std::string ruleOf(const gc::front::Checked<gc::front::Ok>& r) {
  if (const auto* v = std::get_if<gc::front::Violation>(&r))
    return std::string(v->rule);
  return {};
}

std::vector<uint8_t> encode(const std::vector<uint8_t>& bgrx, uint32_t w, uint32_t h,
                            const std::vector<RECTANGLE_16>& rects = {}) {
  PROGRESSIVE_CONTEXT* enc = progressive_context_new(TRUE);
  REGION16 region;
  region16_init(&region);
  for (const RECTANGLE_16& r : rects)
    region16_union_rect(&region, &region, &r);
  BYTE* out = nullptr;
  UINT32 size = 0;
  const int rc = progressive_compress(enc, bgrx.data(), UINT32(bgrx.size()), PIXEL_FORMAT_BGRX32, w, h, w * 4,
                                      rects.empty() ? nullptr : &region, &out, &size);
  std::vector<uint8_t> v;
  if (rc > 0 && out)
    v.assign(out, out + size);
  region16_uninit(&region);
  progressive_context_free(enc);
  return v;
}

// Both decoders on one surface each, fed the same streams.
struct Pair {
  PROGRESSIVE_CONTEXT* p = progressive_context_new(FALSE);
  Image theirs;
  Image ours;
  ProgressiveDecoder decoder;
  uint32_t frame = 0;
  std::vector<ProgressiveDecoder::Rect> touched;

  Pair(uint32_t w, uint32_t h, const gc::front::Limits& limits = limits1080())
      : theirs(w, h, 0x3C), ours(w, h, 0x3C), decoder(limits) {
    progressive_create_surface_context(p, kSurface, w, h);
    (void)decoder.createSurface(kSurface, w, h);
  }
  ~Pair() { progressive_context_free(p); }

  INT32 freerdp(std::span<const uint8_t> s) {
    return progressive_decompress(p, s.data(), UINT32(s.size()), theirs.row(0), PIXEL_FORMAT_BGRX32,
                                  UINT32(theirs.stride), 0, 0, nullptr, kSurface, ++frame);
  }
  gc::front::Checked<gc::front::Ok> mine(std::span<const uint8_t> s) {
    return decoder.decode(kSurface, s, ours.pixels(), false, touched);
  }
  // Both decode; empty when both accepted and the pixels are equal.
  QString both(std::span<const uint8_t> s) {
    const INT32 rc = freerdp(s);
    const auto res = mine(s);
    if (rc < 0)
      return QStringLiteral("FreeRDP refused (%1)").arg(rc);
    if (gc::front::isViolation(res))
      return QStringLiteral("ours refused: %1").arg(ruleOf(res).c_str());
    return differences();
  }
  QString differences() const {
    if (!ours.guardIntact())
      return QStringLiteral("wrote outside the surface");
    size_t count = 0;
    QString first;
    for (uint32_t y = 0; y < ours.height; ++y)
      for (uint32_t x = 0; x < ours.width; ++x)
        for (int c = 0; c < 3; ++c)
          if (ours.at(x, y)[c] != theirs.at(x, y)[c]) {
            if (count++ == 0)
              first = QStringLiteral("(%1,%2) channel %3: ours %4, FreeRDP %5")
                          .arg(x)
                          .arg(y)
                          .arg(c)
                          .arg(ours.at(x, y)[c])
                          .arg(theirs.at(x, y)[c]);
          }
    return count ? QStringLiteral("%1 values differ, first %2").arg(count).arg(first) : QString();
  }
};

// The test guest's encoder on a whole picture: first passes, then two upgrades, each a stream.
struct GuestPasses {
  std::vector<std::vector<uint8_t>> streams;
};
GuestPasses guestPasses(gc::testguest::ProgressiveEncoder& enc, const std::vector<uint8_t>& picture, int w,
                        int h, uint32_t& frame) {
  GuestPasses g;
  const int cols = (w + 63) / 64, rows = (h + 63) / 64;
  std::vector<std::vector<uint8_t>> tiles;
  for (int ty = 0; ty < rows; ++ty)
    for (int tx = 0; tx < cols; ++tx)
      tiles.push_back(enc.firstPass(tx, ty, picture.data(), w * 4));
  g.streams.push_back(enc.stream(++frame, {{0, 0, w, h}}, tiles));
  for (int pass = 0; pass < 2; ++pass) {
    tiles.clear();
    for (int ty = 0; ty < rows; ++ty)
      for (int tx = 0; tx < cols; ++tx)
        tiles.push_back(enc.upgrade(tx, ty));
    g.streams.push_back(enc.stream(++frame, {{0, 0, w, h}}, tiles));
  }
  return g;
}

// An upgrade of (x, y) from quality 0 (progressive shift `from` on every band) to full quality.
Tile upgradeTile(uint16_t x, uint16_t y, unsigned bits, uint8_t quality = 0xFF) {
  Tile t;
  t.type = 0xCCC7;
  t.x = x;
  t.y = y;
  t.quality = quality;
  for (int c = 0; c < 3; ++c) {
    t.data[c].assign(16, 0x00);
    t.raw[c].assign((81 * bits + 7) / 8, 0xA5);
  }
  return t;
}

// FreeRDP's encoder's SIMPLE tiles of a flat picture, re-sent as FIRST passes at quality 0
// (progressive shift `prog` on every band) with the reduce-extrapolate flag upgrades use.
Region qualityZero(uint32_t w, uint32_t h, uint8_t prog) {
  Region r;
  parse(encode(makePicture(w, h, Pattern::Flat, 1), w, h), r);
  r.flags = 0x01;
  r.progQuants = {ProgQuant{flat(prog), flat(prog), flat(prog)}};
  for (Tile& t : r.tiles)
    t.type = 0xCCC6, t.quality = 0;
  return r;
}

// Gives every upgrade tile of `up` the SRL length (of zero bytes) at which its stream ends
// where its bits do, after `first`; false when there is none.
bool fitSrl(const Region& first, Region& up, uint32_t w, uint32_t h) {
  for (size_t srl = 1; srl <= 64; ++srl) {
    for (Tile& t : up.tiles)
      for (int c = 0; c < 3; ++c)
        t.data[c].assign(srl, 0x00);
    ProgressiveDecoder probe(limits1080());
    Image out(w, h);
    (void)probe.createSurface(1, out.width, out.height);
    std::vector<ProgressiveDecoder::Rect> touched;
    if (gc::front::isViolation(probe.decode(1, frame({first}).v, out.pixels(), false, touched)))
      return false;
    if (!gc::front::isViolation(probe.decode(1, frame({up}).v, out.pixels(), false, touched)))
      return true;
  }
  return false;
}

// Kinds of 16-bit input the vector paths must treat as the scalar one does: the whole range,
// the extremes alone and side by side (where sums and halvings overflow if widened wrongly),
// and the small values real tiles hold.
enum class Values { Uniform, Minimum, Maximum, Alternating, Extremes, Small };
constexpr Values kAllValues[] = {Values::Uniform,     Values::Minimum,  Values::Maximum,
                                 Values::Alternating, Values::Extremes, Values::Small};

void fill(int16_t* v, size_t n, Values kind, std::mt19937& rng) {
  std::uniform_int_distribution<int> any(INT16_MIN, INT16_MAX);
  std::uniform_int_distribution<int> small(-300, 300);
  const int16_t extremes[] = {INT16_MIN, INT16_MAX, -1, 0, 1, INT16_MIN + 1, INT16_MAX - 1};
  std::uniform_int_distribution<size_t> pick(0, std::size(extremes) - 1);
  for (size_t i = 0; i < n; ++i) {
    switch (kind) {
    case Values::Uniform:
      v[i] = int16_t(any(rng));
      break;
    case Values::Minimum:
      v[i] = INT16_MIN;
      break;
    case Values::Maximum:
      v[i] = INT16_MAX;
      break;
    case Values::Alternating:
      v[i] = (i % 2) ? INT16_MAX : INT16_MIN;
      break;
    case Values::Extremes:
      v[i] = extremes[pick(rng)];
      break;
    case Values::Small:
      v[i] = int16_t(small(rng));
      break;
    }
  }
}

} // namespace

class tst_RdpCodecProgressiveDecoder : public QObject {
  Q_OBJECT
private slots:
  void firstPassOfFreeRdpsEncoderEqualsFreeRdp_data() {
    QTest::addColumn<uint>("w");
    QTest::addColumn<uint>("h");
    QTest::addColumn<int>("pattern");
    QTest::addColumn<bool>("rects");
    for (QSize s : {QSize(64, 64), QSize(100, 37), QSize(640, 480)})
      for (Pattern p : {Pattern::Flat, Pattern::Gradient, Pattern::Noise, Pattern::Text, Pattern::Stripes})
        for (bool rects : {false, true})
          QTest::addRow("%dx%d-%s-%s", s.width(), s.height(), codectest::patternName(p),
                        rects ? "two-rects" : "whole")
              << uint(s.width()) << uint(s.height()) << int(p) << rects;
  }
  void firstPassOfFreeRdpsEncoderEqualsFreeRdp() {
    QFETCH(uint, w);
    QFETCH(uint, h);
    QFETCH(int, pattern);
    QFETCH(bool, rects);
    const auto picture = makePicture(w, h, Pattern(pattern), w * 3 + h);
    std::vector<RECTANGLE_16> r16;
    if (rects)
      r16 = {{3, 5, uint16_t(3 + w / 3), uint16_t(5 + h / 2)},
             {uint16_t(w / 2), uint16_t(h / 3), uint16_t(w), uint16_t(h)}};
    const auto stream = encode(picture, w, h, r16);
    QVERIFY(!stream.empty());
    Pair pair(w, h);
    const QString diff = pair.both(stream);
    QVERIFY2(diff.isEmpty(), qPrintable(diff));
    QVERIFY(!pair.touched.empty());
    // A second picture over the first, as the same tiles again.
    const auto second = encode(makePicture(w, h, Pattern::Gradient, 9), w, h, r16);
    const QString diff2 = pair.both(second);
    QVERIFY2(diff2.isEmpty(), qPrintable(diff2));
  }

  void guestUpgradePassesEqualFreeRdp_data() {
    QTest::addColumn<int>("w");
    QTest::addColumn<int>("h");
    QTest::addColumn<int>("pattern");
    for (QSize s : {QSize(256, 128), QSize(200, 100)})
      for (Pattern p : {Pattern::Gradient, Pattern::Noise, Pattern::Text})
        QTest::addRow("%dx%d-%s", s.width(), s.height(), codectest::patternName(p))
            << s.width() << s.height() << int(p);
  }
  void guestUpgradePassesEqualFreeRdp() {
    QFETCH(int, w);
    QFETCH(int, h);
    QFETCH(int, pattern);
    gc::testguest::ProgressiveEncoder enc;
    enc.reset(w, h);
    Pair pair{uint32_t(w), uint32_t(h)};
    uint32_t frame = 0;
    // A picture to full quality, then another over it (sub-band diffing: difference tiles).
    for (uint32_t seed : {1u, 2u}) {
      const auto picture = makePicture(uint32_t(w), uint32_t(h), Pattern(pattern), seed);
      const GuestPasses g = guestPasses(enc, picture, w, h, frame);
      for (size_t i = 0; i < g.streams.size(); ++i) {
        const QString diff = pair.both(g.streams[i]);
        QVERIFY2(diff.isEmpty(),
                 qPrintable(QStringLiteral("picture %1 pass %2: %3").arg(seed).arg(i).arg(diff)));
      }
    }
    QCOMPARE(pair.decoder.tiles(), size_t(((w + 63) / 64) * ((h + 63) / 64)));
  }

  void tileDifferenceAddsToTheTileEqualToFreeRdp() {
    const auto picture = makePicture(128, 64, Pattern::Text, 3);
    Region r;
    QVERIFY(parse(encode(picture, 128, 64), r));
    Pair pair(128, 64);
    QVERIFY2(pair.both(frame({r}).v).isEmpty(), "first");
    Region diff = r;
    for (Tile& t : diff.tiles)
      t.flags = 0x01;
    const QString d = pair.both(frame({diff}).v);
    QVERIFY2(d.isEmpty(), qPrintable(d));
    // The sum differs from the tile alone: the flag was used.
    Pair alone(128, 64);
    QVERIFY(alone.both(frame({r}).v).isEmpty());
    QVERIFY(std::memcmp(alone.ours.storage.data(), pair.ours.storage.data(), pair.ours.storage.size()) != 0);
  }

  void keepsATileOnlyReplacedAsItsBytesAndBuildsOnItAsFreeRdpDoes() {
    // freerdp-shadow-cli3 sends SIMPLE tiles only: no pass ever builds on one, so a tile keeps
    // the bytes of its last pass, not 36 KiB of coefficients and signs.
    const uint32_t w = 640, h = 448;
    const size_t tiles = (w / 64) * (h / 64);
    Region r;
    QVERIFY(parse(encode(makePicture(w, h, Pattern::Text, 5), w, h), r));
    Pair pair(w, h);
    QVERIFY2(pair.both(frame({r}).v).isEmpty(), "first");
    QCOMPARE(pair.decoder.tiles(), tiles);
    const size_t replaced = pair.decoder.bytesHeld();
    QVERIFY2(replaced < tiles * ProgressiveDecoder::kTileBytes / 4, qPrintable(QString::number(replaced)));

    // A difference builds on every tile: each gets its coefficients from those bytes.
    Region diff = r;
    for (Tile& t : diff.tiles)
      t.flags = 0x01;
    QString d = pair.both(frame({diff}).v);
    QVERIFY2(d.isEmpty(), qPrintable(d));
    const size_t built = pair.decoder.bytesHeld();
    QVERIFY(built >= tiles * ProgressiveDecoder::kTileBytes);

    // Replaced again (another picture), then built on again: drawn from the new bytes, the
    // coefficients' block kept for the next pass that builds on the tile.
    Region other;
    QVERIFY(parse(encode(makePicture(w, h, Pattern::Gradient, 8), w, h), other));
    d = pair.both(frame({other}).v);
    QVERIFY2(d.isEmpty(), qPrintable(d));
    for (Tile& t : other.tiles)
      t.flags = 0x01;
    d = pair.both(frame({other}).v);
    QVERIFY2(d.isEmpty(), qPrintable(d));
    QVERIFY(pair.decoder.bytesHeld() >= tiles * ProgressiveDecoder::kTileBytes);
    QVERIFY(pair.decoder.bytesHeld() < built + tiles * ProgressiveDecoder::kTileBytes / 4);
  }

  void handBuiltFirstAndUpgradeOfFreeRdpTilesEqualFreeRdp_data() {
    QTest::addColumn<int>("prog");
    QTest::newRow("2 bits") << 2;
    QTest::newRow("5 bits") << 5;
  }
  void handBuiltFirstAndUpgradeOfFreeRdpTilesEqualFreeRdp() {
    QFETCH(int, prog);
    // A flat picture: every coefficient outside LL3 is zero, so the upgrade's RAW data is
    // LL3's alone and its SRL data a run of zeros whose length is searched for.
    const Region r = qualityZero(192, 64, uint8_t(prog));
    Pair pair(192, 64);
    QVERIFY2(pair.both(frame({r}).v).isEmpty(), "first pass");
    Region up = r;
    for (Tile& t : up.tiles)
      t = upgradeTile(t.x, t.y, unsigned(prog));
    QVERIFY(fitSrl(r, up, 192, 64));
    const QString d = pair.both(frame({up}).v);
    QVERIFY2(d.isEmpty(), qPrintable(d));
  }

  void refusesBeforeTouchingState_data() {
    QTest::addColumn<int>("kind");
    QTest::addColumn<QString>("rule");
    QTest::newRow("upgrade of a tile never decoded") << 0 << "upgrade of a tile never decoded";
    QTest::newRow("tile difference on a tile never decoded")
        << 1 << "tile difference on a tile never decoded";
    QTest::newRow("quantization index out of range") << 2 << "quantization index out of range";
    QTest::newRow("quality index out of range") << 3 << "quality index out of range";
    QTest::newRow("upgrade raises a bit position") << 4 << "upgrade raises a bit position";
    QTest::newRow("raw length the bit planes cannot take")
        << 5 << "raw length outside what the upgrade's bit planes take";
    QTest::newRow("tile outside the surface") << 6 << "tile outside the surface";
  }
  void refusesBeforeTouchingState() {
    QFETCH(int, kind);
    QFETCH(QString, rule);
    const Region r = qualityZero(128, 64, 3);
    // Tile (0,0) decoded at quality 0 (3 bits short), tile (1,0) never.
    Region firstOnly = r;
    firstOnly.tiles.resize(1);
    firstOnly.rects = {{0, 0, 128, 64}};
    Pair pair(128, 64);
    QVERIFY(pair.both(frame({firstOnly}).v).isEmpty());
    const size_t tilesBefore = pair.decoder.tiles();

    Region bad = firstOnly;
    switch (kind) {
    case 0:
      bad.tiles = {upgradeTile(1, 0, 3)};
      break;
    case 1:
      bad.tiles = {r.tiles[1]};
      bad.tiles[0].flags = 0x01;
      break;
    case 2:
      bad.tiles[0].q[1] = 1;
      break;
    case 3:
      bad.tiles[0].quality = 1;
      break;
    case 4: { // quality 0 at 3 bits, then an "upgrade" to a table 5 bits short
      bad.progQuants.push_back(ProgQuant{flat(5), flat(5), flat(5)});
      bad.tiles = {upgradeTile(0, 0, 0, 1)};
      break;
    }
    case 5:
      bad.tiles = {upgradeTile(0, 0, 3)};
      for (int c = 0; c < 3; ++c)
        bad.tiles[0].raw[c].assign(2, 0x00);
      break;
    case 6:
      bad.tiles[0].x = 2;
      break;
    }
    // A stream whose first region is fine and whose second breaks: nothing of it may land.
    Region fine = firstOnly;
    fine.tiles = {r.tiles[0]};
    const Image before = pair.ours;
    const auto res = pair.mine(frame({fine, bad}).v);
    QVERIFY(gc::front::isViolation(res));
    QCOMPARE(QString::fromStdString(ruleOf(res)), rule);
    QCOMPARE(std::get<gc::front::Violation>(res).kind, gc::front::Violation::Kind::Protocol);
    QVERIFY(std::memcmp(before.storage.data(), pair.ours.storage.data(), before.storage.size()) == 0);
    QCOMPARE(pair.decoder.tiles(), tilesBefore);
    // The state is as before: a real upgrade decodes as FreeRDP's, which never saw the refusal.
    Region up = firstOnly;
    up.tiles = {upgradeTile(0, 0, 3)};
    QVERIFY(fitSrl(firstOnly, up, 128, 64));
    const QString d = pair.both(frame({up}).v);
    QVERIFY2(d.isEmpty(), qPrintable(d));
  }

  void keepsStateOnlyForDecodedTilesAndWithinTheBudget() {
    const auto picture = makePicture(1920, 1080, Pattern::Text, 2);
    const auto part = encode(picture, 1920, 1080, {{0, 0, 128, 64}});
    ProgressiveDecoder d(limits1080());
    QVERIFY(!gc::front::isViolation(d.createSurface(1, 1920, 1080)));
    QCOMPARE(d.tiles(), size_t(0));
    Image out(1920, 1080);
    std::vector<ProgressiveDecoder::Rect> touched;
    QVERIFY(!gc::front::isViolation(d.decode(1, part, out.pixels(), false, touched)));
    QCOMPARE(d.tiles(), size_t(2));
    d.deleteSurface(1);
    QCOMPARE(d.tiles(), size_t(0));

    // A desktop of 256x64: the budget (4 x the desktop's pixels) holds fewer tiles than a
    // surface of the largest side could name.
    gc::front::Limits small;
    small.desktopWidth = 256;
    small.desktopHeight = 64;
    ProgressiveDecoder tight(small);
    QVERIFY(!gc::front::isViolation(tight.createSurface(2, 1024, 64)));
    Image wide(1024, 64);
    const auto all = encode(makePicture(1024, 64, Pattern::Noise, 4), 1024, 64);
    const auto res = tight.decode(2, all, wide.pixels(), false, touched);
    QVERIFY(gc::front::isViolation(res));
    QCOMPARE(std::get<gc::front::Violation>(res).kind, gc::front::Violation::Kind::Resource);
    QCOMPARE(tight.tiles(), size_t(0));
  }

  void keepsTheFourthByteWhenAskedAndWritesTheSameColours() {
    const uint32_t w = 100, h = 37;
    const auto picture = makePicture(w, h, Pattern::Gradient, 5);
    const auto stream = encode(picture, w, h, {{3, 5, 40, 30}, {50, 12, 100, 37}});
    Pair pair(w, h);
    QVERIFY2(pair.both(stream).isEmpty(), "the stream decodes as FreeRDP's");
    ProgressiveDecoder keeping(limits1080());
    QVERIFY(!gc::front::isViolation(keeping.createSurface(kSurface, w, h)));
    Image kept(w, h, 0x3C);
    std::vector<ProgressiveDecoder::Rect> touched;
    QVERIFY(!gc::front::isViolation(keeping.decode(kSurface, stream, kept.pixels(), true, touched)));
    QVERIFY(kept.guardIntact());
    size_t written = 0;
    for (uint32_t y = 0; y < h; ++y)
      for (uint32_t x = 0; x < w; ++x) {
        const uint8_t* k = kept.at(x, y);
        const uint8_t* o = pair.ours.at(x, y);
        QCOMPARE(k[3], uint8_t(0x3C));
        QVERIFY(std::memcmp(k, o, 3) == 0);
        written += o[3] == 0xFF ? 1 : 0;
      }
    QVERIFY(written > 0);
  }

  void vectorDwtEqualsTheScalarPathOnAnyCoefficients() {
    std::mt19937 rng(0x5EED);
    std::vector<int16_t> in(RfxDwt::kCoefficients), fast(in.size()), slow(in.size()), temp(in.size());
    for (bool extrapolate : {false, true})
      for (Values kind : kAllValues)
        for (int round = 0; round < 50; ++round) {
          fill(in.data(), in.size(), kind, rng);
          fast = in;
          slow = in;
          if (extrapolate) {
            RfxDwt::inverseExtrapolate(fast.data(), temp.data(), RfxDwt::Path::Fastest);
            RfxDwt::inverseExtrapolate(slow.data(), temp.data(), RfxDwt::Path::Scalar);
          } else {
            RfxDwt::inverseClassic(fast.data(), temp.data(), RfxDwt::Path::Fastest);
            RfxDwt::inverseClassic(slow.data(), temp.data(), RfxDwt::Path::Scalar);
          }
          size_t at = 0;
          while (at < in.size() && fast[at] == slow[at])
            ++at;
          if (at != in.size())
            QFAIL(qPrintable(QStringLiteral("%1 DWT, kind %2, round %3: sample %4 is %5, not %6")
                                 .arg(extrapolate ? "extrapolate" : "classic")
                                 .arg(int(kind))
                                 .arg(round)
                                 .arg(at)
                                 .arg(fast[at])
                                 .arg(slow[at])));
        }
  }

  void vectorColourEqualsTheScalarPathOnAnySamples() {
    std::mt19937 rng(0xC01);
    constexpr size_t kPlane = size_t(RfxColor::kSide) * RfxColor::kSide;
    std::vector<int16_t> planes(3 * kPlane);
    const size_t stride = RfxColor::kSide * 4 + 12;
    std::vector<uint8_t> fast(stride * RfxColor::kSide), slow(fast.size());
    std::uniform_int_distribution<int> anyByte(0, 255);
    for (Values kind : kAllValues)
      for (uint32_t columns : {64u, 37u, 16u, 5u})
        for (bool keepX : {false, true})
          for (int round = 0; round < 20; ++round) {
            for (size_t c = 0; c < 3; ++c)
              fill(planes.data() + c * kPlane, kPlane, c == 0 && round % 2 ? Values::Uniform : kind, rng);
            for (uint8_t& b : fast)
              b = uint8_t(anyByte(rng));
            slow = fast;
            const uint32_t rows = columns == 64 ? 64 : 33;
            RfxColor::toBgrx(planes.data(), planes.data() + kPlane, planes.data() + 2 * kPlane, fast.data(),
                             stride, columns, rows, keepX, RfxColor::Path::Fastest);
            RfxColor::toBgrx(planes.data(), planes.data() + kPlane, planes.data() + 2 * kPlane, slow.data(),
                             stride, columns, rows, keepX, RfxColor::Path::Scalar);
            size_t at = 0;
            while (at < fast.size() && fast[at] == slow[at])
              ++at;
            if (at != fast.size())
              QFAIL(qPrintable(QStringLiteral("kind %1, %2 columns, keepX %3: byte %4 is %5, not %6")
                                   .arg(int(kind))
                                   .arg(columns)
                                   .arg(keepX)
                                   .arg(at)
                                   .arg(fast[at])
                                   .arg(slow[at])));
          }
  }

  void measuresA1080pFrameAgainstFreeRdp() {
    const auto picture = makePicture(1920, 1080, Pattern::Text, 8);
    // FreeRDP's encoder writes classic-DWT tiles; the test guest's, as Windows, reduce-extrapolate.
    measure("FreeRDP encoder, classic DWT", encode(picture, 1920, 1080));
    gc::testguest::ProgressiveEncoder enc;
    enc.reset(1920, 1080);
    uint32_t frame = 0;
    const GuestPasses g = guestPasses(enc, picture, 1920, 1080, frame);
    measure("guest encoder, reduce-extrapolate DWT", g.streams[0]);
    measureUpgrades(g);
  }

private:
  // The fastest of several runs on each side: on a loaded machine the others measure the load.
  // Wall time, and the process's CPU time: FreeRDP may hand tiles to its thread pool, which the
  // wall clock does not see, and the reader pays for every core it uses.
  static void measure(const char* what, const std::vector<uint8_t>& stream) {
    Pair pair(1920, 1080);
    QVERIFY(pair.both(stream).isEmpty());
    const int runs = 9;
    using Clock = std::chrono::steady_clock;
    auto cpuMs = [] {
      timespec t{};
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
      return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
    };
    double ours = 1e9, theirs = 1e9, oursCpu = 1e9, theirsCpu = 1e9;
    for (int i = 0; i < runs; ++i) {
      const auto t0 = Clock::now();
      const double c0 = cpuMs();
      QVERIFY(!gc::front::isViolation(pair.mine(stream)));
      const auto t1 = Clock::now();
      const double c1 = cpuMs();
      QVERIFY(pair.freerdp(stream) >= 0);
      const auto t2 = Clock::now();
      const double c2 = cpuMs();
      ours = std::min(ours, std::chrono::duration<double, std::milli>(t1 - t0).count());
      theirs = std::min(theirs, std::chrono::duration<double, std::milli>(t2 - t1).count());
      oursCpu = std::min(oursCpu, c1 - c0);
      theirsCpu = std::min(theirsCpu, c2 - c1);
    }
    qInfo("1080p first-pass frame (%s, %zu bytes), fastest of %d: ours %.2f ms (CPU %.2f ms), FreeRDP C path "
          "%.2f ms (CPU %.2f ms) (this build's flags)",
          what, stream.size(), runs, ours, oursCpu, theirs, theirsCpu);
  }

  // The guest's frame in three passes: its first pass, then two upgrade passes over it (SRL and
  // RAW, then the inverse DWT of every tile again), on a fresh pair of surfaces each run. All
  // three are timed: a decoder may put off work of the first pass until a later pass needs it.
  static void measureUpgrades(const GuestPasses& g) {
    QCOMPARE(g.streams.size(), size_t(3));
    const int runs = 9;
    using Clock = std::chrono::steady_clock;
    auto cpuMs = [] {
      timespec t{};
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
      return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
    };
    double ours = 1e9, theirs = 1e9, oursCpu = 1e9, theirsCpu = 1e9;
    for (int i = 0; i < runs; ++i) {
      Pair pair(1920, 1080);
      double o = 0, t = 0, oc = 0, tc = 0;
      for (size_t u = 0; u < g.streams.size(); ++u) {
        const auto t0 = Clock::now();
        const double c0 = cpuMs();
        QVERIFY(!gc::front::isViolation(pair.mine(g.streams[u])));
        const auto t1 = Clock::now();
        const double c1 = cpuMs();
        QVERIFY(pair.freerdp(g.streams[u]) >= 0);
        const auto t2 = Clock::now();
        const double c2 = cpuMs();
        o += std::chrono::duration<double, std::milli>(t1 - t0).count();
        t += std::chrono::duration<double, std::milli>(t2 - t1).count();
        oc += c1 - c0;
        tc += c2 - c1;
      }
      QVERIFY(pair.differences().isEmpty());
      ours = std::min(ours, o);
      theirs = std::min(theirs, t);
      oursCpu = std::min(oursCpu, oc);
      theirsCpu = std::min(theirsCpu, tc);
    }
    qInfo("1080p first pass and two upgrade passes (guest encoder, %zu + %zu + %zu bytes), fastest of %d: "
          "ours %.2f ms (CPU %.2f "
          "ms), "
          "FreeRDP C path %.2f ms (CPU %.2f ms) (this build's flags)",
          g.streams[0].size(), g.streams[1].size(), g.streams[2].size(), runs, ours, oursCpu, theirs,
          theirsCpu);
  }
};

QTEST_APPLESS_MAIN(tst_RdpCodecProgressiveDecoder)
#include "tst_rdpcodecprogressivedecoder.moc"
