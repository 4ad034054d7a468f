// The benchmark fixes the desktop (issue 20.2): the console requests the grant's rdp.desktop
// and rdp.keyboard_layout, refuses RDP_DESKTOP_MISMATCH at SETUP (before any input) when the
// guest presents another size — at connect or after a resize — unless the grant leaves the
// size to the server, and the welcome, the capture and the receipt carry the session's size.
// Real components: the test guest (FreeRDP's server library), the console, a real panel socket.
#include "../console/ConsoleRig.h"
#include "action/ActionService.h"

#include <QSignalSpy>
#include <QTest>

using namespace gc;

namespace {

QSize sizeOf(const QJsonValue& v) {
  const QJsonObject o = v.toObject();
  return {o.value(QStringLiteral("width")).toInt(-1), o.value(QStringLiteral("height")).toInt(-1)};
}

QString closedReason(const ConsoleRig& rig) {
  return rig.controlEvents(QStringLiteral("closed")).value(0).value(QStringLiteral("reason")).toString();
}

} // namespace

class tst_Desktop : public QObject {
  Q_OBJECT

private slots:
  // A guest that takes the client's size (a new Windows session) gets exactly the grant's
  // size and layout; the welcome reports the session's size and the layout sent.
  void requestedDesktopReachesTheGuest_data() {
    QTest::addColumn<QSize>("desktop");
    QTest::addColumn<QString>("layout"); // empty: the default
    QTest::addColumn<QString>("sent");
    QTest::newRow("1280x720, default layout") << QSize(1280, 720) << QString() << "0x00000409";
    QTest::newRow("800x600, German") << QSize(800, 600) << "0x00000407"
                                     << "0x00000407";
  }
  void requestedDesktopReachesTheGuest() {
    QFETCH(QSize, desktop);
    QFETCH(QString, layout);
    QFETCH(QString, sent);
    GrantSpec spec;
    spec.desktop = desktop;
    spec.keyboardLayout = layout;
    ConsoleRig rig(spec);
    QVERIFY(rig.startGuest()); // no --width/--height: the guest honours the request
    QCOMPARE(rig.guest.ready().value(QStringLiteral("size")).toString(), QStringLiteral("client"));
    QVERIFY(!rig.writeGrant().isEmpty());
    QVERIFY(rig.openConsole().ok());
    QVERIFY(rig.connectGuest());
    QVERIFY(rig.guest.waitForEvent(QStringLiteral("activated")));
    const QJsonObject asked = rig.guest.events(QStringLiteral("client_desktop")).value(0);
    QCOMPARE(sizeOf(asked), desktop);
    QCOMPARE(asked.value(QStringLiteral("keyboard_layout")).toString(), sent);
    QCOMPARE(sizeOf(rig.guest.events(QStringLiteral("activated")).value(0)), desktop);

    QVERIFY(rig.connectPanel());
    const QJsonObject welcome = rig.panelMessages(QStringLiteral("welcome")).value(0);
    QCOMPARE(sizeOf(welcome), desktop);
    QCOMPARE(welcome.value(QStringLiteral("identity")).toObject().value(QStringLiteral("keyboard_layout")),
             QJsonValue(sent));
    const QJsonObject entry = evidenceEntries(rig, QStringLiteral("desktop")).value(0);
    QCOMPARE(entry.value(QStringLiteral("result")).toString(), QStringLiteral("requested"));
    QCOMPARE(sizeOf(entry.value(QStringLiteral("requested"))), desktop);
    QCOMPARE(sizeOf(entry.value(QStringLiteral("presented"))), desktop);
    QCOMPARE(entry.value(QStringLiteral("keyboard_layout")).toString(), sent);
    rig.sendControl("{\"cmd\":\"close\"}");
    QTRY_VERIFY_WITH_TIMEOUT(rig.finished, 15000);
  }

  // A guest with a fixed size (a console or shadow session) that is not the grant's: the
  // console closes RDP_DESKTOP_MISMATCH at SETUP; no welcome, no input reached the guest.
  void refusesAnotherDesktopAtSetup() {
    GrantSpec spec;
    spec.desktop = QSize(1024, 768);
    ConsoleRig rig(spec);
    QVERIFY(rig.startGuest({QStringLiteral("--width"), QStringLiteral("800"), QStringLiteral("--height"),
                            QStringLiteral("600")}));
    QCOMPARE(rig.guest.ready().value(QStringLiteral("size")).toString(), QStringLiteral("fixed"));
    QVERIFY(!rig.writeGrant().isEmpty());
    QVERIFY(rig.openConsole().ok());
    // A panel that is there from the start and types as soon as it can.
    QVERIFY(rig.waitControl(QStringLiteral("credentials_required"))); // after "ready"
    const QJsonObject ready = rig.controlEvents(QStringLiteral("ready")).value(0);
    const QJsonObject p = ready.value(QStringLiteral("panel")).toObject();
    QSignalSpy opened(&rig.panel, &QWebSocket::connected);
    rig.panel.open(QUrl(QStringLiteral("ws://127.0.0.1:%1").arg(p.value(QStringLiteral("port")).toInt())));
    QVERIFY(opened.wait(5000));
    rig.panel.sendTextMessage(
        QStringLiteral("{\"type\":\"hello\",\"run\":\"%1\",\"task\":\"task-1\",\"capability\":\"%2\","
                       "\"client\":{\"kind\":\"test\",\"version\":\"1\"}}")
            .arg(rig.runId, p.value(QStringLiteral("capability")).toString()));
    rig.sendControl(QByteArrayLiteral("{\"cmd\":\"credentials\",\"username\":\"op\",\"password\":\"") +
                    rig.spec.password.toUtf8() + QByteArrayLiteral("\",\"domain\":\"\"}"));
    int seq = 0;
    QDeadlineTimer deadline(20000);
    while (!rig.finished && !deadline.hasExpired()) {
      ++seq;
      const QString down = seq % 2 ? QStringLiteral("true") : QStringLiteral("false");
      rig.panel.sendTextMessage(
          QStringLiteral("{\"type\":\"key\",\"seq\":%1,\"scancode\":30,\"down\":%2}").arg(seq).arg(down));
      QTest::qWait(5); // pacing the typist, not synchronisation: the loop ends on `finished`
    }
    QVERIFY(rig.finished);
    QCOMPARE(closedReason(rig), QStringLiteral("RDP_DESKTOP_MISMATCH"));
    // The guest presented its size in the Demand Active; the validating front refused it there,
    // before the client confirmed it (so the guest never saw an activated client).
    QVERIFY(rig.guest.events(QStringLiteral("activated")).isEmpty());
    QVERIFY(seq > 0);
    QVERIFY(rig.panelMessages(QStringLiteral("welcome")).isEmpty());
    QVERIFY(rig.panelMessages(QStringLiteral("input_ack")).isEmpty());
    QVERIFY(rig.guest.events(QStringLiteral("input")).isEmpty());
    const QJsonObject entry = evidenceEntries(rig, QStringLiteral("desktop")).value(0);
    QCOMPARE(entry.value(QStringLiteral("when")).toString(), QStringLiteral("connect"));
    QCOMPARE(entry.value(QStringLiteral("result")).toString(), QStringLiteral("RDP_DESKTOP_MISMATCH"));
    QCOMPARE(sizeOf(entry.value(QStringLiteral("requested"))), QSize(1024, 768));
    QCOMPARE(sizeOf(entry.value(QStringLiteral("presented"))), QSize(800, 600));
    QCOMPARE(entry.value(QStringLiteral("keyboard_layout")).toString(), QStringLiteral("0x00000409"));
    const QJsonObject counts = evidenceEntries(rig, QStringLiteral("input_counts")).value(0);
    QCOMPARE(counts.value(QStringLiteral("accepted")).toInt(-1), 0);
    // The phase never left SETUP before CLOSED.
    for (const QJsonObject& ph : evidenceEntries(rig, QStringLiteral("phase"))) {
      QCOMPARE(ph.value(QStringLiteral("from")).toString(), QStringLiteral("SETUP"));
      QCOMPARE(ph.value(QStringLiteral("to")).toString(), QStringLiteral("CLOSED"));
    }
  }

  // size_from "server": the presented size is taken, recorded and used.
  void takesTheServersSizeWhenTheGrantSaysSo() {
    GrantSpec spec;
    spec.desktop = QSize(1024, 768);
    spec.sizeFrom = QStringLiteral("server");
    ConsoleRig rig(spec);
    QVERIFY(rig.startGuest({QStringLiteral("--width"), QStringLiteral("800"), QStringLiteral("--height"),
                            QStringLiteral("600")}));
    QVERIFY(!rig.writeGrant().isEmpty());
    QVERIFY(rig.openConsole().ok());
    QVERIFY(rig.connectGuest());
    QVERIFY(rig.connectPanel());
    QCOMPARE(sizeOf(rig.panelMessages(QStringLiteral("welcome")).value(0)), QSize(800, 600));
    const QJsonObject entry = evidenceEntries(rig, QStringLiteral("desktop")).value(0);
    QCOMPARE(entry.value(QStringLiteral("result")).toString(), QStringLiteral("server"));
    QCOMPARE(entry.value(QStringLiteral("size_from")).toString(), QStringLiteral("server"));
    QCOMPARE(sizeOf(entry.value(QStringLiteral("presented"))), QSize(800, 600));
    // The panel's input is judged against the presented desktop.
    rig.panel.sendTextMessage(
        QStringLiteral("{\"type\":\"pointer\",\"seq\":1,\"x\":799,\"y\":599,\"buttons\":0,\"wheel\":0}"));
    QTRY_COMPARE_WITH_TIMEOUT(rig.panelMessages(QStringLiteral("input_ack")).size(), 1, 10000);
    rig.sendControl("{\"cmd\":\"close\"}");
    QTRY_VERIFY_WITH_TIMEOUT(rig.finished, 15000);
    QCOMPARE(closedReason(rig), QStringLiteral("OPERATOR_CLOSE"));
  }

  // The screen the model sees is part of the task: a resize later in the run is refused the
  // same way, in SETUP and after the lock.
  void refusesAResizeDuringTheRun_data() {
    QTest::addColumn<bool>("locked");
    QTest::newRow("SETUP") << false;
    QTest::newRow("after the lock") << true;
  }
  void refusesAResizeDuringTheRun() {
    QFETCH(bool, locked);
    ConsoleRig rig; // 1024x768, the guest honours it
    QVERIFY(rig.startGuest());
    QVERIFY(!rig.writeGrant().isEmpty());
    QVERIFY(rig.openConsole().ok());
    QVERIFY(rig.connectGuest());
    QVERIFY(rig.connectPanel());
    if (locked) {
      rig.sendControl("{\"cmd\":\"lock\"}");
      QVERIFY(rig.waitPhase(QStringLiteral("CAPTURING")));
    }
    const int inputsBefore = int(rig.guest.events(QStringLiteral("input")).size());
    rig.guest.command(R"({"cmd":"resize","width":1280,"height":720})");
    QTRY_VERIFY_WITH_TIMEOUT(rig.finished, 20000);
    QCOMPARE(closedReason(rig), QStringLiteral("RDP_DESKTOP_MISMATCH"));
    const QList<QJsonObject> entries = evidenceEntries(rig, QStringLiteral("desktop"));
    QCOMPARE(entries.size(), 2);
    QCOMPARE(entries[1].value(QStringLiteral("when")).toString(), QStringLiteral("resize"));
    QCOMPARE(sizeOf(entries[1].value(QStringLiteral("presented"))), QSize(1280, 720));
    QCOMPARE(entries[1].value(QStringLiteral("result")).toString(), QStringLiteral("RDP_DESKTOP_MISMATCH"));
    // Nothing was sent to the guest after the resize (the lock's held-input release came before).
    QCOMPARE(int(rig.guest.events(QStringLiteral("input")).size()), inputsBefore);
  }

  // Capture Desktop's result and the receipt carry the session's size.
  void captureAndReceiptCarryTheSize() {
    GrantSpec spec;
    spec.desktop = QSize(800, 600);
    ConsoleRig rig(spec);
    QVERIFY(rig.startGuest());
    QVERIFY(!rig.writeGrant().isEmpty());
    QVERIFY(rig.openConsole().ok());
    QVERIFY(rig.connectGuest());
    QVERIFY(rig.connectPanel());
    rig.sendControl("{\"cmd\":\"lock\"}");
    QVERIFY(rig.waitPhase(QStringLiteral("CAPTURING")));
    QTRY_VERIFY(!rig.console->currentFrame().isNull());
    const Outcome<ActionService::Capture> capture = rig.console->actionService()->captureDesktop();
    QVERIFY(capture.ok());
    QCOMPARE(QSize(capture->width, capture->height), QSize(800, 600));
    const Outcome<Receipt> receipt = rig.console->actionService()->performAction(
        QJsonObject{{QStringLiteral("action"), QJsonObject{{QStringLiteral("type"), QStringLiteral("click")},
                                                           {QStringLiteral("x"), 10},
                                                           {QStringLiteral("y"), 10}}}});
    QVERIFY(receipt.ok());
    QCOMPARE(receipt->desktop, QSize(800, 600));
    QCOMPARE(sizeOf(receipt->toJson().value(QStringLiteral("desktop"))), QSize(800, 600));
    QVERIFY(rig.waitControl(QStringLiteral("receipt")));
    QCOMPARE(sizeOf(rig.controlEvents(QStringLiteral("receipt")).value(0).value(QStringLiteral("desktop"))),
             QSize(800, 600));
    QTRY_VERIFY_WITH_TIMEOUT(rig.finished, 15000);
  }
};

QTEST_MAIN(tst_Desktop)
#include "tst_desktop.moc"
