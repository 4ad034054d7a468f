// The standalone viewer against the real console side of the panel protocol: a PanelServer
// and a FramePipeline on loopback, fed a synthetic desktop carrying the identity marker.
#include "bridge/frames/FramePacket.h"
#include "bridge/frames/FramePipeline.h"
#include "bridge/frames/FrameReader.h"
#include "bridge/panel/PanelMessage.h"
#include "bridge/panel/PanelServer.h"
#include "testguest/IdentityMarker.h"
#include "widgets/CapabilityReader.h"
#include "widgets/ConsoleClient.h"
#include "widgets/ConsoleView.h"
#include "widgets/InputCapture.h"
#include "widgets/ScancodeMap.h"

#include <QBuffer>
#include <QFile>
#include <QPainter>
#include <QProcess>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>
#include <QWheelEvent>

#include <memory>
#include <unistd.h>

using namespace gc;

namespace {

constexpr quint32 kMarker = 0x6c5a7e57;
const QSize kDesktop(1024, 768);

QByteArray randomCapability() {
  QByteArray cap(32, '\0');
  QRandomGenerator::system()->fillRange(reinterpret_cast<quint32*>(cap.data()), 8);
  return cap;
}

QImage desktopWithMarker(QRgb background) {
  QImage image(kDesktop, QImage::Format_RGB32);
  image.fill(background);
  testguest::drawMarker(image.bits(), int(image.bytesPerLine()), image.width(), image.height(), kMarker);
  return image;
}

std::optional<uint32_t> markerIn(QImage image) {
  image = image.convertToFormat(QImage::Format_RGB32);
  return testguest::findMarker(image.constBits(), int(image.bytesPerLine()), image.width(), image.height());
}

QByteArray png(const QImage& image) {
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  image.save(&buffer, "PNG");
  return bytes;
}

QImage solid(QSize size, QRgb colour) {
  QImage image(size, QImage::Format_RGB32);
  image.fill(colour);
  return image;
}

// The console's side: the real panel server and frame pipeline, wired as the console wires
// them (welcome on authorization, packets to the panel, acks to the pipeline).
struct ConsoleSide {
  ConsoleSide() {
    policy.run = QStringLiteral("run-42");
    policy.task = QStringLiteral("task-7");
    policy.capability = randomCapability();
    server = std::make_unique<PanelServer>(policy);
    QObject::connect(&pipeline, &FramePipeline::packetReady, server.get(),
                     [this](const QByteArray& packet, quint32) { server->sendBinary(packet); });
    QObject::connect(server.get(), &PanelServer::frameAcked, &pipeline, [this](quint32 frame) {
      acks.append(frame);
      pipeline.acknowledge(frame);
    });
    QObject::connect(server.get(), &PanelServer::frameRefreshRequested, &pipeline, [this](quint32 frame) {
      refreshes.append(frame);
      if (answerRefresh) { // as the console does: forget the unacked frames, send the whole desktop
        pipeline.reset();
        pipeline.submit(desktop, {desktop.rect()});
      }
    });
    QObject::connect(server.get(), &PanelServer::keyReceived, server.get(), [this](const panel::Key& key) {
      keys.append(key);
      server->sendText(panel::inputAck(key.seq)); // as the console's gate does
    });
    QObject::connect(server.get(), &PanelServer::pointerReceived, server.get(),
                     [this](const panel::Pointer& pointer) {
                       pointers.append(pointer);
                       server->sendText(panel::inputAck(pointer.seq));
                     });
    QObject::connect(
        server.get(), &PanelServer::panelAuthorized, server.get(), [this](const panel::Hello& said) {
          hello = said;
          server->sendText(panel::welcome(
              policy.run, policy.task, QStringLiteral("win11-bench"),
              QJsonObject{
                  {QStringLiteral("grant_digest"), QStringLiteral("a1b2c3d4e5f60718293a4b5c6d7e8f90")},
                  {QStringLiteral("cert_sha256"), QStringLiteral("AB:CD:EF:01:23:45:67:89:AB")}},
              QStringLiteral("SETUP"), kDesktop.width(), kDesktop.height()));
          pipeline.reset();
          desktop = desktopWithMarker(qRgb(40, 60, 90));
          pipeline.submit(desktop, {desktop.rect()});
        });
  }
  bool listen() { return server->listen(); }
  QByteArray capabilityHex() const { return policy.capability.toHex(); }

  // Changes a few pixels away from the marker and waits for the viewer to acknowledge the
  // frame: everything the viewer sent before that ack has reached the server by then (one
  // ordered WebSocket), so "nothing received" can be asserted without sleeping.
  bool roundTrip() {
    const qsizetype before = acks.size();
    desktop = desktop.copy();
    QPainter(&desktop).fillRect(QRect(600, 600, 16, 16), QColor::fromHsv(int(++tick * 37 % 360), 200, 200));
    pipeline.submit(desktop, {QRect(600, 600, 16, 16)});
    return QTest::qWaitFor([&] { return acks.size() > before; }, 5000);
  }

  PanelPolicy policy;
  std::unique_ptr<PanelServer> server;
  FramePipeline pipeline;
  QImage desktop;
  panel::Hello hello;
  QList<panel::Key> keys;
  QList<panel::Pointer> pointers;
  QList<quint32> acks;
  QList<quint32> refreshes;
  bool answerRefresh = false;
  int tick = 0;
};

// A connected viewer showing the first frame, in SETUP.
struct Rig {
  bool start(bool fit = false, QSize size = {}) {
    if (!console.listen())
      return false;
    view = std::make_unique<ConsoleView>(&client);
    view->setFitToWindow(fit);
    view->resize(size.isValid() ? size
                                : QSize(kDesktop.width(), kDesktop.height() + ConsoleView::kBandHeight));
    view->show();
    if (!QTest::qWaitForWindowExposed(view.get()))
      return false;
    QSignalSpy frames(&client, &ConsoleClient::frameReady);
    ConsoleClient::Options options;
    options.port = console.server->port();
    options.run = console.policy.run;
    options.task = console.policy.task;
    options.capabilityHex = console.capabilityHex();
    options.clientVersion = QStringLiteral("test");
    client.open(std::move(options));
    return frames.wait(30000) && client.phase() == QLatin1String("SETUP") && view->isInputAttached();
  }
  QPoint widgetPointFor(QPoint desktopPoint) const {
    const QRect frame = view->frameRect();
    const double sx = double(frame.width()) / kDesktop.width();
    const double sy = double(frame.height()) / kDesktop.height();
    // The centre of the desktop pixel's on-screen area.
    return QPoint(frame.x() + int((desktopPoint.x() + 0.5) * sx),
                  frame.y() + int((desktopPoint.y() + 0.5) * sy));
  }
  void wheel(QPoint at, int angle) {
    QWheelEvent event(QPointF(at), QPointF(view->mapToGlobal(at)), QPoint(), QPoint(0, angle), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(view.get(), &event);
  }
  bool toPhase(const QString& phase) {
    console.server->sendText(panel::phase(phase, QStringLiteral("locked by the test")));
    return QTest::qWaitFor([&] { return client.phase() == phase; }, 30000);
  }

  ConsoleSide console;
  ConsoleClient client;
  std::unique_ptr<ConsoleView> view;
};

QByteArray twoRectPacket(quint32 frameId, const QByteArray& first, const QByteArray& second) {
  FramePacket packet(frameId, kDesktop);
  packet.beginRect(QRect(200, 100, 32, 16), Encoding::Png);
  packet.data().append(first);
  packet.finishRect();
  packet.beginRect(QRect(700, 500, 16, 32), Encoding::Png);
  packet.data().append(second);
  packet.finishRect();
  return packet.take();
}

QByteArray procFile(qint64 pid, const char* name) {
  QFile file(QStringLiteral("/proc/%1/%2").arg(pid).arg(QLatin1String(name)));
  return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

} // namespace

class tst_Viewer : public QObject {
  Q_OBJECT
private slots:
  void rendersTheGuestsMarkerAtNativeScale() {
    Rig rig;
    QVERIFY(rig.start());
    QTRY_VERIFY(rig.console.acks.size() >= 1);
    const auto marker = markerIn(rig.view->grab().toImage());
    QVERIFY(marker.has_value());
    QCOMPARE(*marker, kMarker);
    QCOMPARE(rig.console.hello.clientKind, QStringLiteral("qt-viewer"));
    QCOMPARE(rig.view->phaseLabel(), QStringLiteral("SETUP"));
    QVERIFY(rig.view->identityText().contains(QStringLiteral("win11-bench")));
    QVERIFY(rig.view->identityText().contains(QStringLiteral("grant a1b2c3d4e5f6")));
    QVERIFY(rig.view->identityText().contains(QStringLiteral("cert abcdef012345")));
  }

  void sendsKeysAsSet1Scancodes_data() {
    QTest::addColumn<int>("key");
    QTest::addColumn<bool>("keypad");
    QTest::addColumn<int>("scancode");
    QTest::newRow("A") << int(Qt::Key_A) << false << 0x1E;
    QTest::newRow("Return") << int(Qt::Key_Return) << false << 0x1C;
    QTest::newRow("keypad Enter (extended)") << int(Qt::Key_Enter) << true << 0xE01C;
    QTest::newRow("Escape") << int(Qt::Key_Escape) << false << 0x01;
    QTest::newRow("Tab stays with the guest") << int(Qt::Key_Tab) << false << 0x0F;
    QTest::newRow("F1") << int(Qt::Key_F1) << false << 0x3B;
    QTest::newRow("Up (extended)") << int(Qt::Key_Up) << false << 0xE048;
    QTest::newRow("Delete (extended)") << int(Qt::Key_Delete) << false << 0xE053;
    QTest::newRow("keypad 7") << int(Qt::Key_7) << true << 0x47;
    QTest::newRow("digit 7") << int(Qt::Key_7) << false << 0x08;
  }
  void sendsKeysAsSet1Scancodes() {
    QFETCH(int, key);
    QFETCH(bool, keypad);
    QFETCH(int, scancode);
    Rig rig;
    QVERIFY(rig.start());
    QTest::keyClick(rig.view.get(), Qt::Key(key), keypad ? Qt::KeypadModifier : Qt::NoModifier);
    QTRY_COMPARE(rig.console.keys.size(), 2);
    QCOMPARE(rig.console.keys[0].scancode, quint16(scancode));
    QCOMPARE(rig.console.keys[0].down, true);
    QCOMPARE(rig.console.keys[1].scancode, quint16(scancode));
    QCOMPARE(rig.console.keys[1].down, false);
    QVERIFY(rig.console.keys[1].seq > rig.console.keys[0].seq);
    QTRY_COMPARE(rig.client.acked(), rig.console.keys[1].seq);
  }

  void mapsClicksToDesktopCoordinates_data() {
    QTest::addColumn<bool>("fit");
    QTest::addColumn<QSize>("size");
    QTest::addColumn<int>("button");
    QTest::addColumn<int>("mask");
    const QSize native(1024, 768 + ConsoleView::kBandHeight);
    const QSize half(512, 384 + ConsoleView::kBandHeight);
    const QSize letterboxed(700, 384 + ConsoleView::kBandHeight);
    QTest::newRow("native left") << false << native << int(Qt::LeftButton) << 1;
    QTest::newRow("native right") << false << native << int(Qt::RightButton) << 2;
    QTest::newRow("native middle") << false << native << int(Qt::MiddleButton) << 4;
    QTest::newRow("fitted half left") << true << half << int(Qt::LeftButton) << 1;
    QTest::newRow("fitted letterboxed right") << true << letterboxed << int(Qt::RightButton) << 2;
  }
  void mapsClicksToDesktopCoordinates() {
    QFETCH(bool, fit);
    QFETCH(QSize, size);
    QFETCH(int, button);
    QFETCH(int, mask);
    Rig rig;
    QVERIFY(rig.start(fit, size));
    const QPoint target(100, 200);
    QTest::mouseClick(rig.view.get(), Qt::MouseButton(button), Qt::NoModifier, rig.widgetPointFor(target));
    QTRY_VERIFY(!rig.console.pointers.isEmpty() && rig.console.pointers.last().buttons == 0);
    const auto& pointers = rig.console.pointers;
    const auto pressed = std::find_if(pointers.begin(), pointers.end(),
                                      [](const panel::Pointer& p) { return p.buttons != 0; });
    QVERIFY(pressed != pointers.end());
    QCOMPARE(int(pressed->buttons), mask);
    QCOMPARE(QPoint(pressed->x, pressed->y), target);
    QCOMPARE(QPoint(pointers.last().x, pointers.last().y), target);
    for (qsizetype i = 1; i < pointers.size(); ++i)
      QVERIFY(pointers[i].seq > pointers[i - 1].seq);
  }

  void sendsTheWheelAs120PerNotch_data() {
    QTest::addColumn<int>("angle");
    QTest::addColumn<QList<int>>("wheels");
    QTest::newRow("one notch up") << 120 << QList<int>{120};
    QTest::newRow("two notches down") << -240 << QList<int>{-120, -120};
    QTest::newRow("half a notch sends nothing") << 60 << QList<int>{};
  }
  void sendsTheWheelAs120PerNotch() {
    QFETCH(int, angle);
    QFETCH(QList<int>, wheels);
    Rig rig;
    QVERIFY(rig.start());
    rig.wheel(rig.widgetPointFor(QPoint(300, 300)), angle);
    QVERIFY(rig.console.roundTrip());
    QList<int> got;
    for (const auto& p : std::as_const(rig.console.pointers)) {
      if (p.wheel != 0) {
        got.append(p.wheel);
        QCOMPARE(QPoint(p.x, p.y), QPoint(300, 300));
      }
    }
    QCOMPARE(got, wheels);
  }

  void sendsNoInputAfterTheLock() {
    Rig rig;
    QVERIFY(rig.start());
    QTest::keyPress(rig.view.get(), Qt::Key_Shift); // held across the lock
    QTRY_COMPARE(rig.console.keys.size(), 1);
    QVERIFY(rig.toPhase(QStringLiteral("READ_ONLY")));
    QVERIFY(rig.view->isReadOnlyOverlayShown());
    QVERIFY(!rig.view->isInputAttached());
    QCOMPARE(rig.view->focusPolicy(), Qt::NoFocus);
    QCOMPARE(rig.view->phaseLabel(), QStringLiteral("READ-ONLY"));
    const qsizetype keysBefore = rig.console.keys.size();
    const qsizetype pointersBefore = rig.console.pointers.size();
    const quint64 seqBefore = rig.client.lastSeq();

    QTest::keyRelease(rig.view.get(), Qt::Key_Shift);
    QTest::keyClick(rig.view.get(), Qt::Key_A);
    QTest::mouseClick(rig.view.get(), Qt::LeftButton, Qt::NoModifier, rig.widgetPointFor(QPoint(10, 10)));
    QTest::mouseMove(rig.view.get(), rig.widgetPointFor(QPoint(500, 500)));
    rig.wheel(rig.widgetPointFor(QPoint(50, 50)), 120);
    QFocusEvent focusOut(QEvent::FocusOut);
    QApplication::sendEvent(rig.view.get(), &focusOut);
    QVERIFY(!rig.client.sendKey(0x1E, true)); // the client refuses too: second line
    QVERIFY(rig.console.roundTrip());

    QCOMPARE(rig.console.keys.size(), keysBefore);
    QCOMPARE(rig.console.pointers.size(), pointersBefore);
    QCOMPARE(rig.client.lastSeq(), seqBefore);
    QVERIFY(rig.console.server->refusals().isEmpty());
    // The overlay is on screen: the read-only frame colour borders the desktop.
    const QImage shot = rig.view->grab().toImage();
    const QRect frame = rig.view->frameRect();
    QCOMPARE(shot.pixelColor(frame.center().x(), frame.top() + 3), QColor(0xc6, 0x28, 0x28));
    QVERIFY(rig.view->bannerText().startsWith(QStringLiteral("Read-only")));
  }

  void releasesHeldKeysOnFocusOut() {
    Rig rig;
    QVERIFY(rig.start());
    QTest::keyPress(rig.view.get(), Qt::Key_Control);
    QTest::mousePress(rig.view.get(), Qt::LeftButton, Qt::NoModifier, rig.widgetPointFor(QPoint(40, 60)));
    QTRY_COMPARE(rig.console.keys.size(), 1);
    QFocusEvent focusOut(QEvent::FocusOut);
    QApplication::sendEvent(rig.view.get(), &focusOut);
    QTRY_COMPARE(rig.console.keys.size(), 2);
    QCOMPARE(rig.console.keys[1].scancode, quint16(0x1D));
    QCOMPARE(rig.console.keys[1].down, false);
    QTRY_VERIFY(rig.console.pointers.last().buttons == 0);
    QCOMPARE(QPoint(rig.console.pointers.last().x, rig.console.pointers.last().y), QPoint(40, 60));
  }

  void lockReleasesHeldInputThenAsksTheConsole() {
    Rig rig;
    QVERIFY(rig.start());
    QSignalSpy lock(rig.console.server.get(), &PanelServer::lockRequested);
    QTest::keyPress(rig.view.get(), Qt::Key_Shift);
    rig.view->requestLock();
    QVERIFY(lock.wait(5000));
    QCOMPARE(rig.console.keys.size(), 2); // the release arrived before the lock
    QCOMPARE(rig.console.keys[1].down, false);
    QVERIFY(!rig.view->isInputAttached()); // no input path, even before the console answers
    QTest::keyClick(rig.view.get(), Qt::Key_A);
    QVERIFY(rig.console.roundTrip());
    QCOMPARE(rig.console.keys.size(), 2);
  }

  void countsAcknowledgedAndRefusedInput() {
    Rig rig;
    QVERIFY(rig.start());
    QTest::keyClick(rig.view.get(), Qt::Key_B);
    QTRY_COMPARE(rig.client.acked(), quint64(2));
    QSignalSpy counters(&rig.client, &ConsoleClient::countersChanged);
    rig.console.server->sendText(panel::inputRefused(3, Refusal::PhaseLocked));
    rig.console.server->sendText(panel::inputRefused(4, Refusal::PhaseLocked));
    QTRY_COMPARE(rig.client.refusedCount(), quint64(2));
    QCOMPARE(rig.client.acked(), quint64(2));
  }

  void closesOnAMalformedConsoleMessage() {
    Rig rig;
    QVERIFY(rig.start());
    QSignalSpy closed(&rig.client, &ConsoleClient::closed);
    rig.console.server->sendText(
        QByteArray("{\"type\":\"phase\",\"phase\":\"SETUP_AGAIN\",\"reason\":\"\"}"));
    QVERIFY(closed.wait(5000));
    QVERIFY(closed.first().first().toString().startsWith(QStringLiteral("PROTOCOL_MALFORMED")));
    QVERIFY(!rig.view->isInputAttached());
  }

  void acknowledgesEveryFrame() {
    Rig rig;
    QVERIFY(rig.start());
    for (int i = 0; i < 5; ++i)
      QVERIFY(rig.console.roundTrip());
    QTRY_COMPARE(rig.console.pipeline.unackedFrames(), 0);
    QVERIFY(!rig.console.pipeline.isEncoding());
    QCOMPARE(rig.client.framesDropped(), quint64(0));
    QVERIFY(rig.client.framesPresented() >= 6);
    QCOMPARE(rig.client.frame().pixelColor(604, 604), rig.console.desktop.pixelColor(604, 604));
  }

  void byeClosesWithTheReason() {
    Rig rig;
    QVERIFY(rig.start());
    QSignalSpy closed(&rig.client, &ConsoleClient::closed);
    rig.console.server->closePanel(QStringLiteral("operator closed the console"));
    QVERIFY(closed.wait(5000));
    QCOMPARE(closed.size(), 1);
    QCOMPARE(closed.first().first().toString(), QStringLiteral("operator closed the console"));
    QCOMPARE(rig.client.phase(), QStringLiteral("CLOSED"));
    QCOMPARE(rig.view->phaseLabel(), QStringLiteral("CLOSED"));
    QVERIFY(rig.view->bannerText().contains(QStringLiteral("operator closed the console")));
    QVERIFY(!rig.view->isInputAttached());
    QVERIFY(!markerIn(rig.view->grab().toImage()).has_value()); // the guest's picture is gone
  }

  void presentsAFrameOnlyWhole() {
    Rig rig;
    QVERIFY(rig.start());
    QTRY_COMPARE(rig.console.pipeline.unackedFrames(), 0);
    QSignalSpy frames(&rig.client, &ConsoleClient::frameReady);
    QSignalSpy dropped(&rig.client, &ConsoleClient::frameDropped);
    const QImage red = solid(QSize(32, 16), qRgb(255, 0, 0));
    const QImage green = solid(QSize(16, 32), qRgb(0, 255, 0));

    // A frame whose second rectangle does not decode is dropped whole: not even the first
    // rectangle reaches the screen.
    QByteArray broken = png(green);
    broken[broken.size() / 2] = char(~broken[broken.size() / 2]);
    broken.truncate(broken.size() - 20);
    rig.console.server->sendBinary(twoRectPacket(1000, png(red), broken));
    QVERIFY(dropped.wait(5000));
    QCOMPARE(frames.size(), 0);
    QCOMPARE(rig.client.frame().pixel(210, 105), rig.console.desktop.pixel(210, 105));
    QTRY_VERIFY(rig.console.acks.contains(1000u)); // acknowledged anyway: flow never stalls

    rig.console.server->sendBinary(twoRectPacket(1001, png(red), png(green)));
    QVERIFY(frames.wait(5000));
    QCOMPARE(frames.size(), 1);
    const QImage shown = frames.first().first().value<QImage>();
    QCOMPARE(frames.first().at(1).toUInt(), 1001u);
    QCOMPARE(shown.pixel(210, 105), qRgb(255, 0, 0));
    QCOMPARE(shown.pixel(705, 510), qRgb(0, 255, 0));
    QCOMPARE(shown.pixel(300, 300), rig.console.desktop.pixel(300, 300));
    QTRY_VERIFY(rig.console.acks.contains(1001u));
    QCOMPARE(frames.size(), 1);
  }

  // A frame the viewer cannot paint is acknowledged (when its id is readable) and followed by
  // frame_refresh naming it (0 for an unreadable header); the console's whole desktop then
  // repaints what the dropped frame would have changed.
  void asksForTheWholeDesktopWhenItCannotPaint() {
    Rig rig;
    QVERIFY(rig.start());
    rig.console.answerRefresh = true;
    QTRY_COMPARE(rig.console.pipeline.unackedFrames(), 0);
    QCOMPARE(rig.console.refreshes, QList<quint32>());
    QSignalSpy frames(&rig.client, &ConsoleClient::frameReady);
    QSignalSpy dropped(&rig.client, &ConsoleClient::frameDropped);

    // The desktop changed under a frame the viewer cannot decode.
    QByteArray broken = png(solid(QSize(16, 32), qRgb(0, 255, 0)));
    broken.truncate(broken.size() / 2);
    rig.console.desktop = rig.console.desktop.copy();
    QPainter(&rig.console.desktop).fillRect(QRect(700, 500, 16, 32), qRgb(0, 255, 0));
    rig.console.server->sendBinary(twoRectPacket(2000, png(solid(QSize(32, 16), qRgb(255, 0, 0))), broken));
    QVERIFY(dropped.wait(5000));
    QTRY_COMPARE(rig.console.refreshes, QList<quint32>{2000u});
    QVERIFY(rig.console.acks.contains(2000u));
    // The refresh brings the whole desktop: the green the dropped frame carried is shown. Wait
    // for it, not for the next frame: the console may send the desktop in more than one frame.
    QTRY_COMPARE_WITH_TIMEOUT(rig.client.frame().pixel(705, 510), qRgb(0, 255, 0), 15000);
    QVERIFY(!frames.isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(markerIn(rig.client.frame()), std::optional<uint32_t>(kMarker), 15000);
    QTRY_COMPARE(rig.console.pipeline.unackedFrames(), 0);

    // An unreadable header: nothing to acknowledge, a refresh for frame 0.
    const qsizetype acksBefore = rig.console.acks.size();
    rig.console.server->sendBinary(QByteArrayLiteral("not a frame packet"));
    QTRY_COMPARE(rig.console.refreshes, (QList<quint32>{2000u, 0u}));
    QCOMPARE(rig.client.framesDropped(), quint64(2));
    QTRY_VERIFY(rig.console.acks.size() > acksBefore); // the refresh's own frame, acknowledged
    QVERIFY(!rig.console.acks.mid(acksBefore).contains(0u));
    QVERIFY(rig.console.roundTrip()); // the stream goes on
  }

  void connectsWithoutOriginHeader() {
    QTcpServer raw;
    QVERIFY(raw.listen(QHostAddress::LocalHost, 0));
    ConsoleClient client;
    ConsoleClient::Options options;
    options.port = raw.serverPort();
    options.run = QStringLiteral("r");
    options.task = QStringLiteral("t");
    options.capabilityHex = randomCapability().toHex();
    const QByteArray capability = options.capabilityHex;
    client.open(std::move(options));
    QVERIFY(raw.waitForNewConnection(5000));
    QTcpSocket* socket = raw.nextPendingConnection();
    QByteArray request;
    QVERIFY(QTest::qWaitFor(
        [&] {
          request += socket->readAll();
          return request.contains("\r\n\r\n");
        },
        5000));
    QVERIFY(request.startsWith("GET / HTTP/1.1\r\n"));
    QVERIFY(request.toLower().contains("\r\nupgrade: websocket\r\n"));
    QVERIFY(!request.toLower().contains("\r\norigin:"));
    QVERIFY(!request.toLower().contains("sec-websocket-origin"));
    QVERIFY(!request.contains(capability));
  }

  void viewerReadsTheCapabilityFromStdinNotArgv() {
    ConsoleSide console;
    QVERIFY(console.listen());
    QSignalSpy authorized(console.server.get(), &PanelServer::panelAuthorized);
    QProcess viewer;
    viewer.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    viewer.start(QStringLiteral(GC_VIEWER_BIN),
                 {QStringLiteral("--port"), QString::number(console.server->port()), QStringLiteral("--run"),
                  console.policy.run, QStringLiteral("--task"), console.policy.task,
                  QStringLiteral("--exit-on-close")});
    QVERIFY(viewer.waitForStarted(5000));
    viewer.write(console.capabilityHex() + '\n');
    QVERIFY(authorized.wait(20000));
    const QByteArray cmdline = procFile(viewer.processId(), "cmdline");
    QVERIFY(cmdline.contains("--port"));
    QVERIFY(!cmdline.contains(console.capabilityHex()));
    QVERIFY(!cmdline.toLower().contains(console.capabilityHex().toLower()));
    QVERIFY(!procFile(viewer.processId(), "environ").contains(console.capabilityHex()));
    QTRY_VERIFY_WITH_TIMEOUT(!console.acks.isEmpty(), 20000); // it shows and acknowledges frames
    console.server->closePanel(QStringLiteral("test over"));
    QVERIFY(viewer.waitForFinished(20000));
    QCOMPARE(viewer.exitStatus(), QProcess::NormalExit);
    QCOMPARE(viewer.exitCode(), 0);
  }

  void viewerReadsTheCapabilityFromADescriptor() {
    ConsoleSide console;
    QVERIFY(console.listen());
    QSignalSpy authorized(console.server.get(), &PanelServer::panelAuthorized);
    int fds[2];
    QCOMPARE(::pipe(fds), 0);
    const QByteArray line = console.capabilityHex() + '\n';
    QCOMPARE(::write(fds[1], line.constData(), size_t(line.size())), ssize_t(line.size()));
    ::close(fds[1]);
    const int readEnd = fds[0];
    QProcess viewer;
    viewer.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    viewer.setChildProcessModifier([readEnd] { ::dup2(readEnd, 3); });
    viewer.start(QStringLiteral(GC_VIEWER_BIN),
                 {QStringLiteral("--port"), QString::number(console.server->port()), QStringLiteral("--run"),
                  console.policy.run, QStringLiteral("--task"), console.policy.task,
                  QStringLiteral("--capability-fd"), QStringLiteral("3"), QStringLiteral("--exit-on-close")});
    QVERIFY(viewer.waitForStarted(5000));
    ::close(readEnd);
    viewer.closeWriteChannel(); // stdin is empty: the descriptor is the only source
    QVERIFY(authorized.wait(20000));
    console.server->closePanel(QStringLiteral("test over"));
    QVERIFY(viewer.waitForFinished(20000));
    QCOMPARE(viewer.exitCode(), 0);
  }

  void viewerRefusesACapabilityOption() {
    QProcess viewer;
    viewer.start(QStringLiteral(GC_VIEWER_BIN),
                 {QStringLiteral("--port"), QStringLiteral("1"), QStringLiteral("--run"), QStringLiteral("r"),
                  QStringLiteral("--task"), QStringLiteral("t"), QStringLiteral("--capability"),
                  QString::fromLatin1(randomCapability().toHex())});
    QVERIFY(viewer.waitForFinished(20000));
    QVERIFY(viewer.exitCode() != 0);
  }

  void mapsEvdevCodesToSet1_data() {
    QTest::addColumn<int>("evdev");
    QTest::addColumn<int>("scancode");
    QTest::newRow("KEY_A") << 30 << 0x1E;
    QTest::newRow("KEY_ESC") << 1 << 0x01;
    QTest::newRow("KEY_102ND") << 86 << 0x56;
    QTest::newRow("KEY_F12") << 88 << 0x58;
    QTest::newRow("KEY_KPENTER") << 96 << 0xE01C;
    QTest::newRow("KEY_RIGHTCTRL") << 97 << 0xE01D;
    QTest::newRow("KEY_RIGHTALT") << 100 << 0xE038;
    QTest::newRow("KEY_UP") << 103 << 0xE048;
    QTest::newRow("KEY_DELETE") << 111 << 0xE053;
    QTest::newRow("KEY_LEFTMETA") << 125 << 0xE05B;
    QTest::newRow("KEY_F13") << 183 << 0x64;
    QTest::newRow("KEY_PAUSE has none") << 119 << 0;
  }
  void mapsEvdevCodesToSet1() {
    QFETCH(int, evdev);
    QFETCH(int, scancode);
    QCOMPARE(ScancodeMap::fromEvdev(quint32(evdev)), quint16(scancode));
  }

  void parsesConsoleMessagesStrictly_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<bool>("ok");
    QTest::newRow("phase") << panel::phase(QStringLiteral("READ_ONLY"), QStringLiteral("x")) << true;
    QTest::newRow("bye") << panel::bye(QStringLiteral("done")) << true;
    QTest::newRow("input_refused") << panel::inputRefused(3, Refusal::PhaseLocked) << true;
    QTest::newRow("error") << panel::error(Refusal::Flood, QStringLiteral("slow down")) << true;
    QTest::newRow("welcome") << panel::welcome(QStringLiteral("r"), QStringLiteral("t"), QStringLiteral("vm"),
                                               {}, QStringLiteral("SETUP"), 800, 600)
                             << true;
    QTest::newRow("unknown phase") << panel::phase(QStringLiteral("UNLOCKED"), QStringLiteral("x")) << false;
    QTest::newRow("extra field") << QByteArray("{\"type\":\"bye\",\"reason\":\"r\",\"x\":1}") << false;
    QTest::newRow("type not first") << QByteArray("{\"reason\":\"r\",\"type\":\"bye\"}") << false;
    QTest::newRow("duplicate key") << QByteArray("{\"type\":\"bye\",\"reason\":\"r\",\"reason\":\"s\"}")
                                   << false;
    QTest::newRow("unknown code") << QByteArray("{\"type\":\"input_refused\",\"seq\":1,\"code\":\"NOPE\"}")
                                  << false;
    QTest::newRow("fractional upto") << QByteArray("{\"type\":\"input_ack\",\"upto\":1.5}") << false;
    QTest::newRow("unknown type") << QByteArray("{\"type\":\"clipboard\",\"text\":\"x\"}") << false;
  }
  void parsesConsoleMessagesStrictly() {
    QFETCH(QByteArray, text);
    QFETCH(bool, ok);
    QCOMPARE(panel::parseConsoleMessage(text).ok(), ok);
  }

  void refusesMalformedFramePackets_data() {
    QTest::addColumn<QByteArray>("packet");
    const QByteArray good =
        twoRectPacket(1, png(solid(QSize(32, 16), qRgb(1, 2, 3))), png(solid(QSize(16, 32), qRgb(4, 5, 6))));
    QByteArray badMagic = good;
    badMagic[0] = 'X';
    QByteArray outside = good;
    outside[14] = char(0xF0); // first rect's x = 0x03F0 = 1008: 1008 + 32 > 1024
    outside[15] = char(0x03);
    QByteArray encoding = good;
    encoding[14 + 8] = 9; // 3 is COPY (issue 27.5)
    QTest::newRow("short header") << good.left(10);
    QTest::newRow("bad magic") << badMagic;
    QTest::newRow("rect outside the desktop") << outside;
    QTest::newRow("unknown encoding") << encoding;
    QTest::newRow("truncated data") << good.left(good.size() - 1);
    QTest::newRow("trailing bytes") << good + QByteArray(1, '\0');
  }
  void refusesMalformedFramePackets() {
    QFETCH(QByteArray, packet);
    QVERIFY(!FrameReader::parse(packet).ok());
  }

  void readsOnlyAWellFormedCapabilityLine_data() {
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<bool>("ok");
    const QByteArray hex(64, 'a');
    QTest::newRow("lowercase") << hex + "\n" << true;
    QTest::newRow("uppercase is normalised") << QByteArray(64, 'A') + "\r\n" << true;
    QTest::newRow("too short") << QByteArray(63, 'a') << false;
    QTest::newRow("not hex") << QByteArray(64, 'g') << false;
    QTest::newRow("empty") << QByteArray() << false;
  }
  void readsOnlyAWellFormedCapabilityLine() {
    QFETCH(QByteArray, line);
    QFETCH(bool, ok);
    const Outcome<QByteArray> cap = CapabilityReader::parseLine(line);
    QCOMPARE(cap.ok(), ok);
    if (ok)
      QCOMPARE(cap.value(), QByteArray(64, 'a'));
  }
};

QTEST_MAIN(tst_Viewer)
#include "tst_viewer.moc"
