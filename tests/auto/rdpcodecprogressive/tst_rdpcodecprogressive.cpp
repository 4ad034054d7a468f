// ProgressiveFront (issue 24 part 2, issue 27.2): the validating front for RemoteFX
// Progressive. Streams FreeRDP 3.10.3's encoder writes are accepted and FreeRDP's decoder,
// fed them, writes only inside the rectangles the front reports; SIMPLE tiles re-sent as
// FIRST passes and UPGRADE passes on top are accepted and decoded; one refusal per rule,
// covering every input FreeRDP's fixes after 3.10.3 reject (see ProgressiveFront.h).
#include "rdp/codec/ProgressiveFront.h"
#include "tests/auto/rdpcodecprogressive/ProgressiveStreams.h"

#include <QTest>

#include <freerdp/codec/color.h>
#include <freerdp/codec/progressive.h>
#include <freerdp/codec/region.h>

#include <cstdint>
#include <vector>

using gc::codec::ProgressiveFront;
using namespace progtest;
using codectest::Image;
using codectest::makePicture;
using codectest::Pattern;
using codectest::toQByteArray;

namespace {

gc::front::Limits limits1080() {
  gc::front::Limits l;
  l.desktopWidth = 1920;
  l.desktopHeight = 1080;
  return l;
}

std::string ruleOf(const gc::front::Checked<ProgressiveFront::Update>& r) {
  if (const auto* v = std::get_if<gc::front::Violation>(&r))
    return std::string(v->rule);
  return {};
}

// FreeRDP's encoder: a picture into SIMPLE tiles, for the whole picture or some rectangles.
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

// FreeRDP's decoder on one surface, with a guard band around the surface's pixels.
struct Decoder {
  PROGRESSIVE_CONTEXT* p = progressive_context_new(FALSE);
  Image surface;
  Decoder(uint32_t w, uint32_t h) : surface(w, h, 0x3C) { progressive_create_surface_context(p, 7, w, h); }
  ~Decoder() { progressive_context_free(p); }
  INT32 decode(const Bytes& s, uint32_t frameId = 1) {
    REGION16 invalid;
    region16_init(&invalid);
    const INT32 rc =
        progressive_decompress(p, s.v.data(), UINT32(s.size()), surface.row(0), PIXEL_FORMAT_BGRX32,
                               UINT32(surface.stride), 0, 0, &invalid, 7, frameId);
    region16_uninit(&invalid);
    return rc;
  }
};

bool inside(const ProgressiveFront::Update& u, uint32_t x, uint32_t y) {
  for (const auto& r : u.clip)
    if (x >= r.x && x < uint32_t(r.x) + r.width && y >= r.y && y < uint32_t(r.y) + r.height)
      return true;
  return false;
}

// Every pixel FreeRDP changed lies inside the front's clip rectangles.
QString changesOutside(const Image& before, const Image& after, const ProgressiveFront::Update& u) {
  for (uint32_t y = 0; y < before.height; ++y)
    for (uint32_t x = 0; x < before.width; ++x)
      if (std::memcmp(before.at(x, y), after.at(x, y), 4) != 0 && !inside(u, x, y))
        return QStringLiteral("pixel (%1,%2) changed outside the reported rectangles").arg(x).arg(y);
  return {};
}

Bytes fromV(const std::vector<uint8_t>& v) {
  Bytes b;
  b.v = v;
  return b;
}

// A FIRST pass of FreeRDP's SIMPLE tiles at quality 0 (progressive shift `prog` on every band).
Region asFirst(Region r, uint8_t prog) {
  r.progQuants = {ProgQuant{flat(prog), flat(prog), flat(prog)}};
  for (Tile& t : r.tiles) {
    t.type = 0xCCC6;
    t.quality = 0;
  }
  return r;
}

// An UPGRADE pass to full quality for every tile of `first`: `bits` per band, RAW data of the
// least the pass can read (LL3's 81 coefficients), SRL data of `srl` bytes.
Region asUpgrade(const Region& first, unsigned bits, size_t srl = 16) {
  Region r = first;
  r.progQuants = first.progQuants;
  for (Tile& t : r.tiles) {
    t.type = 0xCCC7;
    t.quality = 0xFF;
    for (int c = 0; c < 3; ++c) {
      t.data[c].assign(srl, 0x5A);
      t.raw[c].assign((81 * bits + 7) / 8, 0xA5);
    }
  }
  (void)bits;
  return r;
}

Tile simpleTile(uint16_t x, uint16_t y) {
  Tile t;
  t.x = x;
  t.y = y;
  for (auto& d : t.data)
    d = {0x12, 0x34, 0x56, 0x78};
  return t;
}

Region oneTile(Tile t, uint16_t w = 64, uint16_t h = 64) {
  Region r;
  r.rects = {{0, 0, w, h}};
  r.tiles = {std::move(t)};
  return r;
}

} // namespace

class tst_RdpCodecProgressive : public QObject {
  Q_OBJECT
private slots:
  void acceptsFreeRdpStreamsAndFreeRdpWritesOnlyWhereReported_data() {
    QTest::addColumn<uint>("w");
    QTest::addColumn<uint>("h");
    QTest::addColumn<int>("pattern");
    QTest::addColumn<QList<QRect>>("rects");
    const QList<QSize> sizes{{64, 64}, {100, 37}, {640, 480}, {1920, 1080}};
    for (const QSize& s : sizes)
      for (Pattern p : {Pattern::Gradient, Pattern::Noise, Pattern::Text}) {
        QTest::addRow("%dx%d-%s-whole", s.width(), s.height(), codectest::patternName(p))
            << uint(s.width()) << uint(s.height()) << int(p) << QList<QRect>{};
        QTest::addRow("%dx%d-%s-two-rects", s.width(), s.height(), codectest::patternName(p))
            << uint(s.width()) << uint(s.height()) << int(p)
            << QList<QRect>{QRect(3, 5, s.width() / 3, s.height() / 2),
                            QRect(s.width() / 2, s.height() / 3, s.width() / 2, s.height() - s.height() / 3)};
      }
  }
  void acceptsFreeRdpStreamsAndFreeRdpWritesOnlyWhereReported() {
    QFETCH(uint, w);
    QFETCH(uint, h);
    QFETCH(int, pattern);
    QFETCH(QList<QRect>, rects);
    const auto picture = makePicture(w, h, Pattern(pattern), w + h);
    std::vector<RECTANGLE_16> r16;
    for (const QRect& r : rects)
      r16.push_back(
          {uint16_t(r.left()), uint16_t(r.top()), uint16_t(r.right() + 1), uint16_t(r.bottom() + 1)});
    const Bytes stream = fromV(encode(picture, w, h, r16));
    QVERIFY(!stream.v.empty());

    ProgressiveFront front(limits1080());
    QVERIFY(!gc::front::isViolation(front.createSurface(7, w, h)));
    const auto checked = front.check(7, stream.span());
    QVERIFY2(!gc::front::isViolation(checked), ruleOf(checked).c_str());
    const auto& u = std::get<ProgressiveFront::Update>(checked);
    QCOMPARE(u.regions, 1u);
    QVERIFY(!u.tiles.empty());
    for (const auto& c : u.clip)
      QVERIFY(uint32_t(c.x) + c.width <= w && uint32_t(c.y) + c.height <= h);

    Decoder theirs(w, h);
    const Image before = theirs.surface;
    QVERIFY(theirs.decode(stream) >= 0);
    QVERIFY(theirs.surface.guardIntact());
    const QString outside = changesOutside(before, theirs.surface, u);
    QVERIFY2(outside.isEmpty(), qPrintable(outside));
    // Lossy, but the picture: the mean error inside the rectangles is small.
    uint64_t err = 0, n = 0;
    for (uint32_t y = 0; y < h; ++y)
      for (uint32_t x = 0; x < w; ++x)
        if (inside(u, x, y))
          for (int c = 0; c < 3; ++c, ++n)
            err += uint64_t(std::abs(int(theirs.surface.at(x, y)[c]) -
                                     int(picture[(size_t(y) * w + x) * 4 + size_t(c)])));
    QVERIFY(n > 0);
    QVERIFY2(err / n < 12, qPrintable(QStringLiteral("mean error %1").arg(double(err) / double(n))));
  }

  // SIMPLE tiles re-sent as a FIRST pass, then UPGRADE passes in later streams and in a
  // second region of one stream; FreeRDP decodes every accepted stream.
  void acceptsFirstAndUpgradePassesAndFreeRdpDecodesThem() {
    const uint32_t w = 200, h = 130;
    const auto picture = makePicture(w, h, Pattern::Gradient);
    Region simple;
    QVERIFY(parse(encode(picture, w, h), simple));
    ProgressiveFront front(limits1080());
    QVERIFY(!gc::front::isViolation(front.createSurface(7, w, h)));
    Decoder theirs(w, h);

    const Region first = asFirst(simple, 4);
    const Bytes s1 = frame({first});
    auto c1 = front.check(7, s1.span());
    QVERIFY2(!gc::front::isViolation(c1), ruleOf(c1).c_str());
    QCOMPARE(std::get<ProgressiveFront::Update>(c1).tiles.size(), simple.tiles.size());
    QCOMPARE(std::get<ProgressiveFront::Update>(c1).tiles[0].kind, ProgressiveFront::TileKind::First);
    QVERIFY(theirs.decode(s1, 1) >= 0);

    // Quality 0 -> a second table (2 bits fewer) -> full quality: 2 bits per band, twice.
    Region mid = asUpgrade(first, 2);
    mid.progQuants = {ProgQuant{flat(4), flat(4), flat(4)}, ProgQuant{flat(2), flat(2), flat(2)}};
    for (Tile& t : mid.tiles)
      t.quality = 1;
    const Bytes s2 = frame({mid}, false);
    auto c2 = front.check(7, s2.span());
    QVERIFY2(!gc::front::isViolation(c2), ruleOf(c2).c_str());
    QVERIFY(theirs.decode(s2, 2) >= 0);
    Region full = asUpgrade(first, 2);
    const Bytes s3 = frame({full}, false);
    auto c3 = front.check(7, s3.span());
    QVERIFY2(!gc::front::isViolation(c3), ruleOf(c3).c_str());
    QVERIFY(theirs.decode(s3, 3) >= 0);
    QVERIFY(theirs.surface.guardIntact());

    // A FIRST and its UPGRADE in two regions of one stream (regions are decoded in order).
    const Bytes both = frame({first, asUpgrade(first, 4)});
    auto c4 = front.check(7, both.span());
    QVERIFY2(!gc::front::isViolation(c4), ruleOf(c4).c_str());
    QCOMPARE(std::get<ProgressiveFront::Update>(c4).regions, 2u);
    QVERIFY(theirs.decode(both, 4) >= 0);
    QVERIFY(theirs.surface.guardIntact());
  }

  void acceptsATileDifferenceOnADecodedTile() {
    ProgressiveFront front(limits1080());
    QVERIFY(!gc::front::isViolation(front.createSurface(7, 64, 64)));
    QVERIFY(!gc::front::isViolation(front.check(7, frame({oneTile(simpleTile(0, 0))}).span())));
    Tile diff = simpleTile(0, 0);
    diff.flags = 0x01;
    const Bytes s = frame({oneTile(diff)});
    QVERIFY(!gc::front::isViolation(front.check(7, s.span())));
    Decoder theirs(64, 64);
    QVERIFY(theirs.decode(frame({oneTile(simpleTile(0, 0))})) >= 0);
    QVERIFY(theirs.decode(s) >= 0);
  }

  // Seeds for fuzz_progressive: surface width - 1 and height - 1 (16 bits each), then messages
  // (16-bit length + stream) on one surface context: FreeRDP's SIMPLE tiles, a FIRST pass and
  // its UPGRADEs, two regions in one stream.
  void writesFuzzSeeds() {
    QString dir;
    if (!codectest::seedDirectory(dir))
      QSKIP("GC_CODEC_SEED_DIR not set");
    int n = 0;
    auto seed = [&](uint32_t w, uint32_t h, const std::vector<Bytes>& messages) {
      Bytes b;
      b.u16(w - 1).u16(h - 1);
      for (const Bytes& m : messages)
        codectest::appendMessage(b, m.span());
      QVERIFY(codectest::writeSeed(dir, "progressive",
                                   QStringLiteral("seed-%1").arg(n++, 2, 10, QLatin1Char('0')), b.span()));
    };
    const auto pic = makePicture(100, 70, Pattern::Text);
    seed(100, 70, {fromV(encode(pic, 100, 70))});
    seed(100, 70, {fromV(encode(pic, 100, 70, {{5, 6, 60, 50}}))});
    Region simple;
    QVERIFY(parse(encode(makePicture(70, 40, Pattern::Gradient), 70, 40), simple));
    const Region first = asFirst(simple, 3);
    Region mid = asUpgrade(first, 1);
    mid.progQuants = {ProgQuant{flat(3), flat(3), flat(3)}, ProgQuant{flat(2), flat(2), flat(2)}};
    for (Tile& t : mid.tiles)
      t.quality = 1;
    seed(70, 40, {frame({first}), frame({mid}, false), frame({asUpgrade(first, 2)}, false)});
    seed(70, 40, {frame({first, asUpgrade(first, 3)})});
    Tile diff = simpleTile(0, 0);
    diff.flags = 0x01;
    seed(64, 64, {frame({oneTile(simpleTile(0, 0))}), frame({oneTile(diff)})});
  }

  void refusesMalformedStreams_data() {
    QTest::addColumn<QByteArray>("stream");
    QTest::addColumn<QString>("rule");
    auto q = [](const Bytes& b) { return toQByteArray(b.span()); };
    auto with = [](std::initializer_list<Bytes> parts) {
      Bytes b;
      for (const Bytes& p : parts)
        b.bytes(p);
      return b;
    };
    const Region ok = oneTile(simpleTile(0, 0));
    auto regionWith = [&](auto change) {
      Region r = ok;
      change(r);
      return q(frame({r}));
    };
    auto block = [](uint16_t type, const Bytes& body) {
      Bytes b;
      b.u16(type).u32(uint32_t(body.size() + 6)).bytes(body);
      return b;
    };

    // Blocks and frames.
    QTest::newRow("empty") << QByteArray() << "empty stream";
    QTest::newRow("header cut") << QByteArray("\xC0\xCC\x0C\x00", 4) << "block header cut short";
    QTest::newRow("length 5") << QByteArray("\xC0\xCC\x05\x00\x00\x00", 6) << "block shorter than its header";
    QTest::newRow("length past the stream")
        << QByteArray("\xC0\xCC\x0D\x00\x00\x00\xCA\xAC\xCC\xCA\x00\x01", 12) << "block runs past the stream";
    QTest::newRow("block after the end")
        << q(with({frame({ok}), syncBlock()})) << "block after the frame's end";
    Bytes sync13 = block(0xCCC0, Bytes().u32(0xCACCACCA).u16(0x0100).u8(0));
    QTest::newRow("SYNC of 13") << q(sync13) << "SYNC block length";
    QTest::newRow("SYNC magic") << q(block(0xCCC0, Bytes().u32(0xCACCACCB).u16(0x0100)))
                                << "SYNC magic or version";
    QTest::newRow("SYNC version") << q(block(0xCCC0, Bytes().u32(0xCACCACCA).u16(0x0101)))
                                  << "SYNC magic or version";
    QTest::newRow("two SYNC") << q(with({syncBlock(), syncBlock()})) << "second SYNC block";
    QTest::newRow("SYNC in a frame") << q(with({frameBegin(), syncBlock(), frameEnd()}))
                                     << "SYNC inside a frame";
    QTest::newRow("CONTEXT of 11") << q(block(0xCCC3, Bytes().u8(0).u16(64).u8(0).u8(0)))
                                   << "CONTEXT block length";
    QTest::newRow("CONTEXT tile 32") << q(block(0xCCC3, Bytes().u8(0).u16(32).u8(0))) << "tile size not 64";
    QTest::newRow("two CONTEXT") << q(with({context(), context()})) << "second CONTEXT block";
    QTest::newRow("CONTEXT in a frame")
        << q(with({frameBegin(), context(), frameEnd()})) << "CONTEXT inside a frame";
    QTest::newRow("FRAME_BEGIN of 13")
        << q(block(0xCCC1, Bytes().u32(1).u16(1).u8(0))) << "FRAME_BEGIN block length";
    QTest::newRow("two FRAME_BEGIN") << q(with({frameBegin(), frameBegin(), frameEnd()}))
                                     << "second FRAME_BEGIN block";
    QTest::newRow("FRAME_END of 7") << q(with({frameBegin(), block(0xCCC2, Bytes().u8(0))}))
                                    << "FRAME_END block length";
    QTest::newRow("FRAME_END alone") << q(frameEnd()) << "FRAME_END without FRAME_BEGIN";
    QTest::newRow("REGION outside a frame") << q(ok.block()) << "REGION outside a frame";
    std::vector<Region> seventeen(17, ok);
    QTest::newRow("17 regions") << q(frame(seventeen)) << "more than 16 regions";
    QTest::newRow("tile outside a region")
        << q(with({frameBegin(), simpleTile(0, 0).block(), frameEnd()})) << "tile outside a region";
    QTest::newRow("block type 0xCCC8") << q(block(0xCCC8, Bytes())) << "unknown block type";
    QTest::newRow("frame not ended") << q(with({frameBegin(), ok.block()})) << "frame not ended";

    // REGION.
    Bytes regionCut = block(0xCCC4, Bytes().u8(64).u16(1).u8(1));
    QTest::newRow("REGION header cut")
        << q(with({frameBegin(), regionCut, frameEnd()})) << "REGION header cut short";
    QTest::newRow("REGION tile 32") << regionWith([](Region& r) { r.tileSize = 32; }) << "tile size not 64";
    QTest::newRow("REGION without rects")
        << regionWith([](Region& r) { r.rects.clear(); }) << "REGION without rectangles";
    QTest::newRow("8 quant tables") << regionWith([](Region& r) { r.quants.assign(8, flat(6)); })
                                    << "more than 7 quantization tables";
    QTest::newRow("more tiles than the grid")
        << regionWith([](Region& r) { r.numTilesOverride = 2; }) << "more tiles than the surface has";
    Region sizes = ok;
    Bytes sizesBlock = sizes.block();
    sizesBlock.v[2] += 1; // blockLen one more, one byte appended
    sizesBlock.u8(0);
    QTest::newRow("REGION sizes") << q(with({frameBegin(), sizesBlock, frameEnd()}))
                                  << "REGION sizes do not match its block";
    QTest::newRow("rect right of the surface") << regionWith([](Region& r) {
      r.rects = {{1, 0, 64, 64}};
    }) << "rectangle outside the surface";
    QTest::newRow("rect below the surface") << regionWith([](Region& r) {
      r.rects = {{0, 60, 10, 5}};
    }) << "rectangle outside the surface";
    QTest::newRow("rect 65535 wide") << regionWith([](Region& r) {
      r.rects = {{0, 0, 65535, 1}};
    }) << "rectangle outside the surface";
    for (uint8_t v : {0, 5}) // the quant underflow of FreeRDP 1475e06f5 needs a value below 1
      QTest::addRow("quant value %u", v) << regionWith([v](Region& r) {
        Quant qv = flat(8);
        qv[3] = v;
        r.quants = {qv};
      }) << "quantization value outside 6..15";
    auto tileDataWith = [&](const Bytes& tiles, int numTiles) {
      Bytes body;
      body.u8(64).u16(1).u8(1).u8(0).u8(0).u16(unsigned(numTiles)).u32(uint32_t(tiles.size()));
      body.u16(0).u16(0).u16(64).u16(64);
      quant(body, flat(6));
      body.bytes(tiles);
      return q(with({frameBegin(), block(0xCCC4, body), frameEnd()}));
    };
    QTest::newRow("tile header cut") << tileDataWith(Bytes().u16(0xCCC5).u8(0), 1)
                                     << "tile block header cut short";
    QTest::newRow("tile length 5") << tileDataWith(Bytes().u16(0xCCC5).u32(5), 1)
                                   << "block shorter than its header";
    QTest::newRow("tile past the region")
        << tileDataWith(Bytes().u16(0xCCC5).u32(40).fill(10, 0), 1) << "tile block runs past the region";
    QTest::newRow("SYNC inside a region")
        << tileDataWith(syncBlock(), 1) << "block inside a region is not a tile";
    QTest::newRow("numTiles 0 for one tile")
        << regionWith([](Region& r) { r.numTilesOverride = 0; }) << "tile count does not match numTiles";

    // Tiles.
    Bytes cutTile;
    cutTile.u16(0xCCC5).u32(6 + 15).fill(15, 0);
    QTest::newRow("SIMPLE header cut") << tileDataWith(cutTile, 1) << "tile header cut short";
    Bytes cutUpgrade;
    cutUpgrade.u16(0xCCC7).u32(6 + 19).fill(19, 0);
    QTest::newRow("UPGRADE header cut") << tileDataWith(cutUpgrade, 1) << "tile header cut short";
    Bytes longTile = simpleTile(0, 0).block();
    longTile.v[2] += 1;
    longTile.u8(0);
    QTest::newRow("tile lengths") << tileDataWith(longTile, 1) << "tile lengths do not match its block";
    for (int c = 0; c < 3; ++c)
      QTest::addRow("empty RLGR component %d", c)
          << regionWith([c](Region& r) { r.tiles[0].data[c].clear(); }) << "empty RLGR component";
    QTest::newRow("tile flags 0x02") << regionWith([](Region& r) { r.tiles[0].flags = 0x02; })
                                     << "unknown tile flags";
    for (int c = 0; c < 3; ++c)
      QTest::addRow("quant index %d", c)
          << regionWith([c](Region& r) { r.tiles[0].q[c] = 1; }) << "quantization index out of range";
    QTest::newRow("FIRST quality 0 of none") << regionWith([](Region& r) {
      r.tiles[0].type = 0xCCC6;
      r.tiles[0].quality = 0;
    }) << "quality index out of range";
    QTest::newRow("tile x outside") << regionWith([](Region& r) { r.tiles[0].x = 1; })
                                    << "tile outside the surface";
    QTest::newRow("tile y outside") << regionWith([](Region& r) { r.tiles[0].y = 1; })
                                    << "tile outside the surface";
    QTest::newRow("tile index 65535")
        << regionWith([](Region& r) { r.tiles[0].x = 0xFFFF; }) << "tile outside the surface";
    QTest::newRow("tile twice") << regionWith([](Region& r) {
      r.tiles.push_back(r.tiles[0]);
      r.numTilesOverride = 1; // the grid has one tile: numTiles must stay within it
    }) << "tile twice in one region";
    // Uninitialised coefficients in 3.10.3: a difference or an upgrade on a tile never decoded.
    QTest::newRow("difference on a fresh tile") << regionWith([](Region& r) { r.tiles[0].flags = 0x01; })
                                                << "tile difference on a tile never decoded";
    Region upgradeFresh = asUpgrade(asFirst(ok, 2), 2);
    QTest::newRow("upgrade of a fresh tile") << q(frame({upgradeFresh})) << "upgrade of a tile never decoded";
  }
  void refusesMalformedStreams() {
    QFETCH(QByteArray, stream);
    QFETCH(QString, rule);
    ProgressiveFront front(limits1080());
    QVERIFY(!gc::front::isViolation(front.createSurface(7, 64, 64)));
    const auto r =
        front.check(7, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(stream.constData()),
                                                size_t(stream.size())));
    QVERIFY(gc::front::isViolation(r));
    const auto& v = std::get<gc::front::Violation>(r);
    QCOMPARE(v.kind, gc::front::Violation::Kind::Protocol);
    QCOMPARE(QString::fromLatin1(v.pdu.data(), qsizetype(v.pdu.size())), QStringLiteral("codec.Progressive"));
    QCOMPARE(QString::fromStdString(ruleOf(r)), rule);
  }

  // Rules that need state from an earlier stream (a decoded tile, a known quality).
  void refusesUpgradesThatBreakTheTileState_data() {
    QTest::addColumn<int>("firstProg");   // progressive shift of the FIRST pass
    QTest::addColumn<int>("upgradeProg"); // of the UPGRADE's table (-1: full quality)
    QTest::addColumn<int>("rawBytes");    // -1: the least the pass reads
    QTest::addColumn<QString>("rule");
    // FreeRDP 78188ab47 / 78677dc6e: a pass to a lower quality underflows numBits.
    QTest::newRow("quality going down") << 2 << 5 << -1 << "upgrade lowers the quality";
    // 16 bits at once: the SRL magnitude loop could run 2^numBits times per coefficient.
    QTest::newRow("16 bits in one pass") << 15 << -1 << -1 << "upgrade of more than 15 bits";
    QTest::newRow("raw shorter than LL3") << 4 << -1 << 40 << "raw length outside what the upgrade reads";
    QTest::newRow("raw longer than every band")
        << 1 << -1 << 513 << "raw length outside what the upgrade reads";
  }
  void refusesUpgradesThatBreakTheTileState() {
    QFETCH(int, firstProg);
    QFETCH(int, upgradeProg);
    QFETCH(int, rawBytes);
    QFETCH(QString, rule);
    ProgressiveFront front(limits1080());
    QVERIFY(!gc::front::isViolation(front.createSurface(7, 64, 64)));
    Region first = asFirst(oneTile(simpleTile(0, 0)), uint8_t(firstProg));
    // 16 bits and more: the FIRST at quant 15 + 15, the UPGRADE through another table at 6.
    if (firstProg == 15)
      first.quants = {flat(15), flat(6)};
    QVERIFY2(!gc::front::isViolation(front.check(7, frame({first}).span())), "the FIRST pass is valid");
    Region up = asUpgrade(first, unsigned(std::max(firstProg - std::max(upgradeProg, 0), 0)));
    if (upgradeProg >= 0) {
      up.progQuants = {
          ProgQuant{flat(uint8_t(upgradeProg)), flat(uint8_t(upgradeProg)), flat(uint8_t(upgradeProg))}};
      for (Tile& t : up.tiles)
        t.quality = 0;
    }
    if (firstProg == 15)
      for (Tile& t : up.tiles)
        t.q[0] = t.q[1] = t.q[2] = 1;
    if (rawBytes >= 0)
      for (Tile& t : up.tiles)
        for (auto& raw : t.raw)
          raw.assign(size_t(rawBytes), 0);
    const auto r = front.check(7, frame({up}, false).span());
    QCOMPARE(QString::fromStdString(ruleOf(r)), rule);
  }

  void refusesATileTwiceInOneRegion() {
    ProgressiveFront front(limits1080());
    QVERIFY(!gc::front::isViolation(front.createSurface(7, 192, 64)));
    Region r = oneTile(simpleTile(1, 0), 192, 64);
    r.tiles.push_back(simpleTile(0, 0));
    r.tiles.push_back(simpleTile(1, 0));
    QCOMPARE(QString::fromStdString(ruleOf(front.check(7, frame({r}).span()))),
             QStringLiteral("tile twice in one region"));
  }

  void aRefusedStreamChangesNoState() {
    ProgressiveFront front(limits1080());
    QVERIFY(!gc::front::isViolation(front.createSurface(7, 64, 64)));
    Region bad = oneTile(simpleTile(0, 0));
    bad.rects = {{0, 0, 65, 64}};
    // The first region decodes tile (0,0); the second is refused: the whole stream is.
    QVERIFY(
        gc::front::isViolation(front.check(7, frame({asFirst(oneTile(simpleTile(0, 0)), 2), bad}).span())));
    const auto r = front.check(7, frame({asUpgrade(asFirst(oneTile(simpleTile(0, 0)), 2), 2)}).span());
    QCOMPARE(QString::fromStdString(ruleOf(r)), QStringLiteral("upgrade of a tile never decoded"));
  }

  void deletingTheSurfaceForgetsItsTiles() {
    ProgressiveFront front(limits1080());
    QVERIFY(!gc::front::isViolation(front.createSurface(7, 64, 64)));
    const Region first = asFirst(oneTile(simpleTile(0, 0)), 2);
    QVERIFY(!gc::front::isViolation(front.check(7, frame({first}).span())));
    front.deleteSurface(7);
    QCOMPARE(QString::fromStdString(ruleOf(front.check(7, frame({first}).span()))),
             QStringLiteral("no surface context for the surface"));
    QVERIFY(!gc::front::isViolation(front.createSurface(7, 64, 64)));
    QCOMPARE(QString::fromStdString(ruleOf(front.check(7, frame({asUpgrade(first, 2)}).span()))),
             QStringLiteral("upgrade of a tile never decoded"));
  }

  // FreeRDP keeps one region for all surfaces: a stream without a REGION copies through the
  // last one parsed. The front reports those rectangles, clipped to this surface.
  void reportsTheRememberedRectanglesForAStreamWithoutARegion() {
    ProgressiveFront front(limits1080());
    QVERIFY(!gc::front::isViolation(front.createSurface(1, 256, 256)));
    QVERIFY(!gc::front::isViolation(front.createSurface(2, 64, 64)));
    Region r = oneTile(simpleTile(0, 0), 200, 100);
    r.rects = {{10, 20, 190, 80}};
    QVERIFY(!gc::front::isViolation(front.check(1, frame({r}).span())));
    const auto c = front.check(2, Bytes().bytes(frameBegin()).bytes(frameEnd()).span());
    QVERIFY2(!gc::front::isViolation(c), ruleOf(c).c_str());
    const auto& u = std::get<ProgressiveFront::Update>(c);
    QCOMPARE(u.clip.size(), size_t(1));
    QCOMPARE(u.clip[0].x, uint16_t(10));
    QCOMPARE(u.clip[0].y, uint16_t(20));
    QCOMPARE(u.clip[0].width, uint16_t(54));
    QCOMPARE(u.clip[0].height, uint16_t(44));
  }

  void boundsItsSurfaceContexts() {
    gc::front::Limits l = limits1080();
    l.maxSurfaces = 2;
    ProgressiveFront front(l);
    QCOMPARE(QString::fromStdString(
                 std::string(std::get<gc::front::Violation>(front.createSurface(1, 0, 5)).rule)),
             QStringLiteral("surface size out of range"));
    QCOMPARE(std::get<gc::front::Violation>(front.createSurface(1, 8193, 1)).kind,
             gc::front::Violation::Kind::Resource);
    QVERIFY(!gc::front::isViolation(front.createSurface(1, 1920, 1080)));
    QVERIFY(!gc::front::isViolation(front.createSurface(1, 1920, 1080))); // the same again
    QCOMPARE(QString::fromStdString(
                 std::string(std::get<gc::front::Violation>(front.createSurface(1, 1920, 1081)).rule)),
             QStringLiteral("surface context of another size"));
    QVERIFY(!gc::front::isViolation(front.createSurface(2, 1920, 1080)));
    QCOMPARE(QString::fromStdString(
                 std::string(std::get<gc::front::Violation>(front.createSurface(3, 64, 64)).rule)),
             QStringLiteral("more surface contexts than surfaces allowed"));
    gc::front::Limits l2 = limits1080();
    ProgressiveFront budget(l2); // 4 x the desktop's pixels in all
    for (uint16_t id = 0; id < 4; ++id)
      QVERIFY(!gc::front::isViolation(budget.createSurface(id, 1920, 1080)));
    QCOMPARE(QString::fromStdString(
                 std::string(std::get<gc::front::Violation>(budget.createSurface(9, 64, 64)).rule)),
             QStringLiteral("surface contexts beyond the pixel budget"));
    budget.reset();
    QCOMPARE(budget.surfaces(), size_t(0));
  }
};

QTEST_APPLESS_MAIN(tst_RdpCodecProgressive)
#include "tst_rdpcodecprogressive.moc"
