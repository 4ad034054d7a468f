// The frame pipeline, end to end: packets are decoded by an independent GCF1 decoder (below)
// onto a canvas, which must equal the source exactly on the lossless path.
#include "bridge/frames/DamageMask.h"
#include "bridge/frames/FrameEncoder.h"
#include "bridge/frames/FramePacket.h"
#include "bridge/frames/FramePipeline.h"
#include "privacy/SecureZero.h"
#include "tests/bench/SyntheticDesktop.h"

#include <QSignalSpy>
#include <QTest>
#include <QtEndian>

#include <cmath>
#include <sys/uio.h>
#include <unistd.h>

using namespace gc;

namespace {

// Reads our own memory through the kernel: a freed block can be inspected without a
// use-after-free (under ASan it stays in quarantine, unreused). Short if unmapped.
// The scratch is static: a heap buffer could be the very block being inspected.
QByteArray readOwn(quintptr address, qsizetype length) {
  static char scratch[1 << 16];
  length = qMin<qsizetype>(length, sizeof scratch);
  iovec local{scratch, size_t(length)};
  iovec remote{reinterpret_cast<void*>(address), size_t(length)};
  const ssize_t n = ::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0);
  return QByteArray(scratch, n > 0 ? qsizetype(n) : 0);
}

struct DecodedRect {
  QRect rect;
  int encoding = 0;
  QByteArray data;
};

struct DecodedPacket {
  bool ok = false;
  QString error;
  quint32 frame = 0;
  QSize desktop;
  QList<DecodedRect> rects;
};

// The panel's side of binaryFrame in resources/protocol/panel-protocol.json.
DecodedPacket parse(const QByteArray& bytes) {
  DecodedPacket p;
  const auto* d = reinterpret_cast<const uchar*>(bytes.constData());
  qsizetype at = 0;
  auto need = [&](qsizetype n) { return at + n <= bytes.size(); };
  if (!need(14)) {
    p.error = QStringLiteral("short header");
    return p;
  }
  if (qFromLittleEndian<quint32>(d) != 0x31464347U) {
    p.error = QStringLiteral("bad magic");
    return p;
  }
  p.frame = qFromLittleEndian<quint32>(d + 4);
  p.desktop = QSize(qFromLittleEndian<quint16>(d + 8), qFromLittleEndian<quint16>(d + 10));
  const int count = qFromLittleEndian<quint16>(d + 12);
  at = 14;
  for (int i = 0; i < count; ++i) {
    if (!need(13)) {
      p.error = QStringLiteral("short rect header");
      return p;
    }
    DecodedRect r;
    r.rect = QRect(qFromLittleEndian<quint16>(d + at), qFromLittleEndian<quint16>(d + at + 2),
                   qFromLittleEndian<quint16>(d + at + 4), qFromLittleEndian<quint16>(d + at + 6));
    r.encoding = d[at + 8];
    const quint32 length = qFromLittleEndian<quint32>(d + at + 9);
    at += 13;
    if (!need(length)) {
      p.error = QStringLiteral("short rect data");
      return p;
    }
    r.data = bytes.mid(at, length);
    at += length;
    p.rects.append(r);
  }
  p.ok = at == bytes.size();
  if (!p.ok) {
    p.error = QStringLiteral("trailing bytes");
  }
  return p;
}

// Applies a whole packet (all rects, then "present") to the canvas.
bool apply(QImage& canvas, const QByteArray& bytes, DecodedPacket* out = nullptr) {
  const DecodedPacket p = parse(bytes);
  if (out != nullptr) {
    *out = p;
  }
  if (!p.ok) {
    qWarning() << "packet does not parse:" << p.error;
    return false;
  }
  if (canvas.size() != p.desktop) {
    canvas = QImage(p.desktop, QImage::Format_RGB32);
    canvas.fill(0xffff00ff); // magenta: any pixel never painted shows up in a compare
  }
  for (const DecodedRect& r : p.rects) {
    QImage tile;
    if ((r.encoding != 1 && r.encoding != 2) ||
        !tile.loadFromData(r.data, r.encoding == 1 ? "PNG" : "JPEG") || tile.size() != r.rect.size() ||
        !QRect(QPoint(0, 0), canvas.size()).contains(r.rect)) {
      qWarning() << "bad rect" << r.rect << r.encoding << tile.size();
      return false;
    }
    tile = tile.convertToFormat(QImage::Format_RGB32);
    for (int y = 0; y < r.rect.height(); ++y) {
      std::memcpy(canvas.scanLine(r.rect.y() + y) + r.rect.x() * 4, tile.constScanLine(y),
                  size_t(r.rect.width()) * 4);
    }
  }
  return true;
}

// Number of pixels whose RGB differs (alpha/X is not part of the picture).
qint64 differingPixels(const QImage& a, const QImage& b) {
  if (a.size() != b.size()) {
    return -1;
  }
  qint64 n = 0;
  for (int y = 0; y < a.height(); ++y) {
    const auto* pa = reinterpret_cast<const QRgb*>(a.constScanLine(y));
    const auto* pb = reinterpret_cast<const QRgb*>(b.constScanLine(y));
    for (int x = 0; x < a.width(); ++x) {
      n += ((pa[x] ^ pb[x]) & 0xffffffU) != 0 ? 1 : 0;
    }
  }
  return n;
}

double psnr(const QImage& a, const QImage& b, const QRect& area) {
  double sum = 0;
  for (int y = area.top(); y <= area.bottom(); ++y) {
    const auto* pa = reinterpret_cast<const QRgb*>(a.constScanLine(y));
    const auto* pb = reinterpret_cast<const QRgb*>(b.constScanLine(y));
    for (int x = area.left(); x <= area.right(); ++x) {
      const int dr = qRed(pa[x]) - qRed(pb[x]);
      const int dg = qGreen(pa[x]) - qGreen(pb[x]);
      const int db = qBlue(pa[x]) - qBlue(pb[x]);
      sum += dr * dr + dg * dg + db * db;
    }
  }
  const double mse = sum / (3.0 * area.width() * area.height());
  return mse == 0 ? 99.0 : 10.0 * std::log10(255.0 * 255.0 / mse);
}

FrameJob job(const QImage& frame, const QList<QRect>& dirty, quint32 id, bool full = false) {
  FrameJob j;
  j.frame = frame;
  j.damage = DamageMask(frame.size());
  for (const QRect& r : dirty) {
    j.damage.add(r);
  }
  j.full = full;
  j.frameId = id;
  return j;
}

QRect all(const QImage& image) {
  return QRect(QPoint(0, 0), image.size());
}

bool allZero(const uchar* data, qsizetype size) {
  for (qsizetype i = 0; i < size; ++i) {
    if (data[i] != 0) {
      return false;
    }
  }
  return true;
}

} // namespace

class tst_FramePipeline : public QObject {
  Q_OBJECT

private slots:
  void headerFollowsTheProtocolLayout();
  void fullFrameDecodesExactly_data();
  void fullFrameDecodesExactly();
  void losslessChangesDecodeExactly_data();
  void losslessChangesDecodeExactly();
  void unchangedFrameSendsNothing();
  void smallChangeSendsOnlyTheChangedArea_data();
  void smallChangeSendsOnlyTheChangedArea();
  void animationGoesLossyWithinPsnr_data();
  void animationGoesLossyWithinPsnr();
  void encoderWipeZeroesBuffers();
  void aFullySentFrameIsTheReferenceWithoutACopy();
  void stalledPanelCoalescesWithBoundedMemory();
  void resetSendsAFullFrame();
  void wipeReleasesEverythingAndRestartsFull();
  void growingAnEncodingLeavesNoStaleCopy();
  void packetsAreZeroedOnceNobodyElseHoldsThem();
  void wipeReportsPacketsItCouldNotZero();
  void lossyAreasAreRefinedLosslesslyWhenQuiet();
  void pathologicalInputStaysCorrect_data();
  void pathologicalInputStaysCorrect();
};

void tst_FramePipeline::headerFollowsTheProtocolLayout() {
  FramePacket packet(0x01020304, QSize(1920, 1080));
  QVERIFY(packet.beginRect(QRect(1, 2, 3, 4), Encoding::Jpeg));
  packet.data().append("abc");
  packet.finishRect();
  const QByteArray bytes = packet.take();
  const QByteArray expected = QByteArray("GCF1") +
                              QByteArray::fromHex("04030201"
                                                  "8007"
                                                  "3804"
                                                  "0100") +
                              QByteArray::fromHex("0100"
                                                  "0200"
                                                  "0300"
                                                  "0400"
                                                  "02"
                                                  "03000000") +
                              "abc";
  QCOMPARE(bytes.toHex(), expected.toHex());
}

void tst_FramePipeline::fullFrameDecodesExactly_data() {
  QTest::addColumn<QImage>("frame");
  QTest::newRow("1x1") << synthetic::noise(QSize(1, 1), 1);
  QTest::newRow("odd size noise 130x67") << synthetic::noise(QSize(130, 67), 2);
  QTest::newRow("text page 800x600") << synthetic::textPage(QSize(800, 600));
  QTest::newRow("gradient 1920x1080") << synthetic::animationFrame(QSize(1920, 1080), 0);
}

void tst_FramePipeline::fullFrameDecodesExactly() {
  QFETCH(QImage, frame);
  FrameEncoder encoder;
  const FrameResult result = encoder.encode(job(frame, {}, 7, true));
  QImage canvas;
  DecodedPacket p;
  QVERIFY(apply(canvas, result.packet, &p));
  QCOMPARE(p.frame, 7U);
  QCOMPARE(p.desktop, frame.size());
  for (const DecodedRect& r : p.rects) {
    QCOMPARE(r.encoding, 1);
  }
  QCOMPARE(differingPixels(canvas, frame), 0);
}

void tst_FramePipeline::losslessChangesDecodeExactly_data() {
  QTest::addColumn<QList<QRect>>("changes");
  QTest::newRow("one glyph") << QList<QRect>{QRect(100, 50, 10, 16)};
  QTest::newRow("glyph across four tiles") << QList<QRect>{QRect(60, 60, 10, 16)};
  QTest::newRow("right and bottom edge") << QList<QRect>{QRect(630, 470, 10, 10)};
  QTest::newRow("scattered blocks") << QList<QRect>{QRect(0, 0, 5, 5), QRect(300, 200, 40, 3),
                                                    QRect(500, 10, 1, 400), QRect(639, 479, 1, 1)};
  QTest::newRow("large noise block") << QList<QRect>{QRect(10, 10, 500, 300)};
}

void tst_FramePipeline::losslessChangesDecodeExactly() {
  QFETCH(QList<QRect>, changes);
  FrameEncoder encoder;
  QImage frame = synthetic::textPage(QSize(640, 480));
  QImage canvas;
  QVERIFY(apply(canvas, encoder.encode(job(frame, {}, 1, true)).packet));
  // Several rounds of the same areas with new content: the history must not make a small
  // change lossy, and each round must land exactly.
  for (quint32 round = 0; round < 2; ++round) {
    QImage next = frame.copy();
    for (const QRect& r : changes) {
      const QImage patch = synthetic::noise(r.size(), round * 31 + quint32(r.x()));
      for (int y = 0; y < r.height(); ++y) {
        std::memcpy(next.scanLine(r.y() + y) + r.x() * 4, patch.constScanLine(y), size_t(r.width()) * 4);
      }
    }
    const FrameResult result = encoder.encode(job(next, changes, 2 + round));
    QCOMPARE(result.jpegRects, 0);
    QVERIFY(apply(canvas, result.packet));
    QCOMPARE(differingPixels(canvas, next), 0);
    frame = next;
  }
}

void tst_FramePipeline::unchangedFrameSendsNothing() {
  FrameEncoder encoder;
  const QImage frame = synthetic::textPage(QSize(640, 480));
  encoder.encode(job(frame, {}, 1, true));
  // A fresh copy with the same pixels, the whole desktop reported dirty.
  const FrameResult result = encoder.encode(job(frame.copy(), {all(frame)}, 2));
  QVERIFY(result.packet.isEmpty());
  QCOMPARE(result.rects, 0);
}

void tst_FramePipeline::smallChangeSendsOnlyTheChangedArea_data() {
  QTest::addColumn<QPoint>("at");
  QTest::addColumn<QRect>("dirty");
  QTest::newRow("glyph, exact dirty rect") << QPoint(208, 68) << QRect(208, 68, 10, 16);
  QTest::newRow("glyph, whole screen dirty") << QPoint(208, 68) << QRect(0, 0, 1920, 1080);
  QTest::newRow("glyph straddling tiles") << QPoint(60, 120) << QRect(0, 64, 128, 128);
  QTest::newRow("glyph at bottom right") << QPoint(1910, 1064) << QRect(1900, 1060, 20, 20);
}

void tst_FramePipeline::smallChangeSendsOnlyTheChangedArea() {
  QFETCH(QPoint, at);
  QFETCH(QRect, dirty);
  FrameEncoder encoder;
  const QImage page = synthetic::textPage(QSize(1920, 1080));
  QImage canvas;
  QVERIFY(apply(canvas, encoder.encode(job(page, {}, 1, true)).packet));
  QImage typed = page.copy();
  synthetic::drawGlyph(typed, at.x(), at.y(), 0xC0FFEE);
  const FrameResult result = encoder.encode(job(typed, {dirty}, 2));
  DecodedPacket p;
  QVERIFY(apply(canvas, result.packet, &p));
  QCOMPARE(p.rects.size(), 1);
  const QRect glyph =
      QRect(at, QSize(synthetic::kGlyphWidth, synthetic::kGlyphHeight)).intersected(all(page));
  QVERIFY2(glyph.contains(p.rects.first().rect), qPrintable(QStringLiteral("sent %1,%2 %3x%4")
                                                                .arg(p.rects.first().rect.x())
                                                                .arg(p.rects.first().rect.y())
                                                                .arg(p.rects.first().rect.width())
                                                                .arg(p.rects.first().rect.height())));
  QVERIFY2(result.packet.size() <= 2048, qPrintable(QString::number(result.packet.size())));
  QCOMPARE(differingPixels(canvas, typed), 0);
}

void tst_FramePipeline::animationGoesLossyWithinPsnr_data() {
  QTest::addColumn<bool>("lagging");
  QTest::addColumn<double>("minPsnr");
  QTest::newRow("quality 80") << false << 32.0;
  QTest::newRow("panel lagging, quality 40") << true << 28.0;
}

void tst_FramePipeline::animationGoesLossyWithinPsnr() {
  QFETCH(bool, lagging);
  QFETCH(double, minPsnr);
  const QSize size(640, 480);
  const QRect video(64, 64, 448, 320);
  FrameEncoder encoder;
  QImage canvas;
  QImage frame = synthetic::textPage(size);
  QVERIFY(apply(canvas, encoder.encode(job(frame, {}, 1, true)).packet));
  int jpegFrames = 0;
  qsizetype lastBytes = 0;
  for (int t = 1; t <= 6; ++t) {
    QImage next = frame.copy();
    const QImage content = synthetic::animationFrame(video.size(), t);
    for (int y = 0; y < video.height(); ++y) {
      std::memcpy(next.scanLine(video.y() + y) + video.x() * 4, content.constScanLine(y),
                  size_t(video.width()) * 4);
    }
    FrameJob j = job(next, {video}, quint32(1 + t));
    j.lagging = lagging;
    const FrameResult result = encoder.encode(j);
    DecodedPacket p;
    QVERIFY(apply(canvas, result.packet, &p));
    if (result.jpegRects > 0) {
      ++jpegFrames;
      lastBytes = result.packet.size();
      QVERIFY2(psnr(canvas, next, video) >= minPsnr, qPrintable(QString::number(psnr(canvas, next, video))));
    } else {
      QCOMPARE(differingPixels(canvas, next), 0);
    }
    QCOMPARE(
        differingPixels(canvas.copy(0, 0, size.width(), video.y()), next.copy(0, 0, size.width(), video.y())),
        0);
    frame = next;
  }
  QVERIFY2(jpegFrames >= 3, "a region changing every frame must go lossy after a few frames");
  QVERIFY(lastBytes < video.width() * video.height()); // less than 1 byte per pixel
}

void tst_FramePipeline::encoderWipeZeroesBuffers() {
  FrameEncoder encoder;
  const QSize size(320, 240);
  encoder.encode(job(synthetic::noise(size, 1), {}, 1, true));
  for (int t = 0; t < 5; ++t) {
    encoder.encode(job(synthetic::animationFrame(size, t), {QRect(0, 0, 320, 240)}, quint32(2 + t)));
  }
  QVERIFY(encoder.jpeg().bytesHeld() > 0);
  QVERIFY(encoder.tiles().hasLossy());
  encoder.wipe();
  const QImage& reference = encoder.diff().reference();
  QCOMPARE(reference.size(), size);
  QVERIFY(allZero(reference.constBits(), reference.sizeInBytes()));
  QVERIFY(allZero(encoder.jpeg().scratch(), encoder.jpeg().bytesHeld()));
  QVERIFY(!encoder.tiles().hasLossy());
  for (int r = 0; r < encoder.tiles().rows(); ++r) {
    for (int c = 0; c < encoder.tiles().columns(); ++c) {
      QCOMPARE(encoder.tiles().recentChanges(c, r, 32), 0);
    }
  }
  encoder.release();
  QCOMPARE(encoder.bytesHeld(), 0);
}

void tst_FramePipeline::aFullySentFrameIsTheReferenceWithoutACopy() {
  FrameEncoder encoder;
  const QImage first = synthetic::textPage(QSize(320, 240));
  encoder.encode(job(first, {}, 1, true));
  QCOMPARE(encoder.diff().reference().constBits(), first.constBits()); // shared, not copied
  const QImage second = synthetic::animationFrame(QSize(320, 240), 3);
  QVERIFY(!encoder.encode(job(second, {all(second)}, 2)).packet.isEmpty());
  QCOMPARE(encoder.diff().reference().constBits(), second.constBits());
  QCOMPARE(first, synthetic::textPage(QSize(320, 240))); // the earlier frame was never written
  // Wiping drops a reference shared with its owner instead of zeroing the owner's pixels.
  encoder.wipe();
  QVERIFY(encoder.diff().reference().isNull());
  QCOMPARE(second, synthetic::animationFrame(QSize(320, 240), 3));
  // And the next frame is a full one again.
  QVERIFY(encoder.encode(job(first, {QRect(0, 0, 1, 1)}, 3)).rects > 0);
}

void tst_FramePipeline::stalledPanelCoalescesWithBoundedMemory() {
  FramePipeline pipeline;
  QSignalSpy packets(&pipeline, &FramePipeline::packetReady);
  const QSize size(640, 480);
  QImage frame = synthetic::textPage(size);
  pipeline.submit(frame, {all(frame)});
  QTRY_COMPARE(packets.size(), 1);
  qint64 heldAfterStall = -1;
  for (int i = 0; i < 1000; ++i) {
    QImage next = frame.copy(); // a new frame each time, as the RDP session hands over
    const QPoint at(int(synthetic::hash(quint32(i)) % 620), int(synthetic::hash(quint32(i) + 7) % 460));
    synthetic::drawGlyph(next, at.x(), at.y(), quint32(i));
    pipeline.submit(next, {QRect(at, QSize(synthetic::kGlyphWidth, synthetic::kGlyphHeight))});
    frame = next;
    if (i % 100 == 99) {
      QTRY_VERIFY(!pipeline.isEncoding());
      QVERIFY(packets.size() <= 2);
      if (heldAfterStall < 0) {
        heldAfterStall = pipeline.bytesHeld();
      }
      QVERIFY2(pipeline.bytesHeld() <= heldAfterStall,
               qPrintable(QStringLiteral("%1 > %2").arg(pipeline.bytesHeld()).arg(heldAfterStall)));
    }
  }
  QCOMPARE(packets.size(), 2);
  QCOMPARE(pipeline.unackedFrames(), 2);
  // The frame held while stalled is the newest one only, not one per submit.
  QVERIFY(heldAfterStall < 3 * frame.sizeInBytes());

  QImage canvas;
  for (const QList<QVariant>& packet : std::as_const(packets)) {
    QVERIFY(apply(canvas, packet.at(0).toByteArray()));
  }
  pipeline.acknowledge(packets.at(1).at(1).toUInt());
  QTRY_COMPARE(packets.size(), 3);
  QVERIFY(apply(canvas, packets.at(2).at(0).toByteArray()));
  QCOMPARE(differingPixels(canvas, frame), 0);
  QVERIFY(packets.at(2).at(1).toUInt() > packets.at(1).at(1).toUInt());
}

void tst_FramePipeline::resetSendsAFullFrame() {
  FramePipeline pipeline;
  QSignalSpy packets(&pipeline, &FramePipeline::packetReady);
  const QImage page = synthetic::textPage(QSize(800, 600));
  pipeline.submit(page, {all(page)});
  QTRY_COMPARE(packets.size(), 1);
  pipeline.acknowledge(packets.at(0).at(1).toUInt());
  QImage typed = page.copy();
  synthetic::drawGlyph(typed, 300, 300, 42);
  pipeline.submit(typed, {QRect(300, 300, 10, 16)});
  QTRY_COMPARE(packets.size(), 2);
  QVERIFY(packets.at(1).at(0).toByteArray().size() < 2048);

  pipeline.reset(); // a new panel, nothing submitted since: it still gets the desktop
  QTRY_COMPARE(packets.size(), 3);
  QImage fresh;
  QVERIFY(apply(fresh, packets.at(2).at(0).toByteArray()));
  QCOMPARE(differingPixels(fresh, typed), 0);
}

void tst_FramePipeline::wipeReleasesEverythingAndRestartsFull() {
  FramePipeline pipeline;
  QSignalSpy packets(&pipeline, &FramePipeline::packetReady);
  const QImage page = synthetic::textPage(QSize(640, 480));
  pipeline.submit(page, {all(page)});
  QTRY_COMPARE(packets.size(), 1);
  QVERIFY(pipeline.bytesHeld() > 0);
  pipeline.submit(synthetic::noise(QSize(640, 480), 5), {all(page)}); // in flight while wiping
  pipeline.wipe();
  QCOMPARE(pipeline.bytesHeld(), 0);
  QCOMPARE(pipeline.unackedFrames(), 0);
  QTest::qWait(50); // let a stale result arrive, if any: it must not be emitted
  QCOMPARE(pipeline.bytesHeld(), 0);
  const qsizetype before = packets.size();

  pipeline.submit(page, {QRect(0, 0, 1, 1)}); // tiny damage, but the panel has nothing
  QTRY_COMPARE(packets.size(), before + 1);
  QImage fresh;
  QVERIFY(apply(fresh, packets.last().at(0).toByteArray()));
  QCOMPARE(differingPixels(fresh, page), 0);
}

void tst_FramePipeline::growingAnEncodingLeavesNoStaleCopy() {
  QByteArray secret(96, '\0');
  for (int i = 0; i < secret.size(); ++i)
    secret[i] = char(0x40 + i % 61);
  QByteArray out;
  out.reserve(64);
  appendWiping(out, secret.constData(), 48);
  const quintptr old = quintptr(out.constData());
  appendWiping(out, secret.constData() + 48, 48); // outgrows the block
  QVERIFY(quintptr(out.constData()) != old);
  QCOMPARE(out, secret);
  // The block it grew out of holds zeros, not the first 48 bytes (QByteArray's own append
  // reallocates and leaves them).
  QCOMPARE(readOwn(old, 48), QByteArray(48, '\0'));

  truncateWiping(out, 10);
  QCOMPARE(out, secret.left(10));
  QCOMPARE(readOwn(quintptr(out.constData()) + 10, 86), QByteArray(86, '\0'));
  const qsizetype capacity = out.capacity();
  QVERIFY(secureWipe(out) >= capacity);
  QVERIFY(out.isNull());
  QByteArray shared = secret;
  QByteArray holder = shared;
  QCOMPARE(secureWipe(shared), 0); // another holder: left intact for it
  QCOMPARE(holder, secret);
}

void tst_FramePipeline::packetsAreZeroedOnceNobodyElseHoldsThem() {
  FramePipeline pipeline;
  quintptr at = 0;
  QByteArray seen; // a deep copy: the pipeline's packet itself is not kept here
  connect(&pipeline, &FramePipeline::packetReady, this, [&](const QByteArray& packet, quint32) {
    at = quintptr(packet.constData());
    seen = QByteArray(packet.constData(), packet.size());
  });
  const QImage page = synthetic::textPage(QSize(320, 240));
  pipeline.submit(page, {all(page)});
  QTRY_VERIFY(!seen.isEmpty());
  // The panel copies what it sends; once the queued result is gone the pipeline zeroes it.
  QTRY_VERIFY(readOwn(at + 16, seen.size() - 16) != seen.mid(16));
  const FramePipeline::Wiped wiped = pipeline.wipe();
  QVERIFY(wiped.complete());
  QVERIFY(wiped.encoderBytes >= page.sizeInBytes()); // the reference frame at least
  QVERIFY(wiped.packetBytesEmitted >= seen.size());
}

void tst_FramePipeline::wipeReportsPacketsItCouldNotZero() {
  FramePipeline pipeline;
  QSignalSpy packets(&pipeline, &FramePipeline::packetReady); // keeps a reference to each
  const QImage page = synthetic::textPage(QSize(320, 240));
  pipeline.submit(page, {all(page)});
  QTRY_COMPARE(packets.size(), 1);
  const QByteArray held = packets.at(0).at(0).toByteArray();
  const FramePipeline::Wiped wiped = pipeline.wipe();
  QCOMPARE(wiped.packetsShared, 1);
  QVERIFY(!wiped.complete());
  QVERIFY(wiped.packetBytesEmitted > 0);
  QImage canvas;
  QVERIFY(apply(canvas, held)); // the other holder's copy was left intact
  QCOMPARE(differingPixels(canvas, page), 0);
}

void tst_FramePipeline::lossyAreasAreRefinedLosslesslyWhenQuiet() {
  FramePipeline::Options options;
  options.refineDelayMs = 30;
  FramePipeline pipeline(options);
  QImage canvas;
  int jpegPackets = 0;
  int pngAfterJpeg = 0;
  connect(&pipeline, &FramePipeline::packetReady, this, [&](const QByteArray& packet, quint32 id) {
    DecodedPacket p;
    QVERIFY(apply(canvas, packet, &p));
    for (const DecodedRect& r : p.rects) {
      jpegPackets += r.encoding == 2 ? 1 : 0;
      pngAfterJpeg += r.encoding == 1 && jpegPackets > 0 ? 1 : 0;
    }
    pipeline.acknowledge(id);
  });
  const QSize size(512, 384);
  QImage frame;
  for (int t = 0; t < 8; ++t) {
    frame = synthetic::animationFrame(size, t);
    pipeline.submit(frame, {QRect(QPoint(0, 0), size)});
    QTRY_VERIFY(!pipeline.isEncoding());
  }
  QVERIFY(jpegPackets > 0);
  QTRY_VERIFY(pngAfterJpeg > 0);
  QTRY_COMPARE(differingPixels(canvas, frame), 0);
}

void tst_FramePipeline::pathologicalInputStaysCorrect_data() {
  QTest::addColumn<QString>("scenario");
  QTest::newRow("zero rects") << QStringLiteral("zero");
  QTest::newRow("rects outside the image") << QStringLiteral("outside");
  QTest::newRow("10000 tiny rects") << QStringLiteral("tiny");
  QTest::newRow("resized frames") << QStringLiteral("resize");
  QTest::newRow("null and odd formats") << QStringLiteral("formats");
}

void tst_FramePipeline::pathologicalInputStaysCorrect() {
  QFETCH(QString, scenario);
  FramePipeline pipeline;
  QImage canvas;
  int packets = 0;
  connect(&pipeline, &FramePipeline::packetReady, this, [&](const QByteArray& packet, quint32 id) {
    ++packets;
    QVERIFY(apply(canvas, packet));
    pipeline.acknowledge(id);
  });
  const QSize size(640, 480);
  QImage frame = synthetic::textPage(size);
  pipeline.submit(frame, {all(frame)});
  QTRY_COMPARE(packets, 1);

  if (scenario == QLatin1String("zero")) {
    pipeline.submit(frame.copy(), {});
    QTest::qWait(20);
    QTRY_VERIFY(!pipeline.isEncoding());
    QCOMPARE(packets, 1);
  } else if (scenario == QLatin1String("outside")) {
    QImage next = frame.copy();
    synthetic::drawGlyph(next, 630, 470, 5); // partly outside: clipped
    pipeline.submit(next, {QRect(-100, -100, 50, 50), QRect(5000, 5000, 10, 10), QRect(630, 470, 100, 100),
                           QRect(10, 10, -5, -5), QRect(-10, -10, 0x7fff0000, 0x7fff0000)});
    frame = next;
  } else if (scenario == QLatin1String("tiny")) {
    QImage next = frame.copy();
    QList<QRect> dirty;
    dirty.reserve(10000);
    for (int i = 0; i < 10000; ++i) {
      const int x = int(synthetic::hash(quint32(i)) % 640);
      const int y = int(synthetic::hash(quint32(i) + 1) % 480);
      reinterpret_cast<QRgb*>(next.scanLine(y))[x] = 0xff000000U | synthetic::hash(quint32(i) + 2);
      dirty.append(QRect(x, y, 1, 1));
    }
    pipeline.submit(next, dirty);
    frame = next;
  } else if (scenario == QLatin1String("resize")) {
    for (const QSize s : {QSize(800, 600), QSize(320, 200), QSize(1, 1), QSize(641, 479)}) {
      frame = synthetic::textPage(s, s.width());
      pipeline.submit(frame, {}); // a resize needs no dirty rect to be sent whole
      QTRY_VERIFY(!pipeline.isEncoding());
      QTRY_COMPARE(canvas.size(), s);
      QCOMPARE(differingPixels(canvas, frame), 0);
    }
  } else if (scenario == QLatin1String("formats")) {
    pipeline.submit(QImage(), {QRect(0, 0, 10, 10)});
    QImage rgb888 = frame.convertToFormat(QImage::Format_RGB888);
    synthetic::drawGlyph(frame, 20, 20, 9);
    rgb888 = frame.convertToFormat(QImage::Format_RGB888);
    pipeline.submit(rgb888, {QRect(20, 20, 10, 16)});
  }
  QTRY_VERIFY(!pipeline.isEncoding());
  QTRY_COMPARE(differingPixels(canvas, frame), 0);
}

QTEST_MAIN(tst_FramePipeline)
#include "tst_framepipeline.moc"
