// DesktopSurface: the surface of record and the changes a viewer replays (issue 27: one
// surface, moves passed through as moves).
#include "rdp/DesktopSurface.h"

#include <QRandomGenerator>
#include <QTest>

#include <cstring>
#include <vector>

using gc::DesktopSurface;

namespace {

// What a viewer holds: the previous picture, to which it applies the changes as the panel
// does (moves in order on its own picture, then the damage from the surface's pixels).
struct Viewer {
  QSize size;
  std::vector<quint32> pixels;

  void apply(const DesktopSurface::Changes& changes, const DesktopSurface& surface) {
    if (changes.resized) {
      size = *changes.resized;
      pixels.assign(std::size_t(size.width()) * std::size_t(size.height()), 0);
    }
    for (const DesktopSurface::Move& m : changes.moves) {
      const std::vector<quint32> before = pixels;
      const QPoint d = m.target - m.source.topLeft();
      for (int y = m.source.top(); y <= m.source.bottom(); ++y)
        for (int x = m.source.left(); x <= m.source.right(); ++x)
          at(x + d.x(), y + d.y()) = before[index(x, y)];
    }
    for (const QRect& r : changes.damage)
      for (int y = r.top(); y <= r.bottom(); ++y)
        for (int x = r.left(); x <= r.right(); ++x)
          at(x, y) = pixelOf(surface, x, y);
  }
  std::size_t index(int x, int y) const {
    return std::size_t(y) * std::size_t(size.width()) + std::size_t(x);
  }
  quint32& at(int x, int y) { return pixels[index(x, y)]; }
  static quint32 pixelOf(const DesktopSurface& s, int x, int y) {
    quint32 v;
    std::memcpy(&v, s.constBits() + qsizetype(y) * s.stride() + qsizetype(x) * 4, 4);
    return v;
  }
  bool matches(const DesktopSurface& s) const {
    if (s.size() != size)
      return false;
    for (int y = 0; y < size.height(); ++y)
      for (int x = 0; x < size.width(); ++x)
        if (pixels[index(x, y)] != pixelOf(s, x, y))
          return false;
    return true;
  }
};

std::vector<quint32> solid(QSize size, quint32 value) {
  return std::vector<quint32>(std::size_t(size.width()) * std::size_t(size.height()), value);
}

QRect randomRect(QRandomGenerator& rng, QSize desktop, int maxSide) {
  const int w = 1 + int(rng.bounded(maxSide));
  const int h = 1 + int(rng.bounded(maxSide));
  return QRect(int(rng.bounded(desktop.width() - w + 1)), int(rng.bounded(desktop.height() - h + 1)), w, h);
}

} // namespace

class tst_DesktopSurface : public QObject {
  Q_OBJECT
private slots:
  void refusesASizeBeyondItsMemory() {
    DesktopSurface surface(qsizetype(100) * 100 * 4);
    QVERIFY(surface.resize(QSize(100, 100)));
    QVERIFY(!surface.resize(QSize(101, 100)));
    QVERIFY(!surface.resize(QSize(0, 10)));
    QVERIFY(!surface.resize(QSize(65535, 65535)));
    QCOMPARE(surface.size(), QSize(100, 100));
  }

  void refusesWritesOutsideTheDesktop() {
    DesktopSurface surface(qsizetype(64) * 64 * 4);
    QVERIFY(surface.resize(QSize(64, 64)));
    (void)surface.takeChanges();
    const auto pixels = solid(QSize(16, 16), 0xFF112233);
    QVERIFY(!surface.write(QRect(56, 0, 16, 16), reinterpret_cast<const uchar*>(pixels.data()), 64));
    QVERIFY(!surface.write(QRect(-1, 0, 16, 16), reinterpret_cast<const uchar*>(pixels.data()), 64));
    QVERIFY(!surface.write(QRect(0, 0, 16, 16), reinterpret_cast<const uchar*>(pixels.data()), 60));
    QVERIFY(!surface.fill(QRect(0, 60, 4, 5), 0));
    QVERIFY(!surface.move(QRect(0, 0, 16, 16), QPoint(50, 50)));
    QVERIFY(!surface.move(QRect(60, 60, 8, 8), QPoint(0, 0)));
    QVERIFY(!surface.hasChanges());
  }

  void repaintingTheSamePixelsIsNoChange() {
    DesktopSurface surface(qsizetype(64) * 64 * 4);
    QVERIFY(surface.resize(QSize(64, 64)));
    const auto pixels = solid(QSize(16, 16), 0xFF445566);
    QVERIFY(surface.write(QRect(8, 8, 16, 16), reinterpret_cast<const uchar*>(pixels.data()), 64));
    (void)surface.takeChanges();
    QVERIFY(surface.write(QRect(8, 8, 16, 16), reinterpret_cast<const uchar*>(pixels.data()), 64));
    QVERIFY(surface.fill(QRect(8, 8, 16, 16), 0xFF445566));
    QVERIFY(!surface.hasChanges());
  }

  void damageIsWhereThePixelsChanged() {
    DesktopSurface surface(qsizetype(64) * 64 * 4);
    QVERIFY(surface.resize(QSize(64, 64)));
    (void)surface.takeChanges();
    auto pixels = solid(QSize(32, 8), 0); // the surface is zeroed: only one pixel differs
    pixels[std::size_t(3 * 32 + 20)] = 0xFFABCDEF;
    QVERIFY(surface.write(QRect(4, 4, 32, 8), reinterpret_cast<const uchar*>(pixels.data()), 32 * 4));
    const DesktopSurface::Changes changes = surface.takeChanges();
    QCOMPARE(changes.damage, QList<QRect>{QRect(24, 7, 1, 1)});
  }

  void aScrollIsOneMoveAndTheNewRows() {
    const QSize desktop(64, 64);
    DesktopSurface surface(qsizetype(64) * 64 * 4);
    QVERIFY(surface.resize(desktop));
    for (int y = 0; y < 64; ++y)
      QVERIFY(surface.fill(QRect(0, y, 64, 1), 0xFF000000u | quint32(y * 3)));
    Viewer viewer;
    viewer.apply(surface.takeChanges(), surface);
    QVERIFY(surface.move(QRect(0, 4, 64, 60), QPoint(0, 0)));
    QVERIFY(surface.fill(QRect(0, 60, 64, 4), 0xFF00FF00));
    const DesktopSurface::Changes changes = surface.takeChanges();
    QCOMPARE(changes.moves.size(), 1);
    QCOMPARE(changes.damage, QList<QRect>{QRect(0, 60, 64, 4)});
    viewer.apply(changes, surface);
    QVERIFY(viewer.matches(surface));
  }

  void aViewerReplayingTheChangesShowsTheSurface_data() {
    QTest::addColumn<quint32>("seed");
    for (quint32 seed : {1u, 2u, 3u, 42u, 1234u, 99991u})
      QTest::addRow("seed %u", seed) << seed;
  }
  // Writes, fills and overlapping moves in random order, in change sets of random length:
  // after each set the viewer's picture equals the surface, pixel for pixel.
  void aViewerReplayingTheChangesShowsTheSurface() {
    QFETCH(quint32, seed);
    QRandomGenerator rng(seed);
    const QSize desktop(97, 61);
    DesktopSurface surface(qsizetype(desktop.width()) * desktop.height() * 4);
    QVERIFY(surface.resize(desktop));
    Viewer viewer;
    viewer.apply(surface.takeChanges(), surface);
    for (int set = 0; set < 40; ++set) {
      const int ops = 1 + int(rng.bounded(12));
      for (int op = 0; op < ops; ++op) {
        const int kind = int(rng.bounded(3));
        const QRect r = randomRect(rng, desktop, 40);
        if (kind == 0) {
          std::vector<quint32> pixels(std::size_t(r.width()) * std::size_t(r.height()));
          for (quint32& p : pixels)
            p = 0xFF000000u | rng.bounded(4u); // few colours: many unchanged pixels
          QVERIFY(surface.write(r, reinterpret_cast<const uchar*>(pixels.data()), r.width() * 4));
        } else if (kind == 1) {
          QVERIFY(surface.fill(r, 0xFF000000u | rng.bounded(4u)));
        } else {
          const QPoint to(int(rng.bounded(desktop.width() - r.width() + 1)),
                          int(rng.bounded(desktop.height() - r.height() + 1)));
          QVERIFY(surface.move(r, to));
        }
      }
      viewer.apply(surface.takeChanges(), surface);
      QVERIFY2(viewer.matches(surface), qPrintable(QStringLiteral("after change set %1").arg(set)));
    }
  }

  void movesBeyondTheBoundAreDamage() {
    const QSize desktop(80, 8);
    DesktopSurface surface(qsizetype(80) * 8 * 4);
    QVERIFY(surface.resize(desktop));
    for (int x = 0; x < 80; ++x)
      QVERIFY(surface.fill(QRect(x, 0, 1, 8), 0xFF000000u | quint32(x)));
    Viewer viewer;
    viewer.apply(surface.takeChanges(), surface);
    for (int i = 0; i < DesktopSurface::kMaxMoves + 5; ++i)
      QVERIFY(surface.move(QRect(1, 0, 79, 8), QPoint(0, 0)));
    const DesktopSurface::Changes changes = surface.takeChanges();
    QCOMPARE(changes.moves.size(), DesktopSurface::kMaxMoves);
    viewer.apply(changes, surface);
    QVERIFY(viewer.matches(surface));
  }

  void wipeZeroesTheMemory() {
    std::vector<uchar> memory(64 * 64 * 4, 0);
    DesktopSurface surface{std::span<uchar>(memory)};
    QVERIFY(surface.resize(QSize(64, 64)));
    QVERIFY(surface.fill(QRect(0, 0, 64, 64), 0xFF5A5A5A));
    surface.wipe();
    QVERIFY(std::all_of(memory.begin(), memory.end(), [](uchar b) { return b == 0; }));
    QVERIFY(!surface.hasChanges());
  }
};

QTEST_GUILESS_MAIN(tst_DesktopSurface)
#include "tst_desktopsurface.moc"
