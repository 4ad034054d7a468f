// The console end to end, in-process, against the real test guest over RDP and a libvirt
// test-driver domain: opening, the lock barrier, and every close cause.
#include "ConsoleRig.h"
#include "action/Receipt.h"
#include "audit/EvidenceLog.h"
#include "grant/RunLock.h"
#include "readerhost/RdpReader.h"
#include "testguest/IdentityMarker.h"
#include "vm/testsupport/DomainControl.h"

#include <QCryptographicHash>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QSignalSpy>
#include <QTest>

#include <csignal>

using namespace gc;

namespace {

const QByteArray kSentinelPassword = QByteArrayLiteral("S3ntinel-pw-4c1d");

QStringList g_log;
void captureLog(QtMsgType, const QMessageLogContext&, const QString& msg) {
  g_log << msg;
}

// Every file below `root` whose bytes contain `needle`.
QStringList filesContaining(const QString& root, const QByteArray& needle) {
  QStringList hits;
  QDirIterator it(root, QDir::Files | QDir::Hidden | QDir::System, QDirIterator::Subdirectories);
  while (it.hasNext()) {
    QFile f(it.next());
    if (f.open(QIODevice::ReadOnly) && f.readAll().contains(needle))
      hits << f.fileName();
  }
  return hits;
}

QList<QJsonObject> guestInputs(GuestProcess& guest) {
  QList<QJsonObject> out;
  for (const auto& e : guest.events(QStringLiteral("input")))
    out.append(e);
  return out;
}

// One guest input as the test guest reports it; key flags reduced to release/extended.
QString inputText(const QJsonObject& e) {
  const QString kind = e.value(QStringLiteral("kind")).toString();
  const int flags = e.value(QStringLiteral("flags")).toInt();
  if (kind == QLatin1String("key"))
    return QStringLiteral("key 0x%1 %2")
        .arg(e.value(QStringLiteral("code")).toInt(), 0, 16)
        .arg((flags & 0x8000) ? QStringLiteral("up") : QStringLiteral("down"));
  return QStringLiteral("%1 0x%2 (%3,%4)")
      .arg(kind)
      .arg(flags, 0, 16)
      .arg(e.value(QStringLiteral("x")).toInt())
      .arg(e.value(QStringLiteral("y")).toInt());
}

// Everything the guest sent so far has reached the console: a paint it sends now (after its
// activation frame) is shown. Then no update from before a request the test makes next is
// still on its way (a late band over the sync's corner would cover it).
bool guestCaughtUp(ConsoleRig& rig) {
  // The guest sends a paint only to an activated client (else it waits for the next full update).
  if (!rig.guest.waitForEvent(QStringLiteral("activated")))
    return false;
  rig.guest.command("{\"cmd\":\"paint\",\"x\":980,\"y\":700,\"w\":4,\"h\":4,\"color\":\"#12ab34\",\"id\":1}");
  QDeadlineTimer deadline(15000);
  while (!deadline.hasExpired()) {
    const QImage frame = rig.console->currentFrame();
    if (!frame.isNull() && (frame.pixel(980, 700) & 0xFFFFFF) == 0x12AB34)
      return true;
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
  }
  return false;
}

// Over RDPGFX, in addition: every frame the guest sent has been acknowledged, so none is on
// its way when the lock's requests go out (a frame the guest sent before it read a request
// can still arrive after it; a guest made to answer nothing must not have one in flight).
bool gfxCaughtUp(ConsoleRig& rig) {
  QDeadlineTimer deadline(15000);
  while (!deadline.hasExpired()) {
    const QList<QJsonObject> frames = rig.guest.events(QStringLiteral("gfx_frame"));
    const QList<QJsonObject> acks = rig.guest.events(QStringLiteral("gfx_ack"));
    if (!frames.isEmpty() && !acks.isEmpty() &&
        acks.last().value(QStringLiteral("id")).toInteger() >=
            frames.last().value(QStringLiteral("id")).toInteger())
      return true;
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
  }
  return false;
}

// Every connection the guest accepted (the pin probe's and the session's) has ended: all the
// input the console sent has been reported.
bool guestSawEveryClientGo(ConsoleRig& rig) {
  return rig.guest.waitForEvent(QStringLiteral("client_disconnected"),
                                int(rig.guest.events(QStringLiteral("client_connected")).size()));
}

// `guest-console check` on the rig's grant, as an operator runs it: its exit status, its --json
// object, and the evidence logs it left.
struct CheckRun {
  int status = -1;
  QJsonObject json;
  QStringList newLogs;
};
CheckRun runCheckCommand(ConsoleRig& rig, const QStringList& extra = {}) {
  CheckRun run;
  const QString key = rig.dir.filePath(QStringLiteral("issuer.pub"));
  QFile pem(key);
  if (!pem.open(QIODevice::WriteOnly | QIODevice::Truncate) || pem.write(rig.issuerPublicPem) < 0)
    return run;
  pem.close();
  const QDir evidence(rig.dir.filePath(QStringLiteral("state/evidence")));
  const QStringList before = evidence.entryList({QStringLiteral("*.jsonl")}, QDir::Files);
  QProcess p;
  p.setProcessChannelMode(QProcess::ForwardedErrorChannel);
  p.start(QStringLiteral(GC_CONSOLE_BINARY),
          QStringList{QStringLiteral("check"), QStringLiteral("--grant"), rig.grantPath,
                      QStringLiteral("--json"), QStringLiteral("--state-dir"),
                      rig.dir.filePath(QStringLiteral("state")), QStringLiteral("--runtime-dir"),
                      rig.dir.path(), QStringLiteral("--issuer-key"), key,
                      QStringLiteral("--test-ledger-dir"), rig.ledgerDir} +
              extra);
  if (!p.waitForFinished(60000))
    return run;
  run.status = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  run.json = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
  for (const QString& name : evidence.entryList({QStringLiteral("*.jsonl")}, QDir::Files))
    if (!before.contains(name))
      run.newLogs << evidence.filePath(name);
  return run;
}

bool reachedPhase(const ConsoleRig& rig, const QString& phase) {
  for (const auto& o : rig.controlEvents(QStringLiteral("phase")))
    if (o.value(QStringLiteral("phase")).toString() == phase)
      return true;
  return false;
}

} // namespace

class tst_Console : public QObject {
  Q_OBJECT
private slots:
  void opensBindsAndReachesSetup() {
    ConsoleRig rig(GrantSpec{600, {}, false, QString::fromLatin1(kSentinelPassword)});
    QVERIFY(rig.prepare({QStringLiteral("--marker"), QStringLiteral("0x600dcafe")}));
    g_log.clear();
    auto previous = qInstallMessageHandler(captureLog);
    const Status opened = rig.openConsole();
    QVERIFY2(opened.ok(), qPrintable(opened.ok() ? QString() : opened.failure().toString()));
    QVERIFY(rig.waitControl(QStringLiteral("ready")));
    QCOMPARE(rig.console->lifecycle(), Lifecycle::AwaitingCredentials);
    QVERIFY(rig.connectGuest());
    QCOMPARE(rig.console->lifecycle(), Lifecycle::Connected);
    QVERIFY(rig.connectPanel());
    QCOMPARE(rig.console->lifecycle(), Lifecycle::Serving);
    QTRY_VERIFY_WITH_TIMEOUT(rig.framesReceived > 0, 10000);
    // The panel's picture is the granted guest's: its identity marker survives the pipeline.
    // The desktop arrives in bands over several frame updates, so wait until it is shown.
    auto shownMarker = [&rig]() -> std::optional<uint32_t> {
      const QImage shown = rig.canvas.convertToFormat(QImage::Format_RGB32);
      if (shown.isNull())
        return std::nullopt;
      return testguest::findMarker(shown.constBits(), int(shown.bytesPerLine()), shown.width(),
                                   shown.height());
    };
    QTRY_VERIFY_WITH_TIMEOUT(shownMarker().has_value(), 10000);
    QCOMPARE(*shownMarker(), 0x600dcafeu);
    const QJsonObject welcome = rig.panelMessages(QStringLiteral("welcome")).value(0);
    QCOMPARE(welcome.value(QStringLiteral("phase")).toString(), QStringLiteral("SETUP"));
    QCOMPARE(welcome.value(QStringLiteral("width")).toInt(), 1024);
    QCOMPARE(welcome.value(QStringLiteral("vm")).toString(), QStringLiteral("demo-vm"));
    // The run directory exists while open and holds only the binding, the MCP socket and
    // FreeRDP's empty dir.
    const QString runDir = rig.console->runDirectory();
    QVERIFY(QFileInfo(runDir).isDir());
    QCOMPARE(
        QDir(runDir).entryList(QDir::AllEntries | QDir::System | QDir::NoDotAndDotDot | QDir::Hidden),
        (QStringList{QStringLiteral("binding.json"), QStringLiteral("freerdp"), QStringLiteral("mcp.sock")}));
    QVERIFY(QDir(runDir + QStringLiteral("/freerdp")).isEmpty());

    rig.sendControl("{\"cmd\":\"close\"}");
    QTRY_VERIFY(rig.finished);
    QCOMPARE(rig.console->lifecycle(), Lifecycle::Closed);
    QVERIFY(rig.waitControl(QStringLiteral("closed")));
    qInstallMessageHandler(previous);
    QVERIFY(!QFileInfo::exists(runDir));
    QCOMPARE(rig.controlEvents(QStringLiteral("closed")).value(0).value(QStringLiteral("reason")).toString(),
             QStringLiteral("OPERATOR_CLOSE"));
    // Nothing private anywhere: not in diagnostics, state (evidence, ledger) or the run dir.
    QVERIFY(!g_log.join(QLatin1Char('\n')).toUtf8().contains(kSentinelPassword));
    QCOMPARE(filesContaining(rig.dir.path(), kSentinelPassword), QStringList());
    const auto v = EvidenceLog::verifyFile(evidenceFile(rig));
    QVERIFY2(v.ok, qPrintable(v.error));
    QCOMPARE(v.head, rig.controlEvents(QStringLiteral("closed"))
                         .value(0)
                         .value(QStringLiteral("evidence_head"))
                         .toString()
                         .toLatin1());
    // The channel report, from what the session saw: only drdynvc in the Connect Initial; this
    // guest opens no graphics pipeline (the legacy path) and asks for no other channel.
    const QJsonObject connectedChannels = evidenceEntries(rig, QStringLiteral("connected"))
                                              .value(0)
                                              .value(QStringLiteral("channels"))
                                              .toObject();
    QCOMPARE(connectedChannels.value(QStringLiteral("static_requested")).toArray(),
             QJsonArray{QStringLiteral("drdynvc")});
    const QJsonObject closedChannels =
        evidenceEntries(rig, QStringLiteral("closed")).value(0).value(QStringLiteral("channels")).toObject();
    QCOMPARE(closedChannels.value(QStringLiteral("gfx")).toBool(true), false);
    QCOMPARE(closedChannels.value(QStringLiteral("dynamic_refused_total")).toInt(-1), 0);
  }

  // The extension opens its panel as soon as "ready" arrives, usually before the operator has
  // logged in: the authorized panel waits (no welcome, no frame) and is served the moment
  // the guest connects (lifecycle Connecting → Serving, issue 28.2).
  void servesAPanelThatCameBeforeTheGuest() {
    ConsoleRig rig;
    QVERIFY(rig.prepare());
    QVERIFY(rig.openConsole().ok());
    QVERIFY(rig.waitControl(QStringLiteral("ready")));
    const QJsonObject p =
        rig.controlEvents(QStringLiteral("ready")).value(0).value(QStringLiteral("panel")).toObject();
    QSignalSpy opened(&rig.panel, &QWebSocket::connected);
    rig.panel.open(QUrl(QStringLiteral("ws://127.0.0.1:%1").arg(p.value(QStringLiteral("port")).toInt())));
    QVERIFY(opened.wait(5000));
    rig.panel.sendTextMessage(
        QStringLiteral("{\"type\":\"hello\",\"run\":\"%1\",\"task\":\"task-1\",\"capability\":\"%2\","
                       "\"client\":{\"kind\":\"test\",\"version\":\"1\"}}")
            .arg(rig.runId, p.value(QStringLiteral("capability")).toString()));
    QTRY_VERIFY_WITH_TIMEOUT(!evidenceEntries(rig, QStringLiteral("panel")).isEmpty(), 10000); // authorized
    QCOMPARE(rig.console->lifecycle(), Lifecycle::AwaitingCredentials);
    QVERIFY(rig.panelMessages(QStringLiteral("welcome")).isEmpty());
    QCOMPARE(rig.framesReceived, 0);
    QVERIFY(rig.connectGuest());
    QCOMPARE(rig.console->lifecycle(), Lifecycle::Serving);
    QTRY_COMPARE_WITH_TIMEOUT(rig.panelMessages(QStringLiteral("welcome")).size(), 1, 10000);
    const QJsonObject identity =
        rig.panelMessages(QStringLiteral("welcome")).value(0).value(QStringLiteral("identity")).toObject();
    QVERIFY(identity.contains(QStringLiteral("security"))); // the welcome of a connected session
    QTRY_VERIFY_WITH_TIMEOUT(rig.framesReceived > 0, 10000);
    rig.sendControl("{\"cmd\":\"close\"}");
    QTRY_VERIFY(rig.finished);
    QCOMPARE(rig.console->lifecycle(), Lifecycle::Closed);
  }

  // Against the test guest's GFX mode the console opens RDPGFX and nothing else; every other
  // channel the guest offers is refused and counted by name in the evidence.
  void evidenceCountsEveryRefusedChannel() {
    ConsoleRig rig(GrantSpec{600, {}, false, QString::fromLatin1(kSentinelPassword)});
    const QStringList offered{QStringLiteral("CLIPRDR"), QStringLiteral("AUDIO_INPUT")};
    QVERIFY(rig.startGuest({QStringLiteral("--graphics"), QStringLiteral("gfx"),
                            QStringLiteral("--offer-dvc"), offered.join(u',')}));
    QVERIFY(!rig.writeGrant().isEmpty());
    QVERIFY(rig.openConsole().ok());
    QVERIFY(rig.waitControl(QStringLiteral("ready")));
    QVERIFY(rig.connectGuest());
    QVERIFY(rig.connectPanel());
    QTRY_VERIFY_WITH_TIMEOUT(rig.framesReceived > 0, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(rig.guest.events(QStringLiteral("dvc_create")).size() >= offered.size() + 1,
                             15000);
    rig.sendControl("{\"cmd\":\"close\"}");
    QTRY_VERIFY(rig.finished);
    const QJsonObject channels =
        evidenceEntries(rig, QStringLiteral("closed")).value(0).value(QStringLiteral("channels")).toObject();
    QCOMPARE(channels.value(QStringLiteral("gfx")).toBool(), true);
    QCOMPARE(channels.value(QStringLiteral("static_joined")).toArray(),
             QJsonArray{QStringLiteral("drdynvc")});
    QCOMPARE(channels.value(QStringLiteral("code")).toString(), QStringLiteral("RDP_CHANNEL_REFUSED"));
    const QJsonObject refused = channels.value(QStringLiteral("dynamic_refused")).toObject();
    QCOMPARE(refused.size(), offered.size());
    for (const QString& name : offered)
      QCOMPARE(refused.value(name).toInt(), 1);
    QCOMPARE(channels.value(QStringLiteral("dynamic_refused_total")).toInt(), int(offered.size()));
  }

  // A panel that could not paint two frames acknowledges neither (the worst case: both
  // headers unreadable) and asks for a refresh each time: the console forgets its unacked
  // frames and sends the whole desktop again, so the stream never stalls.
  void refreshesTheWholeDesktopWhenThePanelCannotPaint() {
    ConsoleRig rig;
    QVERIFY2(rig.openSession(), qPrintable(rig.failure));
    QTRY_VERIFY_WITH_TIMEOUT(rig.framesReceived > 0, 10000);
    const QSize desktop(
        rig.panelMessages(QStringLiteral("welcome")).value(0).value(QStringLiteral("width")).toInt(),
        rig.panelMessages(QStringLiteral("welcome")).value(0).value(QStringLiteral("height")).toInt());
    const QRegion whole(QRect(QPoint(0, 0), desktop));
    rig.ackFrames = false;
    rig.guest.command("{\"cmd\":\"workload\",\"mode\":\"typing\"}");
    const int stalledFrom = rig.framesReceived;
    QTRY_VERIFY_WITH_TIMEOUT(rig.framesReceived > stalledFrom, 10000); // typing reaches the panel, unacked
    for (int round = 0; round < 2; ++round) {
      const int from = rig.framesReceived;
      rig.panel.sendTextMessage(QStringLiteral("{\"type\":\"frame_refresh\",\"frame\":0}"));
      QTRY_VERIFY_WITH_TIMEOUT(rig.frameRegions.mid(from).contains(whole), 10000);
    }
    rig.sendControl("{\"cmd\":\"close\"}");
    QTRY_VERIFY(rig.finished);
    // Both requests are in the evidence (as a count: a broken panel cannot flood the log).
    QFile log(evidenceFile(rig));
    QVERIFY(log.open(QIODevice::ReadOnly));
    QJsonObject frames;
    for (const QByteArray& line : log.readAll().split('\n')) {
      const QJsonObject entry = QJsonDocument::fromJson(line).object();
      if (entry.value(QStringLiteral("event")).toString() == QLatin1String("panel_frames"))
        frames = entry;
    }
    QCOMPARE(frames.value(QStringLiteral("refreshes")).toInt(), 2);
  }

  // Events accepted before the lock reach the guest, in order; those after are refused with
  // PHASE_LOCKED and never reach it.
  void drainsAcceptedEventsBeforeCapture() {
    ConsoleRig rig;
    QVERIFY2(rig.openSession(), qPrintable(rig.failure));
    const int before = guestInputs(rig.guest).size();
    quint64 seq = 0;
    for (int i = 0; i < 40; ++i)
      rig.panel.sendTextMessage(QStringLiteral("{\"type\":\"key\",\"seq\":%1,\"scancode\":%2,\"down\":%3}")
                                    .arg(++seq)
                                    .arg(0x10 + i / 2)
                                    .arg(i % 2 ? QStringLiteral("false") : QStringLiteral("true")));
    rig.panel.sendTextMessage(QStringLiteral("{\"type\":\"lock\"}"));
    for (int i = 0; i < 20; ++i)
      rig.panel.sendTextMessage(
          QStringLiteral("{\"type\":\"key\",\"seq\":%1,\"scancode\":57,\"down\":true}").arg(++seq));
    QVERIFY(rig.waitPhase(QStringLiteral("CAPTURING")));
    QTRY_COMPARE_WITH_TIMEOUT(rig.panelMessages(QStringLiteral("input_refused")).size(), 20, 5000);
    for (const auto& r : rig.panelMessages(QStringLiteral("input_refused")))
      QCOMPARE(r.value(QStringLiteral("code")).toString(), QStringLiteral("PHASE_LOCKED"));
    const QJsonObject drained = rig.panelMessages(QStringLiteral("drained")).value(0);
    QCOMPARE(drained.value(QStringLiteral("upto")).toInt(), 40);
    // Close: once the guest saw the client go, nothing more can arrive.
    rig.sendControl("{\"cmd\":\"close\"}");
    QTRY_VERIFY(rig.finished);
    QVERIFY(rig.guest.waitForEvent(QStringLiteral("client_disconnected")));
    const QList<QJsonObject> inputs = guestInputs(rig.guest).mid(before);
    QCOMPARE(inputs.size(), 40);
    for (int i = 0; i < 40; ++i) {
      QCOMPARE(inputs[i].value(QStringLiteral("code")).toInt(), 0x10 + i / 2);
      QCOMPARE(bool(inputs[i].value(QStringLiteral("flags")).toInt() & 0x8000), bool(i % 2)); // release flag
    }
  }

  // The setup leaves Ctrl, Shift and the left button down. Whoever locks (panel, control
  // channel, MCP host), the console releases them after the drain and before the commit, so
  // the model's click is exactly MOVE, DOWN, UP on a neutral guest, and the receipt's
  // events_sent is what the guest received.
  void heldInputIsReleasedBeforeTheAction_data() {
    QTest::addColumn<QString>("by");
    QTest::newRow("panel lock") << "panel";
    QTest::newRow("control channel lock") << "control";
    QTest::newRow("MCP request_lock") << "mcp";
  }
  void heldInputIsReleasedBeforeTheAction() {
    QFETCH(QString, by);
    ConsoleRig rig;
    QVERIFY2(rig.openSession(), qPrintable(rig.failure));
    const int before = guestInputs(rig.guest).size();
    rig.panel.sendTextMessage(QStringLiteral("{\"type\":\"key\",\"seq\":1,\"scancode\":29,\"down\":true}"));
    rig.panel.sendTextMessage(QStringLiteral("{\"type\":\"key\",\"seq\":2,\"scancode\":42,\"down\":true}"));
    rig.panel.sendTextMessage(
        QStringLiteral("{\"type\":\"pointer\",\"seq\":3,\"x\":100,\"y\":120,\"buttons\":1,\"wheel\":0}"));
    QTRY_COMPARE_WITH_TIMEOUT(rig.panelMessages(QStringLiteral("input_ack")).size(), 3, 10000);
    if (by == QLatin1String("panel"))
      rig.panel.sendTextMessage(QStringLiteral("{\"type\":\"lock\"}"));
    else if (by == QLatin1String("control"))
      rig.sendControl("{\"cmd\":\"lock\"}");
    else
      QVERIFY(rig.console->actionService()->requestLock().ok());
    QVERIFY(rig.waitPhase(QStringLiteral("CAPTURING")));
    QTRY_VERIFY(!rig.console->currentFrame().isNull());
    QVERIFY(rig.console->actionService()->captureDesktop().ok());
    const Outcome<Receipt> receipt = rig.console->actionService()->performAction(
        QJsonObject{{QStringLiteral("action"), QJsonObject{{QStringLiteral("type"), QStringLiteral("click")},
                                                           {QStringLiteral("x"), 300},
                                                           {QStringLiteral("y"), 300}}}});
    QVERIFY(receipt.ok());
    QTRY_VERIFY_WITH_TIMEOUT(rig.finished, 10000);
    QVERIFY(guestSawEveryClientGo(rig));

    QStringList atGuest;
    for (const QJsonObject& e : guestInputs(rig.guest).mid(before))
      atGuest << inputText(e);
    const QStringList setup{QStringLiteral("key 0x1d down"), QStringLiteral("key 0x2a down"),
                            QStringLiteral("pointer 0x800 (100,120)"),
                            QStringLiteral("pointer 0x9000 (100,120)")};
    const QStringList release{QStringLiteral("key 0x1d up"), QStringLiteral("key 0x2a up"),
                              QStringLiteral("pointer 0x1000 (100,120)")};
    const QStringList action{QStringLiteral("pointer 0x800 (300,300)"),
                             QStringLiteral("pointer 0x9000 (300,300)"),
                             QStringLiteral("pointer 0x1000 (300,300)")};
    QCOMPARE(atGuest, setup + release + action);
    // Counted from what was written, and equal to what the guest got after the release.
    QCOMPARE(receipt->eventsSent, int(atGuest.size() - setup.size() - release.size()));
    const QJsonObject released = evidenceEntries(rig, QStringLiteral("held_input_released")).value(0);
    QCOMPARE(released.value(QStringLiteral("keys_released")).toInt(), 2);
    QCOMPARE(released.value(QStringLiteral("buttons_released")).toInt(), 1);
  }

  // Expiry is decided by the wall clock at every gate, not by the timer: the clock is moved
  // past expires_at (the timer is minutes away) and the next request of each kind is refused
  // EXPIRED, the console closes EXPIRED, and nothing more reaches the guest.
  void expiryIsDecidedAtEveryGate_data() {
    QTest::addColumn<QString>("gate");
    QTest::newRow("panel input") << "input";
    QTest::newRow("control lock") << "lock";
    QTest::newRow("capture") << "capture";
    QTest::newRow("action") << "action";
    QTest::newRow("queued lock in its guest sync") << "sync";
  }
  void expiryIsDecidedAtEveryGate() {
    QFETCH(QString, gate);
    ConsoleRig rig;
    QVERIFY2(rig.openSession(), qPrintable(rig.failure));
    if (gate == QLatin1String("capture") || gate == QLatin1String("action")) {
      rig.sendControl("{\"cmd\":\"lock\"}");
      QVERIFY(rig.waitPhase(QStringLiteral("CAPTURING")));
      QTRY_VERIFY(!rig.console->currentFrame().isNull());
      if (gate == QLatin1String("action"))
        QVERIFY(rig.console->actionService()->captureDesktop().ok());
    }
    if (gate == QLatin1String("sync")) {
      // Unanswered and never settling: the sync runs to its deadline.
      rig.guest.command("{\"cmd\":\"workload\",\"mode\":\"typing\"}");
      rig.guest.command("{\"cmd\":\"refresh\",\"mode\":\"ignore\"}");
      QVERIFY(rig.guest.waitForEvent(QStringLiteral("refresh_mode")));
      rig.sendControl("{\"cmd\":\"lock\"}");
      QVERIFY(rig.waitPhase(QStringLiteral("READ_ONLY")));
      QVERIFY(rig.console->barrier()->syncing());
    }
    const int before = guestInputs(rig.guest).size();
    const QDateTime past = rig.console->grant().expiresAt.addSecs(1);
    rig.console->phases()->setWallClockForTest([past] { return past; });

    if (gate == QLatin1String("input")) {
      rig.panel.sendTextMessage(QStringLiteral("{\"type\":\"key\",\"seq\":1,\"scancode\":30,\"down\":true}"));
      QTRY_COMPARE_WITH_TIMEOUT(rig.panelMessages(QStringLiteral("input_refused")).size(), 1, 5000);
      QCOMPARE(rig.panelMessages(QStringLiteral("input_refused"))
                   .value(0)
                   .value(QStringLiteral("code"))
                   .toString(),
               QStringLiteral("EXPIRED"));
    } else if (gate == QLatin1String("lock")) {
      rig.sendControl("{\"cmd\":\"lock\"}");
    } else if (gate == QLatin1String("capture")) {
      QCOMPARE(rig.console->actionService()->captureDesktop().code(), Refusal::Expired);
    } else if (gate == QLatin1String("action")) {
      const Outcome<Receipt> r = rig.console->actionService()->performAction(QJsonObject{
          {QStringLiteral("action"), QJsonObject{{QStringLiteral("type"), QStringLiteral("click")},
                                                 {QStringLiteral("x"), 300},
                                                 {QStringLiteral("y"), 300}}}});
      QCOMPARE(r.code(), Refusal::Expired);
      QVERIFY(!rig.console->actionService()->hasActed());
    }
    QVERIFY(rig.waitPhase(QStringLiteral("CLOSED"), 10000));
    QTRY_VERIFY_WITH_TIMEOUT(rig.finished, 10000);
    QVERIFY(rig.waitControl(QStringLiteral("closed")));
    QCOMPARE(rig.controlEvents(QStringLiteral("closed")).value(0).value(QStringLiteral("reason")).toString(),
             QStringLiteral("EXPIRED"));
    const QString never = gate == QLatin1String("action")    ? QStringLiteral("ACTION")
                          : gate == QLatin1String("capture") ? QStringLiteral("REVIEWING")
                                                             : QStringLiteral("CAPTURING");
    QVERIFY(!reachedPhase(rig, never));
    QVERIFY(guestSawEveryClientGo(rig));
    QCOMPARE(guestInputs(rig.guest).size(), before);
    QVERIFY(evidenceEntries(rig, QStringLiteral("receipt")).isEmpty());
  }

  // The guest sync is state inside READ_ONLY, not a blocking wait: with a screen that never
  // settles, panel input in the sync is refused PHASE_LOCKED at once, a panic closes at once,
  // capture never starts and the sync is cancelled.
  void panicDuringTheGuestSyncIsPrompt() {
    ConsoleRig rig;
    QVERIFY2(rig.openSession(), qPrintable(rig.failure));
    rig.guest.command("{\"cmd\":\"workload\",\"mode\":\"typing\"}");
    // Unanswered, so the sync goes on: an answer would end it before the panic.
    rig.guest.command("{\"cmd\":\"refresh\",\"mode\":\"ignore\"}");
    QVERIFY(rig.guest.waitForEvent(QStringLiteral("refresh_mode")));
    rig.sendControl("{\"cmd\":\"lock\"}");
    QVERIFY(rig.waitPhase(QStringLiteral("READ_ONLY")));
    QVERIFY(rig.console->barrier()->syncing());

    QElapsedTimer t;
    t.start();
    rig.panel.sendTextMessage(QStringLiteral("{\"type\":\"key\",\"seq\":1,\"scancode\":30,\"down\":true}"));
    QTRY_COMPARE_WITH_TIMEOUT(rig.panelMessages(QStringLiteral("input_refused")).size(), 1, 5000);
    const qint64 refusedMs = t.elapsed();
    QCOMPARE(
        rig.panelMessages(QStringLiteral("input_refused")).value(0).value(QStringLiteral("code")).toString(),
        QStringLiteral("PHASE_LOCKED"));
    QVERIFY(rig.console->barrier()->syncing()); // still in the sync: the refusal did not wait for it

    qint64 closedMs = -1;
    QObject::connect(rig.console->phases(), &PhaseController::closed, [&] { closedMs = t.elapsed(); });
    const qint64 panicAt = t.elapsed();
    rig.sendControl("{\"cmd\":\"panic\"}");
    QTRY_VERIFY_WITH_TIMEOUT(closedMs >= 0, 5000);
    const qint64 panicMs = closedMs - panicAt;
    QTRY_VERIFY_WITH_TIMEOUT(rig.finished, 10000);
    QVERIFY(rig.waitControl(QStringLiteral("closed")));
    QCOMPARE(rig.controlEvents(QStringLiteral("closed")).value(0).value(QStringLiteral("reason")).toString(),
             QStringLiteral("PANIC"));
    QVERIFY(!reachedPhase(rig, QStringLiteral("CAPTURING")));
    QCOMPARE(evidenceEntries(rig, QStringLiteral("guest_sync"))
                 .value(0)
                 .value(QStringLiteral("result"))
                 .toString(),
             QStringLiteral("cancelled"));
    qInfo("FIGURE panel input in the guest sync refused PHASE_LOCKED in %lld ms; panic -> CLOSED in %lld ms",
          refusedMs, panicMs);
    QVERIFY(panicMs < 1000);
    QVERIFY(refusedMs < 1000);
  }

  // The evidence names what confirmed the guest sync: the whole corner answered
  // (refresh_rect), or the settle alone after the bounded wait (settle_only) for a guest that
  // never answers or only damages the corner — accepted only where the grant opts into it
  // (lock.confirmation "settle"; refusedWithoutTheGuestsConfirmation covers the default).
  void guestSyncEvidenceNamesWhatHappened_data() {
    QTest::addColumn<QString>("mode");
    QTest::addColumn<QString>("confirmedBy");
    QTest::addColumn<QString>("refresh");
    QTest::newRow("answering guest") << "answer"
                                     << "refresh_rect"
                                     << "answered";
    QTest::newRow("advertises, never answers") << "ignore"
                                               << "settle_only"
                                               << "unanswered";
    QTest::newRow("damage over the corner") << "corner_damage"
                                            << "settle_only"
                                            << "unanswered";
  }
  void guestSyncEvidenceNamesWhatHappened() {
    QFETCH(QString, mode);
    QFETCH(QString, confirmedBy);
    QFETCH(QString, refresh);
    GrantSpec spec;
    spec.lockConfirmation = QStringLiteral("settle");
    ConsoleRig rig(spec);
    QVERIFY2(rig.openSession(ConsoleRig::Reach::LoggedIn), qPrintable(rig.failure));
    QVERIFY(guestCaughtUp(rig));
    rig.guest.command(QStringLiteral("{\"cmd\":\"refresh\",\"mode\":\"%1\"}").arg(mode).toUtf8());
    QVERIFY(rig.guest.waitForEvent(QStringLiteral("refresh_mode")));
    rig.sendControl("{\"cmd\":\"lock\"}");
    QVERIFY(rig.waitPhase(QStringLiteral("CAPTURING"), 15000));
    QVERIFY(rig.guest.waitForEvent(QStringLiteral("refresh")));
    const QJsonObject sync = evidenceEntries(rig, QStringLiteral("guest_sync")).value(0);
    QCOMPARE(sync.value(QStringLiteral("result")).toString(), QStringLiteral("ok"));
    QCOMPARE(sync.value(QStringLiteral("confirmed_by")).toString(), confirmedBy);
    QCOMPARE(sync.value(QStringLiteral("refresh_rect")).toString(), refresh);
    if (confirmedBy == QLatin1String("settle_only"))
      QVERIFY(sync.value(QStringLiteral("settled")).toBool()); // without an answer only the settle confirms
    rig.sendControl("{\"cmd\":\"close\"}");
    QTRY_VERIFY(rig.finished);
    qInfo("FIGURE guest sync (%s): %s in %d ms", qPrintable(mode), qPrintable(confirmedBy),
          sync.value(QStringLiteral("ms")).toInt());
  }

  // With the default grant (the guest's confirmation required) the lock climbs the ladder to
  // the rung the guest answers, and the evidence, the status and the capture name that rung.
  void strictDefaultLocksByTheRungTheGuestAnswers_data() {
    QTest::addColumn<QStringList>("guestArgs");
    QTest::addColumn<QString>("refresh");
    QTest::addColumn<QString>("suppress");
    QTest::addColumn<QString>("by");
    QTest::addColumn<QJsonObject>("rungs");
    const QString R = QStringLiteral("refresh_rect"), S = QStringLiteral("suppress_output"),
                  G = QStringLiteral("gfx_caps");
    const QStringList gfx{QStringLiteral("--graphics"), QStringLiteral("gfx")};
    // No panel: the output is suppressed, so suppress_output is asked first (its "on" is the
    // un-suppress, after the drained input).
    QTest::newRow("refresh_rect") << QStringList{} << "answer"
                                  << "ignore" << R
                                  << QJsonObject{{R, "answered"}, {S, "unanswered"}, {G, "not_supported"}};
    QTest::newRow("suppress_output") << QStringList{} << "ignore"
                                     << "repaint" << S
                                     << QJsonObject{{R, "not_asked"}, {S, "answered"}, {G, "not_supported"}};
    QTest::newRow("gfx_caps") << gfx << "ignore"
                              << "ignore" << G
                              << QJsonObject{{R, "unanswered"}, {S, "unanswered"}, {G, "answered"}};
  }
  void strictDefaultLocksByTheRungTheGuestAnswers() {
    QFETCH(QStringList, guestArgs);
    QFETCH(QString, refresh);
    QFETCH(QString, suppress);
    QFETCH(QString, by);
    QFETCH(QJsonObject, rungs);
    ConsoleRig rig;
    QVERIFY2(rig.openSession(ConsoleRig::Reach::LoggedIn, guestArgs), qPrintable(rig.failure));
    QVERIFY(guestCaughtUp(rig));
    // Over RDPGFX the pipeline comes up after the paint above; the ladder waits for its first
    // frame (the whole surface) itself, but this test is about which rung answers, so it
    // starts with nothing of the guest's on its way.
    if (!guestArgs.isEmpty())
      QVERIFY(gfxCaughtUp(rig));
    rig.guest.command(QStringLiteral("{\"cmd\":\"refresh\",\"mode\":\"%1\"}").arg(refresh).toUtf8());
    rig.guest.command(QStringLiteral("{\"cmd\":\"suppress\",\"mode\":\"%1\"}").arg(suppress).toUtf8());
    QVERIFY(rig.guest.waitForEvent(QStringLiteral("suppress_mode")));
    rig.sendControl("{\"cmd\":\"lock\"}");
    QVERIFY(rig.waitPhase(QStringLiteral("CAPTURING"), 15000));
    const QJsonObject sync = evidenceEntries(rig, QStringLiteral("guest_sync")).value(0);
    QCOMPARE(sync.value(QStringLiteral("result")).toString(), QStringLiteral("ok"));
    QCOMPARE(sync.value(QStringLiteral("confirmed_by")).toString(), by);
    QCOMPARE(sync.value(QStringLiteral("rungs")).toObject(), rungs);
    const QJsonObject status = rig.console->actionService()->status();
    const QJsonObject confirmation = status.value(QStringLiteral("lock_confirmation")).toObject();
    QCOMPARE(confirmation.value(QStringLiteral("by")).toString(), by);
    QCOMPARE(confirmation.value(QStringLiteral("required")).toString(), QStringLiteral("guest"));
    QVERIFY(confirmation.value(QStringLiteral("asked")).toArray().contains(by));
    QTRY_VERIFY(!rig.console->currentFrame().isNull());
    QVERIFY(rig.console->actionService()->captureDesktop().ok());
    const QJsonObject capture = evidenceEntries(rig, QStringLiteral("capture")).value(0);
    QCOMPARE(
        capture.value(QStringLiteral("lock_confirmation")).toObject().value(QStringLiteral("by")).toString(),
        by);
    rig.sendControl("{\"cmd\":\"close\"}");
    QTRY_VERIFY(rig.finished);
    qInfo("FIGURE strict lock by %s: guest sync %d ms (answer %d ms)", qPrintable(by),
          sync.value(QStringLiteral("ms")).toInt(), sync.value(QStringLiteral("answer_ms")).toInt());
  }

  // Issue 24.4: a guest that does not answer the lock's Refresh Rect has not shown that it
  // read the drained input (a frozen guest is quiet too): with the default grant the lock
  // fails closed GUEST_UNCONFIRMED, capture never starts, and the evidence says why.
  void refusedWithoutTheGuestsConfirmation_data() {
    QTest::addColumn<QString>("mode");
    QTest::addColumn<QStringList>("guestArgs");
    QTest::newRow("advertises, never answers") << "ignore" << QStringList{};
    QTest::newRow("damage over the corner") << "corner_damage" << QStringList{};
    QTest::newRow("frozen on every rung, RDPGFX")
        << "ignore" << QStringList{QStringLiteral("--graphics"), QStringLiteral("gfx")};
  }
  void refusedWithoutTheGuestsConfirmation() {
    QFETCH(QString, mode);
    QFETCH(QStringList, guestArgs);
    ConsoleRig rig;
    QVERIFY2(rig.openSession(ConsoleRig::Reach::LoggedIn, guestArgs), qPrintable(rig.failure));
    QVERIFY(guestCaughtUp(rig));
    if (!guestArgs.isEmpty())
      QVERIFY(gfxCaughtUp(rig));
    rig.guest.command(QStringLiteral("{\"cmd\":\"refresh\",\"mode\":\"%1\"}").arg(mode).toUtf8());
    // The guest ignores Suppress Output by default; over RDPGFX it ignores the re-advertise
    // too: it answers no rung.
    rig.guest.command("{\"cmd\":\"gfx_readvertise\",\"mode\":\"ignore\"}");
    QVERIFY(rig.guest.waitForEvent(QStringLiteral("readvertise_mode")));
    rig.sendControl("{\"cmd\":\"lock\"}");
    QVERIFY2(rig.waitPhase(QStringLiteral("CLOSED"), 30000),
             QJsonDocument(evidenceEntries(rig, QStringLiteral("guest_sync")).value(0))
                 .toJson(QJsonDocument::Compact)
                 .constData());
    QVERIFY(rig.waitControl(QStringLiteral("closed"), 1, 30000));
    for (const QJsonObject& phase : rig.controlEvents(QStringLiteral("phase")))
      QVERIFY(phase.value(QStringLiteral("phase")).toString() != QStringLiteral("CAPTURING"));
    QCOMPARE(rig.controlEvents(QStringLiteral("closed")).value(0).value(QStringLiteral("reason")).toString(),
             QStringLiteral("GUEST_UNCONFIRMED"));
    const QJsonObject sync = evidenceEntries(rig, QStringLiteral("guest_sync")).value(0);
    QCOMPARE(sync.value(QStringLiteral("confirmed_by")).toString(), QStringLiteral("settle_only"));
    for (const QJsonValue rung : sync.value(QStringLiteral("rungs")).toObject())
      QVERIFY(rung.toString() == QLatin1String("unanswered") ||
              rung.toString() == QLatin1String("not_supported"));
    const QJsonObject why = evidenceEntries(rig, QStringLiteral("guest_unconfirmed")).value(0);
    QCOMPARE(why.value(QStringLiteral("required")).toString(), QStringLiteral("guest"));
    QVERIFY(!why.value(QStringLiteral("why")).toString().isEmpty());
  }

  void closeCauses_data() {
    QTest::addColumn<QString>("cause");
    QTest::addColumn<QString>("code");
    QTest::newRow("panic") << "panic"
                           << "PANIC";
    QTest::newRow("close") << "close"
                           << "OPERATOR_CLOSE";
    QTest::newRow("panel close") << "panel-close"
                                 << "OPERATOR_CLOSE";
    QTest::newRow("panel gone") << "panel-gone"
                                << "OPERATOR_CLOSE";
    QTest::newRow("stdin EOF") << "eof"
                               << "PARENT_GONE";
    QTest::newRow("VM destroyed") << "destroy"
                                  << "VM_GONE";
    QTest::newRow("VM paused") << "suspend"
                               << "VM_GONE";
    QTest::newRow("guest killed") << "kill-guest"
                                  << "RDP_LOST";
    // A destroyed domain drops the RDP connection before libvirt reports the stop: the console
    // closes on the drop at once and names the VM as the cause once libvirt has it.
    QTest::newRow("guest killed with its VM destroyed") << "kill-guest-destroy"
                                                        << "VM_GONE";
    QTest::newRow("expiry in SETUP") << "expire"
                                     << "EXPIRED";
  }
  void closeCauses() {
    QFETCH(QString, cause);
    QFETCH(QString, code);
    GrantSpec spec;
    spec.readWriteLibvirt = cause == QLatin1String("destroy") || cause == QLatin1String("suspend") ||
                            cause == QLatin1String("kill-guest-destroy");
    // Long enough to open, log in and connect a panel on a loaded machine (the reader process
    // starts first); the close then waits for the expiry itself.
    if (cause == QLatin1String("expire"))
      spec.lifetimeSeconds = 20;
    ConsoleRig rig(spec);
    QVERIFY2(rig.openSession(), qPrintable(rig.failure));
    const QString runDir = rig.console->runDirectory();
    QElapsedTimer t;
    t.start();
    if (cause == QLatin1String("panic"))
      rig.sendControl("{\"cmd\":\"panic\"}");
    else if (cause == QLatin1String("close"))
      rig.sendControl("{\"cmd\":\"close\"}");
    else if (cause == QLatin1String("panel-close"))
      rig.panel.sendTextMessage(QStringLiteral("{\"type\":\"close\"}"));
    else if (cause == QLatin1String("panel-gone"))
      rig.panel.abort();
    else if (cause == QLatin1String("eof"))
      rig.closeControlInput();
    else if (cause == QLatin1String("destroy"))
      QVERIFY(DomainControl(*rig.console->connectionForTest()).destroy(rig.uuid).ok());
    else if (cause == QLatin1String("suspend"))
      QVERIFY(DomainControl(*rig.console->connectionForTest()).suspend(rig.uuid).ok());
    else if (cause == QLatin1String("kill-guest"))
      rig.guest.process().kill();
    else if (cause == QLatin1String("kill-guest-destroy")) {
      rig.guest.process().kill();
      QVERIFY(rig.guest.process().waitForFinished(5000));
      QVERIFY(rig.waitPhase(QStringLiteral("CLOSED"), 3000)); // on the dropped connection
      QVERIFY(DomainControl(*rig.console->connectionForTest()).destroy(rig.uuid).ok());
    }
    QVERIFY(rig.waitPhase(QStringLiteral("CLOSED"), cause == QLatin1String("expire") ? 30000 : 3000));
    const qint64 ms = t.elapsed();
    QTRY_VERIFY(rig.finished);
    QVERIFY(rig.waitControl(QStringLiteral("closed")));
    QCOMPARE(rig.controlEvents(QStringLiteral("closed")).value(0).value(QStringLiteral("reason")).toString(),
             code);
    QVERIFY(!QFileInfo::exists(runDir));
    if (!rig.panelMessages(QStringLiteral("bye")).isEmpty())
      QCOMPARE(rig.panelMessages(QStringLiteral("bye")).value(0).value(QStringLiteral("reason")).toString(),
               code);
    const auto v = EvidenceLog::verifyFile(evidenceFile(rig));
    QVERIFY2(v.ok, qPrintable(v.error));
    qInfo("%s -> CLOSED(%s) in %lld ms", qPrintable(cause), qPrintable(code), ms);
  }

  // Panic closes from every phase the console rests in (LOCKING and ACTION are passed
  // through synchronously; the phase table test covers them).
  void panicFromEveryRestingPhase_data() {
    QTest::addColumn<QString>("phase");
    QTest::newRow("SETUP") << "SETUP";
    QTest::newRow("CAPTURING") << "CAPTURING";
    QTest::newRow("REVIEWING") << "REVIEWING";
  }
  void panicFromEveryRestingPhase() {
    QFETCH(QString, phase);
    ConsoleRig rig;
    QVERIFY2(rig.openSession(ConsoleRig::Reach::LoggedIn), qPrintable(rig.failure));
    if (phase != QLatin1String("SETUP")) {
      rig.sendControl("{\"cmd\":\"lock\"}");
      QVERIFY(rig.waitPhase(QStringLiteral("CAPTURING")));
    }
    if (phase == QLatin1String("REVIEWING")) {
      QTRY_VERIFY(!rig.console->currentFrame().isNull());
      QVERIFY(rig.console->actionService()->captureDesktop().ok());
      QVERIFY(rig.waitPhase(QStringLiteral("REVIEWING")));
    }
    const QString runDir = rig.console->runDirectory();
    rig.sendControl("{\"cmd\":\"panic\"}");
    QVERIFY(rig.waitPhase(QStringLiteral("CLOSED"), 3000));
    QTRY_VERIFY(rig.finished);
    QVERIFY(rig.waitControl(QStringLiteral("closed")));
    QCOMPARE(rig.controlEvents(QStringLiteral("closed")).value(0).value(QStringLiteral("reason")).toString(),
             QStringLiteral("PANIC"));
    QVERIFY(!QFileInfo::exists(runDir));
  }

  void refusesAtOpen_data() {
    QTest::addColumn<QString>("what");
    QTest::addColumn<QString>("code");
    QTest::newRow("wrong pin") << "pin"
                               << "GUEST_CERT_MISMATCH";
    QTest::newRow("replayed grant") << "replay"
                                    << "GRANT_REUSED";
    QTest::newRow("expired grant") << "expired"
                                   << "GRANT_EXPIRED";
    QTest::newRow("unsigned grant, key configured") << "unsigned"
                                                    << "GRANT_SIGNATURE";
    QTest::newRow("signed by another key") << "wrong-key"
                                           << "GRANT_SIGNATURE";
    QTest::newRow("no issuer key configured") << "no-key"
                                              << "GRANT_ISSUER_KEY_MISSING";
  }
  void refusesAtOpen() {
    QFETCH(QString, what);
    QFETCH(QString, code);
    GrantSpec spec;
    if (what == QLatin1String("pin"))
      spec.pin = QString(64, QLatin1Char('a'));
    if (what == QLatin1String("expired"))
      spec.lifetimeSeconds = -1;
    if (what == QLatin1String("unsigned"))
      spec.signGrant = false;
    ConsoleRig rig(spec);
    QVERIFY(rig.prepare());
    if (what == QLatin1String("wrong-key")) // the console trusts a key that did not sign the grant
      rig.issuerPublicPem = ConsoleRig().issuerPublicPem;
    if (what == QLatin1String("no-key"))
      rig.issuerPublicPem.clear();
    if (what == QLatin1String("replay")) {
      // Same grant, same state dir: the first open consumes it.
      QVERIFY(rig.openConsole().ok());
      rig.sendControl("{\"cmd\":\"close\"}");
      QTRY_VERIFY(rig.finished);
      rig.console.reset();
      rig.control.reset();
      rig.events.reset();
    }
    const Status opened = rig.openConsole();
    QVERIFY(!opened.ok());
    QCOMPARE(refusalName(opened.code()), code);
    QVERIFY(rig.waitControl(QStringLiteral("error")));
    QCOMPARE(rig.controlEvents(QStringLiteral("error")).last().value(QStringLiteral("code")).toString(),
             code);
    QVERIFY(rig.controlEvents(QStringLiteral("ready")).size() <= (what == QLatin1String("replay") ? 1 : 0));
    if (what == QLatin1String("pin")) // the probe saw a certificate and stopped: no credential exchange
      QCOMPARE(rig.guest.events(QStringLiteral("activated")).size(), 0);
    // The refusal left an evidence entry and no run directory.
    QDirIterator it(rig.dir.filePath(QStringLiteral("state/evidence")), {QStringLiteral("*.jsonl")});
    bool recorded = false;
    while (it.hasNext()) {
      QFile f(it.next());
      recorded = recorded || (f.open(QIODevice::ReadOnly) && f.readAll().contains(code.toLatin1()));
    }
    QVERIFY(recorded);
    QVERIFY(QDir(rig.dir.filePath(QStringLiteral("guest-console/runs"))).isEmpty());
  }

  // Every `check` leaves one evidence log of its own: a refusal's entry carries the code the
  // operator was shown, a bound check's entry what it bound; nothing is consumed.
  void checkLeavesAnEvidenceEntry_data() {
    QTest::addColumn<QString>("what");
    QTest::addColumn<QString>("code"); // empty: bound
    QTest::newRow("bound") << "bound"
                           << "";
    QTest::newRow("bound, pin probed") << "probe"
                                       << "";
    QTest::newRow("expired grant") << "expired"
                                   << "GRANT_EXPIRED";
    QTest::newRow("unsigned grant, key configured") << "unsigned"
                                                    << "GRANT_SIGNATURE";
    QTest::newRow("wrong pin, probed") << "pin"
                                       << "GUEST_CERT_MISMATCH";
  }
  void checkLeavesAnEvidenceEntry() {
    QFETCH(QString, what);
    QFETCH(QString, code);
    GrantSpec spec;
    if (what == QLatin1String("expired"))
      spec.lifetimeSeconds = -1;
    if (what == QLatin1String("unsigned"))
      spec.signGrant = false;
    if (what == QLatin1String("pin"))
      spec.pin = QString(64, QLatin1Char('a'));
    ConsoleRig rig(spec);
    QVERIFY(rig.prepare());
    const bool probe = what == QLatin1String("probe") || what == QLatin1String("pin");
    const CheckRun run =
        runCheckCommand(rig, probe ? QStringList{QStringLiteral("--probe-cert")} : QStringList{});
    QCOMPARE(run.status, code.isEmpty() ? 0 : 2);
    QCOMPARE(run.json.value(QStringLiteral("code")).toString(), code);
    QCOMPARE(run.newLogs.size(), 1);
    QVERIFY(QFileInfo(run.newLogs.first()).fileName().startsWith(QStringLiteral("check-")));
    const auto v = EvidenceLog::verifyFile(run.newLogs.first());
    QVERIFY2(v.ok, qPrintable(v.error));
    QCOMPARE(v.lines, quint64(1));
    QFile log(run.newLogs.first());
    QVERIFY(log.open(QIODevice::ReadOnly));
    const QJsonObject entry = QJsonDocument::fromJson(log.readLine()).object();
    QCOMPARE(entry.value(QStringLiteral("command")).toString(), QStringLiteral("check"));
    QFile grant(rig.grantPath);
    QVERIFY(grant.open(QIODevice::ReadOnly));
    const QString digest =
        QString::fromLatin1(QCryptographicHash::hash(grant.readAll(), QCryptographicHash::Sha256).toHex());
    if (code.isEmpty()) {
      QCOMPARE(entry.value(QStringLiteral("event")).toString(), QStringLiteral("checked"));
      QCOMPARE(entry.value(QStringLiteral("grant_digest")).toString(), digest);
      QCOMPARE(entry.value(QStringLiteral("run")).toString(), rig.runId);
      QCOMPARE(entry.value(QStringLiteral("vm")).toObject().value(QStringLiteral("uuid")).toString(),
               rig.uuid);
      QCOMPARE(entry.value(QStringLiteral("port")).toInt(), int(rig.guest.port()));
      QCOMPARE(entry.value(QStringLiteral("cert_verified")).toBool(), probe);
    } else {
      QCOMPARE(entry.value(QStringLiteral("event")).toString(), QStringLiteral("refused"));
      QCOMPARE(entry.value(QStringLiteral("code")).toString(), code);
      QCOMPARE(entry.value(QStringLiteral("message")).toString(),
               run.json.value(QStringLiteral("message")).toString());
      if (what == QLatin1String("pin")) // the grant was read: its digest names it
        QCOMPARE(entry.value(QStringLiteral("grant_digest")).toString(), digest);
    }
    // Check consumes nothing: the same grant still opens.
    if (code.isEmpty()) {
      const Status opened = rig.openConsole();
      QVERIFY2(opened.ok(), qPrintable(opened.ok() ? QString() : opened.failure().toString()));
      rig.sendControl("{\"cmd\":\"close\"}");
      QTRY_VERIFY(rig.finished);
    }
  }

  // --allow-unsigned-grants opens an unsigned grant and says so everywhere the pin's
  // absence is shown: ready, the panel's welcome, the evidence.
  void unsignedGrantsAllowedIsVisible() {
    GrantSpec spec;
    spec.signGrant = false;
    spec.allowUnsigned = true;
    ConsoleRig rig(spec);
    QVERIFY(rig.prepare());
    const Status opened = rig.openConsole();
    QVERIFY2(opened.ok(), qPrintable(opened.ok() ? QString() : opened.failure().toString()));
    QVERIFY(rig.waitControl(QStringLiteral("ready")));
    const QJsonObject identity =
        rig.controlEvents(QStringLiteral("ready")).value(0).value(QStringLiteral("identity")).toObject();
    QCOMPARE(identity.value(QStringLiteral("unsigned_grants_allowed")), QJsonValue(true));
    QCOMPARE(identity.value(QStringLiteral("signed")), QJsonValue(false));
    QVERIFY(rig.connectGuest());
    QVERIFY(rig.connectPanel());
    const QJsonObject welcome = rig.panelMessages(QStringLiteral("welcome")).value(0);
    QCOMPARE(
        welcome.value(QStringLiteral("identity")).toObject().value(QStringLiteral("unsigned_grants_allowed")),
        QJsonValue(true));
    rig.sendControl("{\"cmd\":\"close\"}");
    QTRY_VERIFY(rig.finished);
    QFile evidence(evidenceFile(rig));
    QVERIFY(evidence.open(QIODevice::ReadOnly));
    const QJsonObject first = QJsonDocument::fromJson(evidence.readLine()).object();
    QCOMPARE(first.value(QStringLiteral("event")).toString(), QStringLiteral("opened"));
    QCOMPARE(first.value(QStringLiteral("unsigned_grants_allowed")), QJsonValue(true));
    QCOMPARE(first.value(QStringLiteral("signed")), QJsonValue(false));
  }

  // A signed grant opened without the opt-out says signed, and not allowed-unsigned.
  void signedGrantIdentitySaysSigned() {
    ConsoleRig rig;
    QVERIFY2(rig.openSession(ConsoleRig::Reach::Opened), qPrintable(rig.failure));
    QVERIFY(rig.waitControl(QStringLiteral("ready")));
    const QJsonObject identity =
        rig.controlEvents(QStringLiteral("ready")).value(0).value(QStringLiteral("identity")).toObject();
    QCOMPARE(identity.value(QStringLiteral("signed")), QJsonValue(true));
    QCOMPARE(identity.value(QStringLiteral("unsigned_grants_allowed")), QJsonValue(false));
    rig.sendControl("{\"cmd\":\"close\"}");
    QTRY_VERIFY(rig.finished);
  }

  // While another console holds the run (its RunLock; two live consoles in one test
  // process cannot share libvirt's event loop, so the battery runs the two-process case),
  // open() is RUN_ALREADY_OPEN before libvirt or the guest is touched, and the grant is not
  // consumed: once the run is free the same grant opens.
  void refusesAConsoleForARunThatIsAlreadyOpen() {
    ConsoleRig rig;
    QVERIFY(rig.prepare());
    Outcome<RunLock> live = RunLock::acquire(rig.ledgerDir, rig.runId);
    QVERIFY(live.ok());
    const Status refused = rig.openConsole();
    QVERIFY(!refused.ok());
    QCOMPARE(refusalName(refused.code()), QStringLiteral("RUN_ALREADY_OPEN"));
    QVERIFY(rig.waitControl(QStringLiteral("error")));
    QCOMPARE(rig.guest.events(QStringLiteral("client_connected")).size(), 0);
    rig.console.reset();
    rig.control.reset();
    rig.events.reset();

    live.value().release();
    const Status opened = rig.openConsole();
    QVERIFY2(opened.ok(), qPrintable(opened.ok() ? QString() : opened.failure().toString()));
    QVERIFY(rig.waitControl(QStringLiteral("ready")));
    // Now the console holds the run itself.
    QCOMPARE(RunLock::acquire(rig.ledgerDir, rig.runId).code(), Refusal::RunAlreadyOpen);
    rig.sendControl("{\"cmd\":\"close\"}");
    QTRY_VERIFY(rig.finished);
  }

  void closesAfterTooManyWrongPasswords() {
    GrantSpec spec;
    spec.password = QStringLiteral("wrong");
    ConsoleRig rig(spec);
    QVERIFY2(rig.openSession(ConsoleRig::Reach::Opened), qPrintable(rig.failure));
    // What `--credentials tty` asks on: each attempt after the first, as it is asked for.
    QSignalSpy asked(rig.console.get(), &Console::credentialsRequired);
    for (int attempt = 1; attempt <= 3; ++attempt) {
      QVERIFY(rig.waitControl(QStringLiteral("credentials_required"), attempt, 20000));
      QCOMPARE(rig.console->lifecycle(), Lifecycle::AwaitingCredentials);
      rig.sendControl("{\"cmd\":\"credentials\",\"username\":\"op\",\"password\":\"wrong\"}");
    }
    QVERIFY(rig.waitPhase(QStringLiteral("CLOSED"), 30000));
    QCOMPARE(asked.size(), 2);
    QCOMPARE(asked.at(0).at(2).toInt(), 2);
    QCOMPARE(asked.at(1).at(2).toInt(), 3);
    QVERIFY(rig.waitControl(QStringLiteral("closed")));
    QCOMPARE(rig.controlEvents(QStringLiteral("closed")).value(0).value(QStringLiteral("reason")).toString(),
             QStringLiteral("AUTH_EXHAUSTED"));
  }
};

QTEST_GUILESS_MAIN(tst_Console)
#include "tst_console.moc"
