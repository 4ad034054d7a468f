// Issue 25: the one action in every kind and dialect, end to end against the real test guest
// (a FreeRDP server that records every input PDU it reads): the exact sequence the guest
// recorded, releases and modifiers included, equals the expected one; events_sent equals what
// the guest counted; the receipt waited for the guest's confirmation; and what the server does
// not advertise is refused with a typed code, nothing sent, the action not used up.
#include "ConsoleRig.h"
#include "action/ActionService.h"
#include "action/Receipt.h"
#include "readerhost/RdpReader.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>
#include <QTimer>

using namespace gc;

namespace {

// One guest input as the test guest reported it.
QString inputText(const QJsonObject& e) {
  const QString kind = e.value(QStringLiteral("kind")).toString();
  const int flags = e.value(QStringLiteral("flags")).toInt();
  const int code = e.value(QStringLiteral("code")).toInt();
  if (kind == u"key" || kind == u"unicode")
    return QStringLiteral("%1 0x%2 %3")
        .arg(kind)
        .arg(code, 0, 16)
        .arg((flags & 0x8000) ? QStringLiteral("up") : QStringLiteral("down"));
  return QStringLiteral("%1 0x%2 (%3,%4)")
      .arg(kind)
      .arg(flags, 0, 16)
      .arg(e.value(QStringLiteral("x")).toInt())
      .arg(e.value(QStringLiteral("y")).toInt());
}

QStringList guestInputs(ConsoleRig& rig) {
  QStringList out;
  for (const QJsonObject& e : rig.guest.events(QStringLiteral("input")))
    out << inputText(e);
  return out;
}

QJsonObject everyKind() {
  return QJsonObject{{QStringLiteral("kinds"),
                      QJsonArray{QStringLiteral("click"), QStringLiteral("move"), QStringLiteral("drag"),
                                 QStringLiteral("scroll"), QStringLiteral("key_chord"),
                                 QStringLiteral("hold_key"), QStringLiteral("type_text"),
                                 QStringLiteral("wait"), QStringLiteral("done"), QStringLiteral("fail")}}};
}

QJsonObject parse(const QString& json) {
  return QJsonDocument::fromJson(json.toUtf8()).object();
}

// Open, log in, lock, capture: REVIEWING with the grant's action block.
bool reachReviewing(ConsoleRig& rig, const QStringList& guestArgs) {
  rig.spec.action = everyKind();
  if (!rig.openSession(ConsoleRig::Reach::LoggedIn, guestArgs))
    return false;
  if (!rig.console->actionService()->requestLock().ok() || !rig.waitPhase(QStringLiteral("CAPTURING")))
    return false;
  QDeadlineTimer frame(15000);
  while (rig.console->currentFrame().isNull() && !frame.hasExpired())
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
  return rig.console->actionService()->captureDesktop().ok();
}

} // namespace

class tst_ActionGuest : public QObject {
  Q_OBJECT
private slots:
  void guestRecordsExactlyTheActionsInput_data() {
    QTest::addColumn<QString>("arguments");
    QTest::addColumn<QStringList>("expected");
    const QString p = QStringLiteral("pointer 0x%1 (%2,%3)");
    auto ptr = [&](int flags, int x, int y) { return p.arg(flags, 0, 16).arg(x).arg(y); };
    auto key = [](int code, bool down) {
      return QStringLiteral("key 0x%1 %2")
          .arg(code, 0, 16)
          .arg(down ? QStringLiteral("down") : QStringLiteral("up"));
    };
    auto uni = [](int unit) {
      return QStringList{QStringLiteral("unicode 0x%1 down").arg(unit, 0, 16),
                         QStringLiteral("unicode 0x%1 up").arg(unit, 0, 16)};
    };
    QTest::newRow("click") << "{\"action\":{\"type\":\"click\",\"x\":300,\"y\":200}}"
                           << QStringList{ptr(0x800, 300, 200), ptr(0x9000, 300, 200), ptr(0x1000, 300, 200)};
    QTest::newRow("middle click with shift held")
        << "{\"action\":{\"type\":\"click\",\"x\":10,\"y\":20,\"button\":\"middle\",\"hold_keys\":[\"shift\"]"
           "}}"
        << QStringList{key(0x2a, true), ptr(0x800, 10, 20), ptr(0xc000, 10, 20), ptr(0x4000, 10, 20),
                       key(0x2a, false)};
    QTest::newRow("right click") << "{\"action\":{\"type\":\"right_click\",\"x\":5,\"y\":6}}"
                                 << QStringList{ptr(0x800, 5, 6), ptr(0xa000, 5, 6), ptr(0x2000, 5, 6)};
    QTest::newRow("triple click") << "{\"action\":{\"type\":\"click\",\"x\":7,\"y\":8,\"count\":3}}"
                                  << QStringList{ptr(0x800, 7, 8), ptr(0x9000, 7, 8), ptr(0x1000, 7, 8),
                                                 ptr(0x800, 7, 8), ptr(0x9000, 7, 8), ptr(0x1000, 7, 8),
                                                 ptr(0x800, 7, 8), ptr(0x9000, 7, 8), ptr(0x1000, 7, 8)};
    QTest::newRow("back button (TS_POINTERX_EVENT)")
        << "{\"action\":{\"type\":\"click\",\"x\":40,\"y\":50,\"button\":\"back\"}}"
        << QStringList{ptr(0x800, 40, 50), QStringLiteral("extended_pointer 0x8001 (40,50)"),
                       QStringLiteral("extended_pointer 0x1 (40,50)")};
    QTest::newRow("move") << "{\"action\":{\"type\":\"move\",\"x\":600,\"y\":400}}"
                          << QStringList{ptr(0x800, 600, 400)};
    QTest::newRow("drag, moves at most 8 px apart")
        << "{\"action\":{\"type\":\"drag\",\"path\":[{\"x\":100,\"y\":100},{\"x\":130,\"y\":100}]}}"
        << QStringList{ptr(0x800, 100, 100), ptr(0x9000, 100, 100), ptr(0x800, 108, 100),
                       ptr(0x800, 115, 100), ptr(0x800, 123, 100),  ptr(0x800, 130, 100),
                       ptr(0x1000, 130, 100)};
    QTest::newRow("scroll down 2 notches")
        << "{\"action\":{\"type\":\"scroll\",\"x\":400,\"y\":300,\"dx\":0,\"dy\":2}}"
        << QStringList{ptr(0x800, 400, 300), ptr(0x388, 400, 300), ptr(0x388, 400, 300)};
    QTest::newRow("scroll right 1 notch")
        << "{\"action\":{\"type\":\"scroll\",\"x\":400,\"y\":300,\"dx\":1,\"dy\":0}}"
        << QStringList{ptr(0x800, 400, 300), ptr(0x478, 400, 300)};
    QTest::newRow("key chord ctrl+s")
        << "{\"action\":{\"type\":\"key_chord\",\"keys\":[\"s\",\"ctrl\"]}}"
        << QStringList{key(0x1d, true), key(0x1f, true), key(0x1f, false), key(0x1d, false)};
    QTest::newRow("hold_key shift")
        << "{\"action\":{\"type\":\"hold_key\",\"keys\":[\"shift\"],\"seconds\":0.3}}"
        << QStringList{key(0x2a, true), key(0x2a, false)};
    QTest::newRow("type_text: ASCII, accent, above U+FFFF, newline")
        << QString::fromUtf8("{\"action\":{\"type\":\"type_text\",\"text\":\"Hé😀\\n\"}}")
        << uni(0x48) + uni(0xe9) + uni(0xd83d) + uni(0xde00) + QStringList{key(0x1c, true), key(0x1c, false)};
    QTest::newRow("wait") << "{\"action\":{\"type\":\"wait\",\"seconds\":0.2}}" << QStringList{};
    QTest::newRow("done") << "{\"action\":{\"type\":\"done\"}}" << QStringList{};
    QTest::newRow("fail") << "{\"action\":{\"type\":\"fail\"}}" << QStringList{};
    QTest::newRow("anthropic left_click")
        << "{\"anthropic\":{\"action\":\"left_click\",\"coordinate\":[320,240]}}"
        << QStringList{ptr(0x800, 320, 240), ptr(0x9000, 320, 240), ptr(0x1000, 320, 240)};
    QTest::newRow("anthropic key ctrl+shift+t")
        << "{\"anthropic\":{\"action\":\"key\",\"text\":\"ctrl+shift+t\"}}"
        << QStringList{key(0x1d, true),  key(0x2a, true),  key(0x14, true),
                       key(0x14, false), key(0x2a, false), key(0x1d, false)};
    QTest::newRow("openai scroll 200 px up")
        << "{\"openai\":{\"type\":\"scroll\",\"x\":100,\"y\":90,\"scroll_x\":0,\"scroll_y\":-200}}"
        << QStringList{ptr(0x800, 100, 90), ptr(0x278, 100, 90), ptr(0x278, 100, 90)};
    QTest::newRow("openai type") << "{\"openai\":{\"type\":\"type\",\"text\":\"ok\"}}"
                                 << uni(0x6f) + uni(0x6b);
    QTest::newRow("osworld HOTKEY")
        << "{\"osworld\":{\"action_type\":\"HOTKEY\",\"parameters\":{\"keys\":[\"alt\",\"f4\"]}}}"
        << QStringList{key(0x38, true), key(0x3e, true), key(0x3e, false), key(0x38, false)};
    QTest::newRow("ui_tars click at (500,500) of 1024x768")
        << "{\"ui_tars\":\"click(start_box='(500,500)')\"}"
        << QStringList{ptr(0x800, 512, 384), ptr(0x9000, 512, 384), ptr(0x1000, 512, 384)};
  }
  void guestRecordsExactlyTheActionsInput() {
    QFETCH(QString, arguments);
    QFETCH(QStringList, expected);
    ConsoleRig rig;
    QVERIFY2(reachReviewing(rig, {}), qPrintable(rig.failure));
    const int before = int(guestInputs(rig).size());
    const Outcome<Receipt> receipt = rig.console->actionService()->performAction(parse(arguments));
    QVERIFY2(receipt.ok(), receipt.ok() ? "" : qPrintable(receipt.failure().toString()));
    QCOMPARE(receipt->result, Receipt::Result::Executed);
    // The receipt answered after the guest read everything and closed its side.
    QCOMPARE(receipt->confirmation, Receipt::Confirmation::Confirmed);
    QTRY_VERIFY_WITH_TIMEOUT(rig.finished, 20000);
    QVERIFY(rig.guest.waitForEvent(QStringLiteral("client_disconnected"),
                                   int(rig.guest.events(QStringLiteral("client_connected")).size())));
    const QStringList atGuest = guestInputs(rig).mid(before);
    QCOMPARE(atGuest, expected);
    QCOMPARE(receipt->eventsSent, int(atGuest.size()));
    // One graceful finish, before the receipt.
    QCOMPARE(evidenceEntries(rig, QStringLiteral("rdp_finish")).size(), 1);
  }

  // Issue 25 item 4: with a grant's capture size, the model sees a 640x480 capture of the
  // guest's 1024x768 desktop and acts in its space; the guest records the exact desktop pixel
  // X = floor((x + 0.5) * 1024 / 640), Y = floor((y + 0.5) * 768 / 480), and the receipt says so.
  void clickInTheCaptureSpaceLandsAtTheMappedDesktopPixel_data() {
    QTest::addColumn<QString>("arguments");
    QTest::addColumn<QPoint>("desktop");
    QTest::newRow("click (101,77)") << "{\"action\":{\"type\":\"click\",\"x\":101,\"y\":77}}"
                                    << QPoint(162, 124);
    QTest::newRow("click at the last pixel (639,479)")
        << "{\"action\":{\"type\":\"click\",\"x\":639,\"y\":479}}" << QPoint(1023, 767);
    QTest::newRow("anthropic left_click (320,240)")
        << "{\"anthropic\":{\"action\":\"left_click\",\"coordinate\":[320,240]}}" << QPoint(512, 384);
    QTest::newRow("ui_tars (333,667), normalised")
        << "{\"ui_tars\":\"click(start_box='(333,667)')\"}" << QPoint(341, 512);
  }
  void clickInTheCaptureSpaceLandsAtTheMappedDesktopPixel() {
    QFETCH(QString, arguments);
    QFETCH(QPoint, desktop);
    ConsoleRig rig;
    rig.spec.capture = QJsonObject{{QStringLiteral("size"), QJsonArray{640, 480}}};
    QVERIFY2(reachReviewing(rig, {}), qPrintable(rig.failure));
    const Outcome<ActionService::Capture> seen = rig.console->actionService()->captureDesktop();
    QVERIFY(seen.ok());
    QCOMPARE(QSize(seen->width, seen->height), QSize(640, 480));
    QCOMPARE(seen->from, QSize(1024, 768));
    const int before = int(guestInputs(rig).size());
    const Outcome<Receipt> receipt = rig.console->actionService()->performAction(parse(arguments));
    QVERIFY2(receipt.ok(), receipt.ok() ? "" : qPrintable(receipt.failure().toString()));
    QCOMPARE(receipt->result, Receipt::Result::Executed);
    QTRY_VERIFY_WITH_TIMEOUT(rig.finished, 20000);
    QVERIFY(rig.guest.waitForEvent(QStringLiteral("client_disconnected"),
                                   int(rig.guest.events(QStringLiteral("client_connected")).size())));
    const QString p = QStringLiteral("pointer 0x%1 (%2,%3)");
    auto ptr = [&](int flags) { return p.arg(flags, 0, 16).arg(desktop.x()).arg(desktop.y()); };
    QCOMPARE(guestInputs(rig).mid(before), (QStringList{ptr(0x800), ptr(0x9000), ptr(0x1000)}));
    const QJsonObject json = receipt->toJson();
    QCOMPARE(json.value(QStringLiteral("mapped_to")).toObject().value(QStringLiteral("width")).toInt(), 1024);
    const QJsonArray points =
        json.value(QStringLiteral("mapping")).toObject().value(QStringLiteral("points")).toArray();
    QCOMPARE(points.size(), 1);
    QCOMPARE(points.at(0).toObject().value(QStringLiteral("to")).toArray(),
             (QJsonArray{desktop.x(), desktop.y()}));
    // The evidence's capture hash is the hash of the PNG the model got.
    QCOMPARE(evidenceEntries(rig, QStringLiteral("capture"))
                 .last()
                 .value(QStringLiteral("sha256"))
                 .toString()
                 .toLatin1(),
             seen->sha256Hex);
  }

  // A hold lasts what was asked: the guest saw the release no earlier than the hold's end.
  void holdKeyHoldsForItsDuration() {
    ConsoleRig rig;
    QVERIFY2(reachReviewing(rig, {}), qPrintable(rig.failure));
    const qsizetype before = rig.guest.events(QStringLiteral("input")).size();
    const Outcome<Receipt> receipt = rig.console->actionService()->performAction(
        parse("{\"action\":{\"type\":\"hold_key\",\"keys\":[\"ctrl\"],\"seconds\":0.5}}"));
    QVERIFY(receipt.ok());
    QTRY_VERIFY_WITH_TIMEOUT(rig.finished, 20000);
    const QList<QJsonObject> inputs = rig.guest.events(QStringLiteral("input")).mid(before);
    QCOMPARE(inputs.size(), 2);
    const qint64 heldNs = qint64(inputs[1].value(QStringLiteral("t_ns")).toDouble()) -
                          qint64(inputs[0].value(QStringLiteral("t_ns")).toDouble());
    QVERIFY2(heldNs >= 500'000'000, qPrintable(QString::number(heldNs)));
  }

  // A panic during a hold ends it at once, and the held key is released before the session
  // goes (issue 25 point 5): the guest saw the key go up, the evidence says so.
  void panicDuringAHoldReleasesTheHeldKeys() {
    ConsoleRig rig;
    QVERIFY2(reachReviewing(rig, {}), qPrintable(rig.failure));
    const int before = int(guestInputs(rig).size());
    QTimer::singleShot(300, [&rig] { rig.sendControl("{\"cmd\":\"panic\"}"); });
    QElapsedTimer held;
    held.start();
    const Outcome<Receipt> receipt = rig.console->actionService()->performAction(
        parse("{\"action\":{\"type\":\"hold_key\",\"keys\":[\"ctrl\"],\"seconds\":4}}"));
    QVERIFY(receipt.ok());
    QVERIFY2(held.elapsed() < 3500, qPrintable(QString::number(held.elapsed())));
    QCOMPARE(receipt->result, Receipt::Result::Failed);
    QVERIFY(receipt->release.attempted);
    QVERIFY(receipt->release.ok);
    QCOMPARE(receipt->release.keys, 1);
    QTRY_VERIFY_WITH_TIMEOUT(rig.finished, 20000);
    QVERIFY(rig.guest.waitForEvent(QStringLiteral("client_disconnected"),
                                   int(rig.guest.events(QStringLiteral("client_connected")).size())));
    QCOMPARE(guestInputs(rig).mid(before),
             (QStringList{QStringLiteral("key 0x1d down"), QStringLiteral("key 0x1d up")}));
    const QJsonObject released = evidenceEntries(rig, QStringLiteral("action_released")).value(0);
    QCOMPARE(released.value(QStringLiteral("keys_released")).toInt(), 1);
  }

  // A server that does not advertise the input: typed refusal, nothing sent, not used up.
  void refusesWhatTheServerDoesNotAdvertise_data() {
    QTest::addColumn<QString>("arguments");
    QTest::newRow("type_text without Unicode input")
        << "{\"action\":{\"type\":\"type_text\",\"text\":\"abc\"}}";
    QTest::newRow("horizontal scroll without the wheel")
        << "{\"action\":{\"type\":\"scroll\",\"x\":10,\"y\":10,\"dx\":-1,\"dy\":0}}";
    QTest::newRow("forward button without MOUSEX")
        << "{\"action\":{\"type\":\"click\",\"x\":1,\"y\":1,\"button\":\"forward\"}}";
    QTest::newRow("openai type without Unicode input") << "{\"openai\":{\"type\":\"type\",\"text\":\"x\"}}";
  }
  void refusesWhatTheServerDoesNotAdvertise() {
    QFETCH(QString, arguments);
    ConsoleRig rig;
    QVERIFY2(reachReviewing(rig, {QStringLiteral("--input-caps"), QStringLiteral("none")}),
             qPrintable(rig.failure));
    const int before = int(guestInputs(rig).size());
    const Outcome<Receipt> refused = rig.console->actionService()->performAction(parse(arguments));
    QVERIFY(!refused.ok());
    QCOMPARE(refused.code(), Refusal::ActionUnsupported);
    QVERIFY(!rig.console->actionService()->hasActed());
    QCOMPARE(int(guestInputs(rig).size()), before);
    // The one action is still there.
    const Outcome<Receipt> click = rig.console->actionService()->performAction(
        parse("{\"action\":{\"type\":\"click\",\"x\":2,\"y\":3}}"));
    QVERIFY(click.ok());
    QCOMPARE(click->result, Receipt::Result::Executed);
    QTRY_VERIFY_WITH_TIMEOUT(rig.finished, 20000);
  }
};

QTEST_MAIN(tst_ActionGuest)
#include "tst_actionguest.moc"
