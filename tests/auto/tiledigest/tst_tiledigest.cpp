// TileDigest: what FreeRDP's in-place GDI draws changed, tile by tile (issue 27.1: the GDI's
// primary is the surface of record, so the legacy path's damage comes from digests).
#include "rdp/TileDigest.h"

#include <QTest>

#include <cstring>
#include <vector>

using gc::TileDigest;

namespace {

struct Desktop {
  QSize size;
  qsizetype stride;
  std::vector<uchar> bits;
  explicit Desktop(QSize s)
      : size(s), stride(qsizetype(s.width()) * 4), bits(std::size_t(stride) * s.height(), 0) {}
  void set(int x, int y, quint32 v) {
    std::memcpy(bits.data() + qsizetype(y) * stride + qsizetype(x) * 4, &v, 4);
  }
};

QList<QRect> tilesOf(const QList<QRect>& rects) {
  QList<QRect> sorted = rects;
  std::sort(sorted.begin(), sorted.end(), [](const QRect& a, const QRect& b) {
    return a.top() != b.top() ? a.top() < b.top() : a.left() < b.left();
  });
  return sorted;
}

} // namespace

class TstTileDigest : public QObject {
  Q_OBJECT
private slots:
  void firstLookReportsEveryTouchedTile();
  void repaintedUnchangedPixelsAreNoDamage();
  void oneChangedPixelDamagesOnlyItsTile();
  void pixelsSwappedBetweenRowsAreAChange();
  void resetForgetsWhatWasSeen();
  void edgeTilesAreClippedToTheDesktop();
  void rectanglesOutsideTheDesktopAreIgnored();
  void aTileChangedInAFrameIsDamageUntilTheFrameEnds();
};

void TstTileDigest::firstLookReportsEveryTouchedTile() {
  Desktop d(QSize(256, 128));
  TileDigest digest;
  digest.reset(d.size);
  // Spans tiles (1,0) and (2,0) and (1,1), (2,1).
  const QList<QRect> changed = digest.changed(d.bits.data(), d.stride, {QRect(100, 60, 40, 10)});
  QCOMPARE(tilesOf(changed), (QList<QRect>{QRect(64, 0, 64, 64), QRect(128, 0, 64, 64), QRect(64, 64, 64, 64),
                                           QRect(128, 64, 64, 64)}));
}

void TstTileDigest::repaintedUnchangedPixelsAreNoDamage() {
  Desktop d(QSize(256, 128));
  TileDigest digest;
  digest.reset(d.size);
  d.set(10, 10, 0xff123456);
  QVERIFY(!digest.changed(d.bits.data(), d.stride, {QRect(0, 0, 256, 128)}).isEmpty());
  // A server resending its static screen: the same pixels again.
  QVERIFY(digest.changed(d.bits.data(), d.stride, {QRect(0, 0, 256, 128)}).isEmpty());
}

void TstTileDigest::oneChangedPixelDamagesOnlyItsTile() {
  Desktop d(QSize(256, 128));
  TileDigest digest;
  digest.reset(d.size);
  digest.changed(d.bits.data(), d.stride, {QRect(0, 0, 256, 128)});
  d.set(200, 100, 0xff000001); // tile (3,1); a change of the lowest bit
  QCOMPARE(digest.changed(d.bits.data(), d.stride, {QRect(0, 0, 256, 128)}),
           (QList<QRect>{QRect(192, 64, 64, 64)}));
  // A tile the update did not touch is not looked at, changed or not.
  d.set(5, 5, 0xff000002);
  QVERIFY(digest.changed(d.bits.data(), d.stride, {QRect(192, 64, 10, 10)}).isEmpty());
  QCOMPARE(digest.changed(d.bits.data(), d.stride, {QRect(0, 0, 1, 1)}), (QList<QRect>{QRect(0, 0, 64, 64)}));
}

void TstTileDigest::pixelsSwappedBetweenRowsAreAChange() {
  Desktop d(QSize(64, 64));
  TileDigest digest;
  digest.reset(d.size);
  d.set(3, 1, 0xffabcdef);
  digest.changed(d.bits.data(), d.stride, {QRect(0, 0, 64, 64)});
  d.set(3, 1, 0);
  d.set(3, 2, 0xffabcdef); // the same words, one row down
  QCOMPARE(digest.changed(d.bits.data(), d.stride, {QRect(0, 0, 64, 64)}).size(), 1);
}

void TstTileDigest::resetForgetsWhatWasSeen() {
  Desktop d(QSize(128, 64));
  TileDigest digest;
  digest.reset(d.size);
  digest.changed(d.bits.data(), d.stride, {QRect(0, 0, 128, 64)});
  // Another writer (the RDPGFX client) changed the surface and drew it back: after a reset the
  // GDI's next look reports every tile it touches, never "unchanged" from a stale digest.
  digest.reset(d.size);
  QCOMPARE(digest.changed(d.bits.data(), d.stride, {QRect(0, 0, 128, 64)}).size(), 2);
}

void TstTileDigest::edgeTilesAreClippedToTheDesktop() {
  Desktop d(QSize(1920, 1080)); // 30 x 17 tiles, the last row 56 pixels tall
  TileDigest digest;
  digest.reset(d.size);
  QCOMPARE(digest.changed(d.bits.data(), d.stride, {QRect(1900, 1070, 20, 10)}),
           (QList<QRect>{QRect(1856, 1024, 64, 56)}));
  Desktop odd(QSize(67, 65));
  digest.reset(odd.size);
  QCOMPARE(
      tilesOf(digest.changed(odd.bits.data(), odd.stride, {QRect(0, 0, 67, 65)})),
      (QList<QRect>{QRect(0, 0, 64, 64), QRect(64, 0, 3, 64), QRect(0, 64, 64, 1), QRect(64, 64, 3, 1)}));
  odd.set(66, 64, 0xff00ff00); // the last pixel (an odd width: the 4-byte tail of a row)
  QCOMPARE(digest.changed(odd.bits.data(), odd.stride, {QRect(0, 0, 67, 65)}),
           (QList<QRect>{QRect(64, 64, 3, 1)}));
}

void TstTileDigest::rectanglesOutsideTheDesktopAreIgnored() {
  Desktop d(QSize(128, 64));
  TileDigest digest;
  digest.reset(d.size);
  QVERIFY(
      digest.changed(d.bits.data(), d.stride, {QRect(128, 0, 10, 10), QRect(-20, -20, 10, 10)}).isEmpty());
  // A stride shorter than a row: nothing is read.
  QVERIFY(digest.changed(d.bits.data(), 16, {QRect(0, 0, 4, 4)}).isEmpty());
}

// Issue 27 (the reader's CPU on the legacy path): inside a marked frame a tile is hashed only
// until it is found changed, then reported at every touch without a hash, and settle() gives it
// its final digest at the frame's end. No change may go unreported: not one drawn after the
// tile changed, nor one the next frame makes relative to the frame's final pixels.
void TstTileDigest::aTileChangedInAFrameIsDamageUntilTheFrameEnds() {
  Desktop d(QSize(128, 64));
  TileDigest digest;
  digest.reset(d.size);
  const QRect tile0(0, 0, 64, 64), tile1(64, 0, 64, 64);
  const auto touch = [&](const QRect& r) { return digest.touch(d.bits.data(), d.stride, {r}); };
  const auto settle = [&] { digest.settle(d.bits.data(), d.stride); };
  d.set(1, 1, 0xffaaaaaa); // A
  QCOMPARE(digest.changed(d.bits.data(), d.stride, {QRect(0, 0, 128, 64)}).size(), 2);

  // A frame that draws B, then A again: damage both times (the frame changed the tile, then
  // the tile is damage for the rest of the frame), its final digest is A's.
  d.set(1, 1, 0xffbbbbbb);
  QCOMPARE(touch(QRect(0, 0, 8, 8)), (QList<QRect>{tile0}));
  d.set(1, 1, 0xffaaaaaa);
  QCOMPARE(touch(QRect(0, 0, 8, 8)), (QList<QRect>{tile0}));
  settle();
  QVERIFY(touch(QRect(0, 0, 8, 8)).isEmpty()); // A again: no change against the frame's end
  settle();

  // A frame that draws B, then C; the next frame draws B: a change against C, reported
  // (the digest was taken again at the frame's end, not left at B).
  d.set(1, 1, 0xffbbbbbb);
  QCOMPARE(touch(QRect(0, 0, 4, 4)), (QList<QRect>{tile0}));
  d.set(1, 1, 0xffcccccc);
  QCOMPARE(touch(QRect(0, 0, 4, 4)), (QList<QRect>{tile0}));
  settle();
  d.set(1, 1, 0xffbbbbbb);
  QCOMPARE(touch(QRect(0, 0, 4, 4)), (QList<QRect>{tile0}));
  settle();

  // A tile found unchanged is hashed again at its next touch in the same frame.
  QVERIFY(touch(tile1).isEmpty());
  d.set(70, 3, 0xff010203);
  QCOMPARE(touch(tile1), (QList<QRect>{tile1}));
  settle();
  QVERIFY(digest.changed(d.bits.data(), d.stride, {QRect(0, 0, 128, 64)}).isEmpty());
}

QTEST_APPLESS_MAIN(TstTileDigest)
#include "tst_tiledigest.moc"
