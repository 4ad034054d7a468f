// DesktopFrames: the frame pool between FreeRDP's GDI buffer (worker) and the main thread.
#include "readerhost/DesktopFrames.h"

#include <QElapsedTimer>
#include <QSet>
#include <QTest>
#include <QThread>

#include <atomic>
#include <vector>

using gc::DesktopFrames;

namespace {

// A stand-in for FreeRDP's GDI buffer: BGRX rows with a stride wider than the desktop.
struct Gdi {
  explicit Gdi(QSize s)
      : size(s), stride(qsizetype(s.width()) * 4 + 64), bytes(std::size_t(stride * s.height()), 0) {}
  void fill(const QRect& rect, quint32 pixel) {
    for (int y = rect.top(); y <= rect.bottom(); ++y)
      for (int x = rect.left(); x <= rect.right(); ++x)
        std::memcpy(bytes.data() + qsizetype(y) * stride + qsizetype(x) * 4, &pixel, 4);
  }
  quint32 at(int x, int y) const {
    quint32 pixel;
    std::memcpy(&pixel, bytes.data() + qsizetype(y) * stride + qsizetype(x) * 4, 4);
    return pixel;
  }
  // Paints `rect` and reports it to `frames` as one update, like FreeRDP's EndPaint.
  DesktopFrames::Absorbed draw(DesktopFrames& frames, const QRect& rect, quint32 pixel) {
    fill(rect, pixel);
    return absorbInto(frames, {rect});
  }
  DesktopFrames::Absorbed absorbInto(DesktopFrames& frames, std::initializer_list<QRect> rects) const {
    const std::vector<QRect> list(rects);
    return frames.absorb(bytes.data(), stride, size, list);
  }
  QSize size;
  qsizetype stride;
  std::vector<uchar> bytes;
};

// A desktop whose first (full) frame has been handed out already.
Gdi shownDesktop(DesktopFrames& frames, QSize size) {
  Gdi gdi(size);
  gdi.absorbInto(frames, {QRect(QPoint(0, 0), size)});
  frames.take();
  return gdi;
}

bool equalsGdi(const QImage& frame, const Gdi& gdi) {
  if (frame.size() != gdi.size)
    return false;
  for (int y = 0; y < gdi.size.height(); ++y)
    if (std::memcmp(frame.constScanLine(y), gdi.bytes.data() + qsizetype(y) * gdi.stride,
                    std::size_t(gdi.size.width()) * 4))
      return false;
  return true;
}

} // namespace

class tst_DesktopFrames : public QObject {
  Q_OBJECT
private slots:
  void firstUpdateHandsOutTheWholeDesktop() {
    DesktopFrames frames;
    Gdi gdi(QSize(64, 48));
    gdi.fill(QRect(0, 0, 64, 48), 0xff102030);
    const auto absorbed = gdi.absorbInto(frames, {QRect(5, 5, 2, 2)});
    QVERIFY(absorbed.changed);
    QVERIFY(absorbed.firstPending);
    const auto taken = frames.take();
    QVERIFY(equalsGdi(taken.frame, gdi));
    QCOMPARE(taken.dirty, QList<QRect>{QRect(0, 0, 64, 48)});
  }

  void unchangedRepaintIsNotHandedOut() {
    DesktopFrames frames;
    Gdi gdi(QSize(64, 48));
    gdi.absorbInto(frames, {QRect(0, 0, 64, 48)});
    const QImage first = frames.take().frame;
    // The server resends the same pixels (a static screen): no damage, nothing to take.
    const auto absorbed = gdi.absorbInto(frames, {QRect(0, 0, 64, 48), QRect(10, 10, 5, 5)});
    QVERIFY(!absorbed.changed);
    QVERIFY(!absorbed.firstPending);
    QVERIFY(frames.take().frame.isNull());
    QVERIFY(!first.isNull());
  }

  void damageIsTightenedToTheRowsThatChanged() {
    DesktopFrames frames;
    Gdi gdi(QSize(64, 48));
    gdi.absorbInto(frames, {QRect(0, 0, 64, 48)});
    const QImage first = frames.take().frame;
    gdi.fill(QRect(20, 30, 3, 2), 0xffabcdef);
    const auto absorbed = gdi.absorbInto(frames, {QRect(0, 0, 64, 48)});
    QVERIFY(absorbed.changed);
    const auto taken = frames.take();
    QCOMPARE(taken.dirty, QList<QRect>{QRect(0, 30, 64, 2)});
    QVERIFY(equalsGdi(taken.frame, gdi));
  }

  void aHeldFrameIsNeverWrittenAgain() {
    DesktopFrames frames;
    Gdi gdi(QSize(32, 32));
    QList<QImage> held;
    QList<QImage> copies;
    for (int i = 0; i < 12; ++i) {
      gdi.fill(QRect(i, i, 4, 4), 0xff000000u | quint32(i * 20));
      gdi.absorbInto(frames, {QRect(i, i, 4, 4)});
      const QImage frame = frames.take().frame;
      QVERIFY(equalsGdi(frame, gdi));
      held.append(frame);
      copies.append(frame.copy()); // deep
    }
    for (int i = 0; i < held.size(); ++i)
      QCOMPARE(held[i], copies[i]);
  }

  void framesAreReusedWhenReleased_data() {
    QTest::addColumn<int>("holdBack"); // how many recent frames a consumer keeps
    QTest::addColumn<int>("maxPool");
    QTest::newRow("only the newest") << 1 << 3;
    QTest::newRow("newest and the one encoding") << 2 << 4;
  }
  void framesAreReusedWhenReleased() {
    QFETCH(int, holdBack);
    QFETCH(int, maxPool);
    DesktopFrames frames;
    Gdi gdi(QSize(40, 30));
    QList<QImage> held;
    QSet<qint64> buffers; // QImage::cacheKey()'s high half names the pixel buffer
    for (int i = 0; i < 200; ++i) {
      gdi.fill(QRect(i % 40, (i * 7) % 30, 1, 1), 0xff000000u | quint32(i));
      gdi.absorbInto(frames, {QRect(i % 40, (i * 7) % 30, 1, 1)});
      const auto taken = frames.take();
      QVERIFY(equalsGdi(taken.frame, gdi)); // a reused frame caught up with what it missed
      held.append(taken.frame);
      buffers.insert(taken.frame.cacheKey() >> 32);
      while (held.size() > holdBack)
        held.removeFirst();
      QVERIFY2(frames.poolSize() <= maxPool, qPrintable(QString::number(frames.poolSize())));
    }
    // No buffer per update: the same few are written again (a detach would make a new one).
    QVERIFY2(buffers.size() <= maxPool, qPrintable(QString::number(buffers.size())));
  }

  void resizeRestartsWithAFullFrame() {
    DesktopFrames frames;
    Gdi small(QSize(32, 32));
    small.absorbInto(frames, {QRect(0, 0, 32, 32)});
    const QImage before = frames.take().frame;
    QVERIFY(frames.resize(QSize(48, 40)));
    Gdi large(QSize(48, 40));
    large.fill(QRect(0, 0, 48, 40), 0xff445566);
    large.absorbInto(frames, {QRect(1, 1, 1, 1)});
    const auto taken = frames.take();
    QCOMPARE(taken.resized, std::optional<QSize>(QSize(48, 40)));
    QVERIFY(equalsGdi(taken.frame, large));
    QCOMPARE(taken.dirty, QList<QRect>{QRect(0, 0, 48, 40)});
    QCOMPARE(before.size(), QSize(32, 32));
  }

  void rectsOutsideTheDesktopAreClipped() {
    DesktopFrames frames;
    Gdi gdi = shownDesktop(frames, QSize(16, 16));
    gdi.fill(QRect(14, 14, 2, 2), 0xff0000ff);
    const auto absorbed = gdi.absorbInto(frames, {QRect(12, 12, 100, 100), QRect(-50, -50, 10, 10)});
    QVERIFY(absorbed.changed);
    const auto taken = frames.take();
    QCOMPARE(taken.dirty, QList<QRect>{QRect(12, 14, 4, 2)});
    QVERIFY(equalsGdi(taken.frame, gdi));
  }

  void aMarkedFrameIsHandedOutWholeAtItsEnd() {
    DesktopFrames frames;
    Gdi gdi = shownDesktop(frames, QSize(32, 32));
    frames.beginFrame();
    gdi.fill(QRect(0, 0, 32, 16), 0xff111111);
    QVERIFY(!gdi.absorbInto(frames, {QRect(0, 0, 32, 16)}).firstPending); // held back
    QVERIFY(frames.take().frame.isNull()); // a take posted earlier gets nothing of it
    gdi.fill(QRect(0, 16, 32, 16), 0xff222222);
    QVERIFY(gdi.absorbInto(frames, {QRect(0, 16, 32, 16)}).changed);
    QVERIFY(frames.endFrame());
    const auto taken = frames.take();
    QVERIFY(equalsGdi(taken.frame, gdi));
    QCOMPARE(taken.dirty, (QList<QRect>{QRect(0, 0, 32, 16), QRect(0, 16, 32, 16)}));
  }

  void aFrameEndedWhileTheNextIsDrawnIsStillHandedOut() {
    // The worker finishes frame 1 and is halfway through frame 2 when the main thread gets to
    // its take(): it gets all of frame 1, then all of frame 2 after its end.
    DesktopFrames frames;
    Gdi gdi = shownDesktop(frames, QSize(32, 32));
    frames.beginFrame();
    gdi.draw(frames, QRect(0, 0, 32, 32), 0xff010101);
    QVERIFY(frames.endFrame());
    const Gdi afterFirst = gdi;
    frames.beginFrame();
    gdi.draw(frames, QRect(0, 0, 32, 16), 0xff020202);
    const auto first = frames.take();
    QVERIFY(equalsGdi(first.frame, afterFirst));
    QCOMPARE(first.dirty, QList<QRect>{QRect(0, 0, 32, 32)});
    gdi.draw(frames, QRect(0, 16, 32, 16), 0xff020202);
    QVERIFY(frames.endFrame());
    const auto second = frames.take();
    QVERIFY(equalsGdi(second.frame, gdi));
    QCOMPARE(second.dirty, (QList<QRect>{QRect(0, 0, 32, 16), QRect(0, 16, 32, 16)}));
    QVERIFY(equalsGdi(first.frame, afterFirst)); // still intact while held
  }

  void publishedFramesNotTakenAreCoalesced() {
    DesktopFrames frames;
    Gdi gdi = shownDesktop(frames, QSize(16, 16));
    for (int i = 0; i < 5; ++i) {
      frames.beginFrame();
      gdi.fill(QRect(i, 0, 1, 1), 0xff0000ffu);
      gdi.absorbInto(frames, {QRect(i, 0, 1, 1)});
      QCOMPARE(frames.endFrame(), i == 0); // one take is posted for all of them
    }
    const auto taken = frames.take();
    QVERIFY(equalsGdi(taken.frame, gdi));
    QCOMPARE(taken.dirty.size(), 5);
    QVERIFY(frames.poolSize() <= 3);
  }

  void aFrameNeverEndedIsHandedOutAfterTheHold() {
    DesktopFrames frames;
    Gdi gdi = shownDesktop(frames, QSize(32, 32));
    frames.beginFrame();
    gdi.draw(frames, QRect(3, 3, 1, 1), 0xff333333);
    QElapsedTimer clock;
    clock.start();
    bool released = false; // releaseOverdue() answers true once; QTRY_* evaluates again
    QTRY_VERIFY_WITH_TIMEOUT(released || (released = frames.releaseOverdue()), 2000);
    QVERIFY(clock.elapsed() >= 90);
    const auto taken = frames.take();
    QVERIFY(equalsGdi(taken.frame, gdi));
  }

  void anEmptyMarkedFrameHandsOutNothing() {
    DesktopFrames frames;
    Gdi gdi = shownDesktop(frames, QSize(8, 8));
    frames.beginFrame();
    gdi.absorbInto(frames, {QRect(0, 0, 8, 8)}); // same pixels again
    QVERIFY(!frames.endFrame());
    QVERIFY(frames.take().frame.isNull());
  }

  void aStaticDesktopKeepsOnlyTheFrameOnShow() {
    DesktopFrames frames;
    Gdi gdi(QSize(32, 32));
    gdi.absorbInto(frames, {QRect(0, 0, 32, 32)});
    QImage shown = frames.take().frame;
    gdi.draw(frames, QRect(1, 1, 1, 1), 0xff00ff00);
    shown = frames.take().frame; // the first frame is now a free spare
    QCOMPARE(frames.poolSize(), 2);
    frames.trimIdle(); // too early: updates just came
    QCOMPARE(frames.poolSize(), 2);
    QTRY_COMPARE_WITH_TIMEOUT((frames.trimIdle(), frames.poolSize()), 1, 5000);
    QVERIFY(equalsGdi(shown, gdi));
    // The next update still works (a new frame is brought up to date from the one on show).
    gdi.draw(frames, QRect(2, 2, 1, 1), 0xff0000ff);
    QVERIFY(equalsGdi(frames.take().frame, gdi));
  }

  void wipeForgetsEveryFrame() {
    DesktopFrames frames;
    Gdi gdi(QSize(16, 16));
    gdi.absorbInto(frames, {QRect(0, 0, 16, 16)});
    QImage held = frames.take().frame;
    gdi.draw(frames, QRect(0, 0, 1, 1), 0xff0000ff);
    QCOMPARE(frames.poolSize(), 2);
    frames.wipe();
    QCOMPARE(frames.poolSize(), 0);
    QCOMPARE(frames.bytesHeld(), 0);
    QVERIFY(frames.take().frame.isNull()); // the pending update went with it
    QCOMPARE(held.size(), QSize(16, 16));  // a holder's frame stays intact
  }

  void concurrentWriterAndHoldersNeverSeeATornFrame() {
    // The worker absorbs full-screen updates of one colour each while the main thread takes
    // frames and another thread holds and reads them (like the encoder): every frame it sees
    // is one colour, i.e. no frame is written while anyone holds it (under TSan/ASan this
    // also exercises the pool's refcount check across threads).
    DesktopFrames frames;
    Gdi gdi(QSize(256, 128));
    std::atomic<bool> written{false};
    std::atomic<bool> handedAll{false};
    std::atomic<int> torn{0};
    std::atomic<int> checked{0};
    QList<QImage> inbox;
    std::mutex inboxMutex;
    std::thread writer([&] {
      for (quint32 i = 1; i <= 400; ++i) {
        gdi.fill(QRect(0, 0, 256, 128), 0xff000000u | i);
        gdi.absorbInto(frames, {QRect(0, 0, 256, 128)});
      }
      written = true;
    });
    std::thread holder([&] {
      for (;;) {
        QImage frame;
        {
          std::lock_guard lock(inboxMutex);
          if (!inbox.isEmpty())
            frame = inbox.takeFirst();
        }
        if (frame.isNull()) {
          if (handedAll)
            return;
          std::this_thread::yield();
          continue;
        }
        const quint32 first = reinterpret_cast<const quint32*>(frame.constScanLine(0))[0];
        for (int y = 0; y < frame.height(); ++y)
          for (int x = 0; x < frame.width(); ++x)
            if (reinterpret_cast<const quint32*>(frame.constScanLine(y))[x] != first)
              ++torn;
        ++checked;
      }
    });
    for (bool last = false; !last;) {
      last = written;
      const QImage frame = frames.take().frame;
      if (!frame.isNull()) {
        std::lock_guard lock(inboxMutex);
        inbox.append(frame);
      }
    }
    writer.join();
    handedAll = true;
    holder.join();
    QVERIFY(checked > 0);
    QCOMPARE(torn.load(), 0);
  }
};

QTEST_GUILESS_MAIN(tst_DesktopFrames)
#include "tst_desktopframes.moc"
