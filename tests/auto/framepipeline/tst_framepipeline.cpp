// The frame pipeline, end to end: packets are decoded by an independent GCF1 decoder (below)
// onto a canvas, which must equal the source exactly on the lossless path. The one C++ reader
// (FrameReader) is held to hostile packets here, and copy records (issue 27.5: a scroll sent
// as a move) are read back with it, since the independent decoder predates them.
#include "bridge/frames/DamageMask.h"
#include "bridge/frames/FrameEncoder.h"
#include "bridge/frames/FramePacket.h"
#include "bridge/frames/FramePipeline.h"
#include "bridge/frames/FrameReader.h"
#include "bridge/frames/MoveSearch.h"
#include "privacy/SecureBytes.h"
#include "tests/bench/SyntheticDesktop.h"

#include <QBuffer>
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

// Applies a packet with the one reader, as the viewer does; false (and a warning) if refused.
bool read(QImage& canvas, const QByteArray& bytes, int* copies = nullptr) {
  const Outcome<FrameReader> frame = FrameReader::parse(bytes);
  if (!frame.ok()) {
    qWarning() << "packet refused:" << frame.failure().message;
    return false;
  }
  Outcome<QImage> next = frame->apply(canvas);
  if (!next.ok()) {
    qWarning() << "packet does not apply:" << next.failure().message;
    return false;
  }
  canvas = std::move(next).value();
  if (copies != nullptr) {
    *copies = frame->copyCount();
  }
  return true;
}

// A GCF1 packet written by hand: header, then records given as raw bytes.
QByteArray handPacket(quint16 width, quint16 height, quint16 count, const QByteArray& body,
                      quint32 magic = 0x31464347U) {
  QByteArray out(14, '\0');
  qToLittleEndian<quint32>(magic, out.data());
  qToLittleEndian<quint32>(5, out.data() + 4);
  qToLittleEndian<quint16>(width, out.data() + 8);
  qToLittleEndian<quint16>(height, out.data() + 10);
  qToLittleEndian<quint16>(count, out.data() + 12);
  return out + body;
}

QByteArray record(quint16 x, quint16 y, quint16 w, quint16 h, quint8 encoding, const QByteArray& data,
                  qint64 declared = -1) {
  QByteArray out(13, '\0');
  qToLittleEndian<quint16>(x, out.data());
  qToLittleEndian<quint16>(y, out.data() + 2);
  qToLittleEndian<quint16>(w, out.data() + 4);
  qToLittleEndian<quint16>(h, out.data() + 6);
  out[8] = char(encoding);
  qToLittleEndian<quint32>(quint32(declared < 0 ? data.size() : declared), out.data() + 9);
  return out + data;
}

QByteArray copyBody(quint16 sx, quint16 sy) {
  QByteArray out(4, '\0');
  qToLittleEndian<quint16>(sx, out.data());
  qToLittleEndian<quint16>(sy, out.data() + 2);
  return out;
}

QByteArray pngOf(const QImage& image) {
  QByteArray out;
  QBuffer buffer(&out);
  buffer.open(QIODevice::WriteOnly);
  image.save(&buffer, "PNG");
  return out;
}

FrameEncoder::Settings pngOnly() {
  FrameEncoder::Settings s;
  s.policy.minLossyArea = qint64(1) << 40; // never lossy: every canvas must be exact
  return s;
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
  // The one reader and copy records (issues 28.1, 27.5).
  void readerTakesWhatTheWriterWrites();
  void readerRefusesHostilePackets_data();
  void readerRefusesHostilePackets();
  void readerRefusesAnImageOfAnotherSizeBeforeDecodingIt_data();
  void readerRefusesAnImageOfAnotherSizeBeforeDecodingIt();
  void copiesApplyAsThroughATemporary_data();
  void copiesApplyAsThroughATemporary();
  void writerPutsCopiesBeforeImagesOnly();
  void scrollIsSentAsACopyAndTheNewRows_data();
  void scrollIsSentAsACopyAndTheNewRows();
  void aPanelWithoutCopyRectGetsNoCopies();
  void scatteredSmallChangesAreNotSearchedForMoves();
  void movedLossyTilesAreRefinedToo();
  void moveSearchFindsNothingInNoise();
  void pipelineSendsCopiesOnlyOnceAllowed();
  void guestMovesAreSentWhenTheFrameShowsThem();
  void presentedNamesTheGuestSerialThePanelShowed();
  void encodingChangedSaysEachChangeOnce();
  void movesReadTheSharedReferenceWithoutCopyingIt_data();
  void movesReadTheSharedReferenceWithoutCopyingIt();
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

void tst_FramePipeline::readerTakesWhatTheWriterWrites() {
  const QImage red = synthetic::noise(QSize(8, 4), 3);
  FramePacket packet(42, QSize(64, 32));
  QVERIFY(packet.addCopy(QRect(0, 8, 64, 24), QPoint(0, 0)));
  QVERIFY(packet.beginRect(QRect(10, 28, 8, 4), Encoding::Png));
  packet.data().append(pngOf(red));
  packet.finishRect();
  const QByteArray bytes = packet.take();
  const Outcome<FrameReader> frame = FrameReader::parse(bytes);
  QVERIFY2(frame.ok(), qPrintable(frame.ok() ? QString() : frame.failure().message));
  QCOMPARE(frame->frameId(), 42U);
  QCOMPARE(frame->desktopSize(), QSize(64, 32));
  QCOMPARE(frame->rects().size(), 2);
  QCOMPARE(frame->copyCount(), 1);
  QVERIFY(frame->rects().at(0).isCopy());
  QCOMPARE(frame->rects().at(0).sourceArea(), QRect(0, 8, 64, 24));
  QCOMPARE(frame->rects().at(0).area, QRect(0, 0, 64, 24));
  QCOMPARE(frame->rects().at(1).encoding, Encoding::Png);
  // Applied: the canvas moved up 8 rows, then the image painted over it.
  const QImage before = synthetic::noise(QSize(64, 32), 9);
  const Outcome<QImage> after = frame->apply(before);
  QVERIFY(after.ok());
  QCOMPARE(differingPixels(after->copy(0, 0, 64, 24), before.copy(0, 8, 64, 24)), 0);
  QCOMPARE(differingPixels(after->copy(10, 28, 8, 4), red), 0);
  QCOMPARE(FrameReader::peekFrameId(bytes), std::optional<quint32>(42));
  QCOMPARE(FrameReader::peekFrameId(bytes.left(7)), std::nullopt);
}

// Issue 28.1: every bad packet is refused (PROTOCOL_MALFORMED), none is half-read.
void tst_FramePipeline::readerRefusesHostilePackets_data() {
  QTest::addColumn<QByteArray>("packet");
  const QByteArray png = pngOf(synthetic::noise(QSize(2, 2), 1));
  const QByteArray good = record(0, 0, 2, 2, 1, png);
  QTest::newRow("empty") << QByteArray();
  QTest::newRow("short header") << handPacket(8, 8, 0, {}).left(13);
  QTest::newRow("bad magic") << handPacket(8, 8, 0, {}, 0x31464348U);
  QTest::newRow("empty desktop") << handPacket(0, 8, 0, {});
  QTest::newRow("desktop wider than a grant allows")
      << handPacket(quint16(FrameReader::kMaxSide + 1), 8, 0, {});
  QTest::newRow("desktop 65535 x 65535") << handPacket(0xffff, 0xffff, 0, {});
  QTest::newRow("count beyond the packet") << handPacket(8, 8, 0xffff, good);
  QTest::newRow("truncated record header") << handPacket(8, 8, 2, good + good.left(12));
  QTest::newRow("zero-sized rect") << handPacket(8, 8, 1, record(0, 0, 0, 2, 1, png));
  QTest::newRow("rect past the right edge") << handPacket(8, 8, 1, record(7, 0, 2, 2, 1, png));
  QTest::newRow("rect wrapping u16") << handPacket(8, 8, 1, record(0xffff, 0, 2, 2, 1, png));
  QTest::newRow("unknown encoding") << handPacket(8, 8, 1, record(0, 0, 2, 2, 9, png));
  QTest::newRow("encoding zero") << handPacket(8, 8, 1, record(0, 0, 2, 2, 0, png));
  QTest::newRow("length beyond the packet")
      << handPacket(8, 8, 1, record(0, 0, 2, 2, 1, png, png.size() + 1));
  QTest::newRow("length 4 GiB") << handPacket(8, 8, 1, record(0, 0, 2, 2, 1, png, 0xffffffffLL));
  QTest::newRow("trailing bytes") << handPacket(8, 8, 1, good + "x");
  QTest::newRow("fewer records than declared") << handPacket(8, 8, 2, good);
  QTest::newRow("copy after an image") << handPacket(8, 8, 2, good + record(0, 0, 2, 2, 3, copyBody(2, 2)));
  QTest::newRow("copy of 0 bytes") << handPacket(8, 8, 1, record(0, 0, 2, 2, 3, {}));
  QTest::newRow("copy of 5 bytes") << handPacket(8, 8, 1, record(0, 0, 2, 2, 3, copyBody(2, 2) + "x"));
  QTest::newRow("copy source past the edge") << handPacket(8, 8, 1, record(0, 0, 2, 2, 3, copyBody(7, 0)));
  QTest::newRow("copy source wrapping u16")
      << handPacket(8, 8, 1, record(0, 0, 2, 2, 3, copyBody(0xffff, 0xffff)));
  QTest::newRow("copy destination past the edge")
      << handPacket(8, 8, 1, record(7, 7, 2, 2, 3, copyBody(0, 0)));
  QTest::newRow("copy cut short") << handPacket(8, 8, 1, record(0, 0, 2, 2, 3, copyBody(1, 1)).left(15));
}

void tst_FramePipeline::readerRefusesHostilePackets() {
  QFETCH(QByteArray, packet);
  const Outcome<FrameReader> frame = FrameReader::parse(packet);
  QVERIFY(!frame.ok());
  QCOMPARE(frame.code(), Refusal::ProtocolMalformed);
  QVERIFY(!frame.failure().message.isEmpty());
}

// Issue 27: the image a record carries is checked against the record's area from its own
// header (PNG IHDR, JPEG SOF), so a 2x2 record whose image claims 30000 x 30000 is refused as
// a size mismatch, before a decoder allocates for it (Qt's own limit would refuse it only
// later, as "does not decode").
void tst_FramePipeline::readerRefusesAnImageOfAnotherSizeBeforeDecodingIt_data() {
  QTest::addColumn<QByteArray>("image");
  QTest::addColumn<quint8>("encoding");
  QTest::addColumn<QString>("refusal");
  const QImage tiny = synthetic::noise(QSize(2, 2), 4);
  QByteArray jpeg;
  {
    QBuffer buffer(&jpeg);
    buffer.open(QIODevice::WriteOnly);
    tiny.save(&buffer, "JPEG");
  }
  // The baseline frame header (SOF0: FF C0, length, precision, height, width), patched.
  const qsizetype sof = jpeg.indexOf(QByteArray("\xff\xc0", 2));
  QVERIFY(sof > 0);
  QByteArray huge = jpeg;
  qToBigEndian<quint16>(30000, huge.data() + sof + 5);
  qToBigEndian<quint16>(30000, huge.data() + sof + 7);
  const QByteArray bigger = pngOf(synthetic::noise(QSize(3, 2), 4));
  QTest::newRow("jpeg claiming 30000x30000") << huge << quint8(2) << "does not match its size";
  QTest::newRow("png of 3x2 in a 2x2 area") << bigger << quint8(1) << "does not match its size";
  QTest::newRow("png bytes that are not an image")
      << QByteArray("not a png at all") << quint8(1) << "does not decode";
}

void tst_FramePipeline::readerRefusesAnImageOfAnotherSizeBeforeDecodingIt() {
  QFETCH(QByteArray, image);
  QFETCH(quint8, encoding);
  QFETCH(QString, refusal);
  const Outcome<FrameReader> frame =
      FrameReader::parse(handPacket(8, 8, 1, record(0, 0, 2, 2, encoding, image)));
  QVERIFY2(frame.ok(), "the packet itself is well formed");
  const Outcome<QImage> painted = frame->apply(QImage());
  QVERIFY(!painted.ok());
  QCOMPARE(painted.code(), Refusal::ProtocolMalformed);
  QVERIFY2(painted.failure().message.contains(refusal), qPrintable(painted.failure().message));
}

void tst_FramePipeline::copiesApplyAsThroughATemporary_data() {
  QTest::addColumn<QRect>("from");
  QTest::addColumn<QPoint>("to");
  QTest::newRow("up by 3, overlapping") << QRect(0, 3, 40, 27) << QPoint(0, 0);
  QTest::newRow("down by 5, overlapping") << QRect(0, 0, 40, 25) << QPoint(0, 5);
  QTest::newRow("right by 1, overlapping") << QRect(0, 0, 39, 30) << QPoint(1, 0);
  QTest::newRow("left and up") << QRect(7, 9, 20, 20) << QPoint(2, 1);
  QTest::newRow("disjoint") << QRect(0, 0, 10, 10) << QPoint(30, 20);
  QTest::newRow("onto itself") << QRect(5, 5, 10, 10) << QPoint(5, 5);
}

void tst_FramePipeline::copiesApplyAsThroughATemporary() {
  QFETCH(QRect, from);
  QFETCH(QPoint, to);
  const QImage before = synthetic::noise(QSize(40, 30), 4);
  FrameRecord copy;
  copy.encoding = Encoding::Copy;
  copy.source = from.topLeft();
  copy.area = QRect(to, from.size());
  QImage canvas = before.copy();
  FrameReader::applyCopy(canvas, copy);
  // The oracle: through an explicit temporary.
  QImage expected = before.copy();
  const QImage temporary = before.copy(from);
  for (int y = 0; y < from.height(); ++y)
    std::memcpy(expected.scanLine(to.y() + y) + to.x() * 4, temporary.constScanLine(y),
                size_t(from.width()) * 4);
  QCOMPARE(differingPixels(canvas, expected), 0);
  // A shared canvas is detached, never written under its other holder.
  QImage shared = before;
  FrameReader::applyCopy(shared, copy);
  QCOMPARE(differingPixels(shared, expected), 0);
  QCOMPARE(differingPixels(before, synthetic::noise(QSize(40, 30), 4)), 0);
}

void tst_FramePipeline::writerPutsCopiesBeforeImagesOnly() {
  FramePacket packet(1, QSize(64, 64));
  QVERIFY(packet.addCopy(QRect(0, 1, 64, 63), QPoint(0, 0)));
  QVERIFY(!packet.addCopy(QRect(0, 0, 0, 4), QPoint(0, 0)));      // empty
  QVERIFY(!packet.addCopy(QRect(-1, 0, 4, 4), QPoint(0, 0)));     // off the wire types
  QVERIFY(!packet.addCopy(QRect(0, 0, 4, 4), QPoint(0xfffe, 0))); // destination wraps u16
  QVERIFY(packet.beginRect(QRect(0, 63, 64, 1), Encoding::Png));
  packet.data().append(pngOf(synthetic::noise(QSize(64, 1), 2)));
  packet.finishRect();
  QVERIFY(!packet.addCopy(QRect(0, 1, 64, 63), QPoint(0, 0)));   // after an image: refused
  QVERIFY(!packet.beginRect(QRect(0, 0, 4, 4), Encoding::Copy)); // copies only through addCopy
  QCOMPARE(packet.rectCount(), 2);
  QVERIFY(FrameReader::parse(packet.take()).ok());
}

// Issue 27.5: a scroll that reaches the console as damage goes out as a copy plus the rows
// scrolled in, and the panel's canvas equals the desktop exactly after every frame.
void tst_FramePipeline::scrollIsSentAsACopyAndTheNewRows_data() {
  QTest::addColumn<int>("step");    // pixels per frame; negative: the page moves down
  QTest::addColumn<int>("sidebar"); // static columns on the left that do not scroll
  QTest::newRow("up 4 px a frame, whole width") << 4 << 0;
  QTest::newRow("up 10 px a frame, whole width") << 10 << 0;
  QTest::newRow("down 6 px a frame") << -6 << 0;
  QTest::newRow("up 4 px beside a static sidebar") << 4 << 200;
}

// Typing with a caret and a status line: a few glyphs far apart span a box of mostly
// unchanged rows. A copy could save nothing there, so the rows are not hashed at all; a
// scroll of the same page still is, and goes out as a copy.
void tst_FramePipeline::scatteredSmallChangesAreNotSearchedForMoves() {
  const QSize size(960, 540);
  const QImage page = synthetic::textPage(size);
  FrameEncoder encoder(pngOnly());
  QImage canvas;
  QVERIFY(read(canvas, encoder.encode(job(page, {}, 1, true)).packet));
  QImage typed = page.copy();
  const QPoint spots[] = {{40, 30}, {480, 260}, {900, 520}};
  QList<QRect> dirty;
  for (int i = 0; i < 3; ++i) {
    synthetic::drawGlyph(typed, spots[i].x(), spots[i].y(), quint32(100 + i));
    dirty.append(QRect(spots[i], QSize(synthetic::kGlyphWidth, synthetic::kGlyphHeight)));
  }
  FrameJob j = job(typed, dirty, 2);
  j.copies = true;
  const FrameResult result = encoder.encode(j);
  QVERIFY(read(canvas, result.packet));
  QCOMPARE(differingPixels(canvas, typed), 0);
  QCOMPARE(result.copyRects, 0);
  QCOMPARE(encoder.moves().bytesHeld(), 0);

  QImage scrolled(size, QImage::Format_RGB32);
  for (int y = 0; y < size.height(); ++y)
    std::memcpy(scrolled.scanLine(y), typed.constScanLine(std::min(size.height() - 1, y + 24)),
                size_t(size.width()) * 4);
  FrameJob s = job(scrolled, {scrolled.rect()}, 3);
  s.copies = true;
  const FrameResult moved = encoder.encode(s);
  QVERIFY(read(canvas, moved.packet));
  QCOMPARE(differingPixels(canvas, scrolled), 0);
  QVERIFY(moved.copyRects > 0);
  QVERIFY(encoder.moves().bytesHeld() > 0);
}

void tst_FramePipeline::scrollIsSentAsACopyAndTheNewRows() {
  QFETCH(int, step);
  QFETCH(int, sidebar);
  const QSize size(960, 540);
  constexpr int kFrames = 8;
  const QImage tall =
      synthetic::textPage(QSize(size.width() - sidebar, size.height() + kFrames * std::abs(step)));
  const QImage side = synthetic::noise(QSize(qMax(1, sidebar), size.height()), 77);
  const auto frameAt = [&](int i) {
    QImage f(size, QImage::Format_RGB32);
    const int offset = step > 0 ? i * step : (kFrames - i) * -step;
    const QImage page = tall.copy(0, offset, size.width() - sidebar, size.height());
    for (int y = 0; y < size.height(); ++y) {
      if (sidebar > 0)
        std::memcpy(f.scanLine(y), side.constScanLine(y), size_t(sidebar) * 4);
      std::memcpy(f.scanLine(y) + size_t(sidebar) * 4, page.constScanLine(y), size_t(page.width()) * 4);
    }
    return f;
  };
  const QRect dirty(sidebar, 0, size.width() - sidebar, size.height());
  qint64 bytes[2] = {0, 0};
  for (const bool copies : {false, true}) {
    FrameEncoder encoder(pngOnly());
    QImage canvas;
    QVERIFY(read(canvas, encoder.encode(job(frameAt(0), {}, 1, true)).packet));
    int copied = 0;
    for (int i = 1; i <= kFrames; ++i) {
      const QImage frame = frameAt(i);
      FrameJob j = job(frame, {dirty}, quint32(i + 1));
      j.copies = copies;
      const FrameResult result = encoder.encode(j);
      int n = 0;
      QVERIFY(read(canvas, result.packet, &n));
      QCOMPARE(n, result.copyRects);
      copied += n;
      bytes[copies ? 1 : 0] += result.packet.size();
      QCOMPARE(differingPixels(canvas, frame), 0);
    }
    QCOMPARE(copied > 0, copies);
    if (copies) {
      QVERIFY2(copied >= kFrames, qPrintable(QString::number(copied))); // every frame moved
    }
  }
  qInfo("scroll %d px, sidebar %d: %lld bytes/frame as pixels, %lld as copy + new rows", step, sidebar,
        bytes[0] / kFrames, bytes[1] / kFrames);
  QVERIFY2(bytes[1] * 4 < bytes[0], qPrintable(QStringLiteral("%1 vs %2").arg(bytes[1]).arg(bytes[0])));
}

void tst_FramePipeline::aPanelWithoutCopyRectGetsNoCopies() {
  const QImage tall = synthetic::textPage(QSize(640, 520));
  FrameEncoder encoder;
  QImage canvas;
  QVERIFY(apply(canvas, encoder.encode(job(tall.copy(0, 0, 640, 480), {}, 1, true)).packet));
  const QImage next = tall.copy(0, 8, 640, 480);
  const FrameResult result = encoder.encode(job(next, {QRect(0, 0, 640, 480)}, 2)); // copies off
  QCOMPARE(result.copyRects, 0);
  // The old panel's decoder (which knows no copy record) reads it whole.
  DecodedPacket p;
  QVERIFY(apply(canvas, result.packet, &p));
  for (const DecodedRect& r : p.rects)
    QVERIFY(r.encoding == 1 || r.encoding == 2);
}

void tst_FramePipeline::movedLossyTilesAreRefinedToo() {
  TileMap tiles;
  tiles.resize(QSize(256, 256));
  tiles.setLossy(1, 2, true); // pixels (64..127, 128..191) are JPEG on the panel
  tiles.setLossy(3, 0, true); // covered wholly by exact pixels below: becomes exact
  // Everything moves up 100 rows: the lossy tile's pixels land in rows 28..91.
  tiles.moveLossy(QRect(0, 100, 256, 156), QPoint(0, 0));
  QVERIFY(tiles.isLossy(1, 0));
  QVERIFY(tiles.isLossy(1, 1));
  QVERIFY(!tiles.isLossy(0, 0));
  QVERIFY(!tiles.isLossy(3, 0));
  QVERIFY(!tiles.isLossy(1, 3)); // below the destination: untouched, was exact
}

void tst_FramePipeline::moveSearchFindsNothingInNoise() {
  MoveSearch search;
  const QImage a = synthetic::noise(QSize(640, 480), 1);
  const QImage b = synthetic::noise(QSize(640, 480), 2);
  QVERIFY(search.search(b, a, all(a)).isEmpty());
  QVERIFY(search.search(a, a, all(a)).isEmpty());               // nothing changed: nothing moved
  QVERIFY(search.search(a, a, QRect(0, 0, 640, 20)).isEmpty()); // too small to be worth it
  // A page moved 12 rows up is found as one move of every row that stayed on screen.
  const QImage tall = synthetic::textPage(QSize(640, 492));
  const QList<Move> moves = search.search(tall.copy(0, 12, 640, 480), tall.copy(0, 0, 640, 480), all(a));
  QVERIFY(!moves.isEmpty());
  QCOMPARE(moves.first().from.top() - moves.first().to.y(), 12);
  QVERIFY(search.bytesHeld() > 0);
  search.release();
  QCOMPARE(search.bytesHeld(), 0);
}

void tst_FramePipeline::pipelineSendsCopiesOnlyOnceAllowed() {
  FramePipeline pipeline;
  QImage canvas;
  int packets = 0;
  int copies = 0;
  connect(&pipeline, &FramePipeline::packetReady, this, [&](const QByteArray& packet, quint32 id) {
    ++packets;
    int n = 0;
    QVERIFY(read(canvas, packet, &n));
    copies += n;
    pipeline.acknowledge(id);
  });
  const QImage tall = synthetic::textPage(QSize(800, 640));
  const QRect desktop(0, 0, 800, 600);
  pipeline.submit(tall.copy(desktop), {desktop});
  QTRY_COMPARE(packets, 1);
  pipeline.submit(tall.copy(desktop.translated(0, 4)), {desktop});
  QTRY_COMPARE(packets, 2);
  QCOMPARE(copies, 0); // the panel did not say it takes copies
  pipeline.setCopyRects(true);
  const QImage last = tall.copy(desktop.translated(0, 8));
  pipeline.submit(last, {desktop});
  QTRY_COMPARE(packets, 3);
  QCOMPARE(copies, 1);
  QTRY_VERIFY(!pipeline.isEncoding());
  QTRY_COMPARE(differingPixels(canvas, last), 0);
}

// Issue 27.5 step 3: the guest's own moves (SurfaceToSurface) go out as copies, even one the
// search would not look for (sideways), and a move the frame does not show is not trusted.
void tst_FramePipeline::guestMovesAreSentWhenTheFrameShowsThem() {
  const QSize size(640, 480);
  const QImage before = synthetic::textPage(size);
  // The guest moved the area (0,0 400x300) 37 px right and 5 down, then painted nothing else.
  QImage after = before.copy();
  {
    FrameRecord move;
    move.encoding = Encoding::Copy;
    move.source = QPoint(0, 0);
    move.area = QRect(37, 5, 400, 300);
    FrameReader::applyCopy(after, move);
  }
  const Move real{QRect(0, 0, 400, 300), QPoint(37, 5)};
  const Move bogus{QRect(200, 100, 400, 300), QPoint(0, 0)}; // a hostile or stale hint
  for (const bool honest : {true, false}) {
    FrameEncoder encoder(pngOnly());
    QImage canvas;
    QVERIFY(read(canvas, encoder.encode(job(before, {}, 1, true)).packet));
    FrameJob j = job(after, {QRect(37, 5, 400, 300)}, 2);
    j.copies = true;
    j.guestMoves = {honest ? real : bogus};
    const FrameResult result = encoder.encode(j);
    int copies = 0;
    QVERIFY(read(canvas, result.packet, &copies));
    QCOMPARE(differingPixels(canvas, after), 0);
    QCOMPARE(copies, honest ? 1 : 0);
    if (honest) {
      QVERIFY2(result.packet.size() < 8 * 1024, qPrintable(QString::number(result.packet.size())));
    }
  }
  // Through the pipeline, as the console hands them on (FrameUpdate::moves).
  FramePipeline pipeline;
  QImage canvas;
  int packets = 0;
  int copies = 0;
  connect(&pipeline, &FramePipeline::packetReady, this, [&](const QByteArray& packet, quint32 id) {
    ++packets;
    int n = 0;
    QVERIFY(read(canvas, packet, &n));
    copies += n;
    pipeline.acknowledge(id);
  });
  pipeline.setCopyRects(true);
  pipeline.submit(before, {all(before)});
  QTRY_COMPARE(packets, 1);
  pipeline.submit(after, {QRect(37, 5, 400, 300)}, {{real.from, real.to}});
  QTRY_COMPARE(packets, 2);
  QCOMPARE(copies, 1);
  QTRY_VERIFY(!pipeline.isEncoding());
  QTRY_COMPARE(differingPixels(canvas, after), 0);
}

// The panel's ack comes back as the guest serial of the frame its packet showed; frames
// coalesced behind an unacked packet are shown by the next one, which reports the newest.
void tst_FramePipeline::presentedNamesTheGuestSerialThePanelShowed() {
  FramePipeline::Options options;
  options.maxUnackedFrames = 1;
  FramePipeline pipeline(options);
  QList<quint32> ids;
  connect(&pipeline, &FramePipeline::packetReady, this, [&](const QByteArray&, quint32 id) { ids << id; });
  QSignalSpy presented(&pipeline, &FramePipeline::presented);
  QImage frame(64, 48, QImage::Format_RGB32);
  frame.fill(Qt::black);
  pipeline.submit(frame, {frame.rect()}, {}, 5);
  QTRY_COMPARE(ids.size(), 1);
  QCOMPARE(presented.count(), 0); // sent is not shown
  QImage second = frame.copy();
  second.fill(Qt::white);
  pipeline.submit(second, {QRect(0, 0, 8, 8)}, {}, 6);
  QImage third = second.copy();
  third.fill(Qt::red);
  pipeline.submit(third, {QRect(8, 8, 8, 8)}, {}, 9); // coalesced with 6 behind the unacked packet
  pipeline.acknowledge(ids.at(0));
  QTRY_COMPARE(presented.count(), 1);
  QCOMPARE(presented.at(0).at(0).toULongLong(), 5ull);
  QTRY_COMPARE(ids.size(), 2);
  pipeline.acknowledge(ids.at(1));
  QTRY_COMPARE(presented.count(), 2);
  QCOMPARE(presented.at(1).at(0).toULongLong(), 9ull);
  pipeline.acknowledge(ids.at(1)); // again: nothing newer shown
  QCOMPARE(presented.count(), 2);
}

// The console holds the guest's frames back while the encoder is busy: a frame that waited
// behind the one being encoded keeps the encoder busy without a "not encoding" in between.
void tst_FramePipeline::encodingChangedSaysEachChangeOnce() {
  FramePipeline pipeline;
  QSignalSpy packets(&pipeline, &FramePipeline::packetReady);
  QSignalSpy changes(&pipeline, &FramePipeline::encodingChanged);
  const QImage first = synthetic::textPage(QSize(640, 480));
  pipeline.submit(first, {all(first)});
  QCOMPARE(changes.size(), 1);
  QCOMPARE(changes.at(0).at(0).toBool(), true);
  QImage second = first.copy();
  synthetic::drawGlyph(second, 40, 40, 7);
  pipeline.submit(second, {QRect(40, 40, synthetic::kGlyphWidth, synthetic::kGlyphHeight)});
  QCOMPARE(changes.size(), 1); // still encoding the first
  QTRY_COMPARE(packets.size(), 2);
  QTRY_COMPARE(changes.size(), 2);
  QCOMPARE(changes.at(1).at(0).toBool(), false);
  QVERIFY(!pipeline.isEncoding());
  pipeline.acknowledge(packets.at(1).at(1).toUInt());
  QCOMPARE(changes.size(), 2); // nothing to encode: nothing changed
  (void)pipeline.wipe();
  QCOMPARE(changes.size(), 2);
}

// Issue 27.1: no per-frame full copies. A scroll frame's moves are kept pending on the
// reference shared with the last frame (no 8 MB detach per frame at 1080p); detect() reads
// the moved areas from their sources and finds exactly what applying the moves for real
// (settle) finds. Moves that overlap an earlier destination fall back to the real path.
void tst_FramePipeline::movesReadTheSharedReferenceWithoutCopyingIt_data() {
  QTest::addColumn<QList<QRect>>("sources");
  QTest::addColumn<QList<QPoint>>("targets");
  QTest::addColumn<int>("pending");
  QTest::newRow("scroll up 24 rows") << QList<QRect>{QRect(0, 24, 320, 216)} << QList<QPoint>{QPoint(0, 0)}
                                     << 1;
  QTest::newRow("scroll down 40 rows, a sidebar kept")
      << QList<QRect>{QRect(64, 0, 256, 200)} << QList<QPoint>{QPoint(64, 40)} << 1;
  QTest::newRow("two panes, two shifts") << QList<QRect>{QRect(0, 16, 160, 224), QRect(160, 0, 160, 232)}
                                         << QList<QPoint>{QPoint(0, 0), QPoint(160, 8)} << 2;
  QTest::newRow("a second move reading the first's destination")
      << QList<QRect>{QRect(0, 16, 320, 100), QRect(0, 0, 320, 50)}
      << QList<QPoint>{QPoint(0, 0), QPoint(0, 150)} << 0;
  QTest::newRow("a move outside the desktop is ignored")
      << QList<QRect>{QRect(0, 200, 320, 100)} << QList<QPoint>{QPoint(0, 0)} << 0;
}

void tst_FramePipeline::movesReadTheSharedReferenceWithoutCopyingIt() {
  QFETCH(QList<QRect>, sources);
  QFETCH(QList<QPoint>, targets);
  QFETCH(int, pending);
  const QSize size(320, 240);
  const QImage before = synthetic::textPage(size);
  // What the panel shows after the copies (FrameReader::applyCopy, in order), then new pixels
  // in a band the copies left stale.
  QImage after = before.copy();
  for (qsizetype i = 0; i < sources.size(); ++i) {
    FrameRecord copy;
    copy.encoding = Encoding::Copy;
    copy.area = QRect(targets[i], sources[i].size());
    copy.source = sources[i].topLeft();
    FrameReader::applyCopy(after, copy);
  }
  const QImage band = synthetic::noise(QSize(320, 20), 5);
  for (int y = 0; y < band.height(); ++y)
    std::memcpy(after.scanLine(220 + y), band.constScanLine(y), size_t(band.bytesPerLine()));
  DamageMask damage(size);
  damage.addAll();

  TileDiff lazy, settled;
  lazy.commit(before, {}, true);
  settled.commit(before, {}, true);
  for (qsizetype i = 0; i < sources.size(); ++i) {
    lazy.applyMove(sources[i], targets[i]);
    settled.applyMove(sources[i], targets[i]);
  }
  QCOMPARE(lazy.pendingMoves(), pending);
  if (pending > 0)
    QVERIFY2(!before.isDetached(), "the reference still shares the frame: no copy was made");
  settled.settle();
  QCOMPARE(settled.pendingMoves(), 0);
  TileMap lazyTiles, settledTiles;
  lazyTiles.resize(size);
  settledTiles.resize(size);
  lazyTiles.beginFrame();
  settledTiles.beginFrame();
  QCOMPARE(lazy.detect(after, damage, lazyTiles), settled.detect(after, damage, settledTiles));
  for (int r = 0; r < lazyTiles.rows(); ++r) {
    for (int c = 0; c < lazyTiles.columns(); ++c) {
      QCOMPARE(lazyTiles.isChanged(c, r), settledTiles.isChanged(c, r));
      QCOMPARE(lazyTiles.changedBox(c, r), settledTiles.changedBox(c, r));
    }
  }
  if (pending > 0) {
    QVERIFY(lazyTiles.changedCount() < lazyTiles.rows() * lazyTiles.columns()); // the moves were seen
    QVERIFY(!before.isDetached());
  }
  // A partial commit settles the moves: the reference is then what the panel has.
  lazy.commit(after, {QRect(0, 220, 320, 20)}, false);
  QCOMPARE(lazy.pendingMoves(), 0);
  QCOMPARE(before, synthetic::textPage(size)); // the shared frame was never written
}

QTEST_MAIN(tst_FramePipeline)
#include "tst_framepipeline.moc"
