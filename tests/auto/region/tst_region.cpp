// Region against QRegion (Qt Gui, which the reader no longer links): the same operations on
// the same rectangles give the same pixels. Region's bands are canonical (QRegion's are not
// always merged), so the pixels are compared, and Region's rectangles never overlap.
#include "common/Region.h"

#include <QRegion>
#include <QTest>

#include <algorithm>
#include <random>

using gc::Region;

namespace {

constexpr int kExtent = 64;
constexpr int kLow = -16, kHigh = 2 * kExtent; // every rectangle and translation stays inside

// Each pixel of the grid: how many of the rectangles hold it.
template <typename Rects> std::vector<int> coverage(const Rects& rects) {
  std::vector<int> grid(std::size_t((kHigh - kLow) * (kHigh - kLow)), 0);
  for (const QRect& r : rects) {
    for (int y = r.top(); y <= r.bottom(); ++y) {
      for (int x = r.left(); x <= r.right(); ++x)
        ++grid[std::size_t((y - kLow) * (kHigh - kLow) + (x - kLow))];
    }
  }
  return grid;
}

QRect randomRect(std::mt19937& rng, int extent) {
  std::uniform_int_distribution<int> pos(-4, extent), size(0, extent / 2);
  return QRect(pos(rng), pos(rng), size(rng), size(rng));
}

} // namespace

class tst_Region : public QObject {
  Q_OBJECT
private slots:
  void anEmptyOrInvalidRectIsNoRegion() {
    QVERIFY(Region(QRect()).isEmpty());
    QVERIFY(Region(QRect(5, 5, 0, 3)).isEmpty());
    QVERIFY(Region(QRect(5, 5, -2, 3)).isEmpty());
    QCOMPARE(Region(QRect(1, 2, 3, 4)).rects(), std::vector<QRect>{QRect(1, 2, 3, 4)});
  }

  void touchingRectsBecomeOneRect() {
    Region r;
    r += QRect(0, 0, 10, 5);
    r += QRect(10, 0, 5, 5); // beside: one span
    r += QRect(0, 5, 15, 3); // below, the same span: one band
    QCOMPARE(r.rects(), std::vector<QRect>{QRect(0, 0, 15, 8)});
  }

  void subtractingTheMiddleLeavesAFrame() {
    const Region r = Region(QRect(0, 0, 10, 10)).subtracted(Region(QRect(3, 3, 4, 4)));
    const std::vector<QRect> expected{QRect(0, 0, 10, 3), QRect(0, 3, 3, 4), QRect(7, 3, 3, 4),
                                      QRect(0, 7, 10, 3)};
    QCOMPARE(r.rects(), expected);
    QCOMPARE(r.boundingRect(), QRect(0, 0, 10, 10));
    QVERIFY(!r.covers(QRect(2, 2, 3, 3)));
    QVERIFY(r.covers(QRect(0, 0, 10, 3)));
    QVERIFY(r.covers(QRect()));
  }

  // A corner covered by pieces is covered; one pixel short is not.
  void coversNeedsEveryPixel() {
    const QRect corner(100, 100, 16, 16);
    Region r;
    r += QRect(100, 100, 16, 8);
    r += QRect(100, 108, 10, 8);
    QVERIFY(!r.covers(corner));
    r += QRect(110, 108, 6, 7);
    r += QRect(110, 115, 5, 1);
    QVERIFY(!r.covers(corner)); // (115,115) is missing
    r += QRect(115, 115, 1, 1);
    QVERIFY(r.covers(corner));
  }

  // Seeded random sequences of every operation, each step compared with QRegion's.
  void agreesWithQRegion_data() {
    QTest::addColumn<unsigned>("seed");
    for (unsigned seed = 1; seed <= 40; ++seed)
      QTest::newRow(qPrintable(QString::number(seed))) << seed;
  }
  void agreesWithQRegion() {
    QFETCH(unsigned, seed);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> pick(0, 5);
    Region ours;
    QRegion theirs;
    for (int step = 0; step < 200; ++step) {
      const QRect rect = randomRect(rng, kExtent);
      Region otherOurs(rect);
      QRegion otherTheirs(rect);
      for (int k = pick(rng); k > 0; --k) {
        const QRect more = randomRect(rng, kExtent);
        otherOurs += more;
        otherTheirs += more;
      }
      switch (pick(rng)) {
      case 0:
      case 1:
        ours = ours.united(otherOurs);
        theirs = theirs.united(otherTheirs);
        break;
      case 2:
        ours = ours.subtracted(otherOurs);
        theirs = theirs.subtracted(otherTheirs);
        break;
      case 3:
        ours = ours.intersected(rect);
        theirs = theirs.intersected(rect);
        break;
      case 4: {
        const QPoint delta(int(rng() % 9) - 4, int(rng() % 9) - 4);
        const QRect grid(kLow, kLow, kHigh - kLow, kHigh - kLow); // drift stays on the grid
        ours = ours.translated(delta).intersected(grid);
        theirs = theirs.translated(delta).intersected(grid);
        break;
      }
      default:
        ours += rect;
        theirs += rect;
      }
      QCOMPARE(ours.isEmpty(), theirs.isEmpty());
      QCOMPARE(ours.boundingRect(), theirs.boundingRect());
      const std::vector<int> mine = coverage(ours.rects());
      QVERIFY(std::all_of(mine.begin(), mine.end(), [](int n) { return n <= 1; })); // disjoint
      QCOMPARE(mine, coverage(theirs));
      QCOMPARE(ours.rectCount(), ours.rects().size());
      QCOMPARE(ours.covers(rect), theirs.intersected(rect) == QRegion(rect) || rect.isEmpty());
      if (ours.isEmpty()) { // start again from one rectangle
        const QRect fresh = randomRect(rng, kExtent);
        ours = Region(fresh);
        theirs = QRegion(fresh);
      }
    }
  }
};

QTEST_APPLESS_MAIN(tst_Region)
#include "tst_region.moc"
