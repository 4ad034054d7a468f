// A scroll is a move of pixels the panel already has (issue 27.5). The test guest scrolls its
// text page; the real reader process hands its frames to the real frame pipeline, whose
// packets a panel that took "copy_rect" reads with the one GCF1 reader (FrameReader) onto its
// canvas. The scroll must go out as copy records plus the rows scrolled in, and the canvas
// must equal the desktop exactly once the guest is still.
#include "GuestProcess.h"
#include "bridge/frames/FramePipeline.h"
#include "bridge/frames/FrameReader.h"
#include "readerhost/RdpReader.h"

#include <QSignalSpy>
#include <QTest>

using namespace gc;

namespace {

RdpConfig configFor(const GuestProcess& guest, QSize desktop) {
  RdpConfig c;
  c.host = QStringLiteral("127.0.0.1");
  c.port = guest.port();
  c.pinSha256 = QByteArray::fromHex(guest.sha256().toLatin1());
  c.desktop.width = quint32(desktop.width());
  c.desktop.height = quint32(desktop.height());
  return c;
}

Credentials credentials() {
  Credentials c;
  c.username = SecureBuffer::copyOf("tester").value();
  c.password = SecureBuffer::copyOf("throwaway-pw").value();
  return c;
}

// Pixels whose RGB differs (X is not part of the picture); -1 for another size.
qint64 differingPixels(const QImage& a, const QImage& b) {
  if (a.size() != b.size())
    return -1;
  qint64 n = 0;
  for (int y = 0; y < a.height(); ++y) {
    const auto* pa = reinterpret_cast<const QRgb*>(a.constScanLine(y));
    const auto* pb = reinterpret_cast<const QRgb*>(b.constScanLine(y));
    for (int x = 0; x < a.width(); ++x)
      n += ((pa[x] ^ pb[x]) & 0xffffffU) != 0 ? 1 : 0;
  }
  return n;
}

// The panel: reads each packet with the one reader, applies it whole, acknowledges it.
struct Panel {
  QImage canvas;
  int packets = 0;
  int copies = 0;
  int refused = 0;
  qint64 bytes = 0;
  qint64 scrollBytes = 0; // while the guest scrolled
  int scrollPackets = 0;
  bool scrolling = false;
};

} // namespace

class tst_ScrollCopy : public QObject {
  Q_OBJECT
private slots:
  void guestScrollIsRebuiltExactlyFromCopies_data() {
    QTest::addColumn<QString>("graphics");
    QTest::addColumn<bool>("copyRect"); // the panel's hello listed "copy_rect"
    QTest::newRow("legacy surface bits") << QStringLiteral("legacy") << true;
    QTest::newRow("RDPGFX") << QStringLiteral("gfx") << true;
    QTest::newRow("RDPGFX, a panel without copy_rect") << QStringLiteral("gfx") << false;
  }

  void guestScrollIsRebuiltExactlyFromCopies() {
    QFETCH(QString, graphics);
    QFETCH(bool, copyRect);
    const QSize size(800, 600);
    GuestProcess guest;
    QVERIFY(guest.start({QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--width"),
                         QString::number(size.width()), QStringLiteral("--height"),
                         QString::number(size.height()), QStringLiteral("--graphics"), graphics}));
    RdpReader reader;
    QVERIFY(reader.spawn(size).ok());
    const Outcome<QByteArray> digest = reader.probe(QStringLiteral("127.0.0.1"), guest.port(),
                                                    QByteArray::fromHex(guest.sha256().toLatin1()), 10000);
    QVERIFY2(digest.ok(), qPrintable(digest.ok() ? QString() : digest.failure().toString()));

    FramePipeline pipeline;
    pipeline.setCopyRects(copyRect);
    Panel panel;
    QImage latest;
    connect(&reader, &RdpReader::frameUpdated, this, [&](const FrameUpdate& update) {
      latest = update.frame;
      pipeline.submit(update.frame, update.dirty);
      reader.notePresented(update.serial);
    });
    connect(&pipeline, &FramePipeline::packetReady, this, [&](const QByteArray& packet, quint32 id) {
      ++panel.packets;
      panel.bytes += packet.size();
      const Outcome<FrameReader> frame = FrameReader::parse(packet);
      Outcome<QImage> next = frame.ok() ? frame->apply(panel.canvas) : Outcome<QImage>(frame.failure());
      if (!next.ok()) {
        ++panel.refused;
        qWarning() << "panel refused a packet:" << next.failure().message;
      } else {
        panel.canvas = std::move(next).value();
        panel.copies += frame->copyCount();
        if (panel.scrolling) {
          panel.scrollBytes += packet.size();
          ++panel.scrollPackets;
          if (qEnvironmentVariableIsSet("GC_TRACE_SCROLL"))
            qInfo("packet %u: %lld bytes, %d records, %d copies", id, qint64(packet.size()),
                  int(frame->rects().size()), frame->copyCount());
        }
      }
      pipeline.acknowledge(id);
    });
    QSignalSpy connected(&reader, &RdpReader::connected);
    reader.start(configFor(guest, size), credentials());
    QVERIFY(connected.wait(30000));
    QTRY_VERIFY_WITH_TIMEOUT(!latest.isNull() && differingPixels(panel.canvas, latest) == 0, 30000);

    // The guest scrolls 4 px a tick; wait for a good number of scroll frames, not for a time.
    panel.scrolling = true;
    guest.command(R"({"cmd":"workload","mode":"scroll"})");
    QTRY_VERIFY_WITH_TIMEOUT(panel.scrollPackets >= 20, 60000);
    guest.command(R"({"cmd":"workload","mode":"idle"})");
    panel.scrolling = false;
    // Once the guest is still (and any lossy area refined), the canvas is the desktop.
    QTRY_VERIFY_WITH_TIMEOUT(!pipeline.isEncoding() && pipeline.unackedFrames() == 0 &&
                                 differingPixels(panel.canvas, latest) == 0,
                             30000);
    QCOMPARE(panel.refused, 0);
    qInfo("%s, copy_rect %s: %d packets while scrolling, %lld bytes each on average, %d copy records",
          qPrintable(graphics), copyRect ? "on" : "off", panel.scrollPackets,
          panel.scrollBytes / qMax(1, panel.scrollPackets), panel.copies);
    if (!copyRect) {
      QCOMPARE(panel.copies, 0); // an old panel never gets a record it cannot read
    } else {
      // A scroll frame of the guest's 4 px step redraws the whole text area (its damage): as
      // copies it costs the rows scrolled in, far below the area's own pixels.
      QVERIFY2(panel.copies >= panel.scrollPackets / 2, qPrintable(QString::number(panel.copies)));
      QVERIFY2(panel.scrollBytes / panel.scrollPackets < 16 * 1024,
               qPrintable(QString::number(panel.scrollBytes / panel.scrollPackets)));
    }
    reader.abort();
  }
};

QTEST_MAIN(tst_ScrollCopy)
#include "tst_scrollcopy.moc"
