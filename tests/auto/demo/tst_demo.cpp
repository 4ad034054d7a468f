// tst_demo: `guest-console-demo` end to end, black box. The demo runs once (initTestCase)
// against the real console, test guest, panel socket and MCP relay; each test checks one
// promise of its JSON report, and the PIDs it lists are checked from here as well.
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cerrno>
#include <csignal>

class tst_Demo : public QObject {
  Q_OBJECT

private slots:
  void initTestCase();
  void exitsZeroWithEveryCheckPassed();
  void phasesRunInOrder();
  void guestReceivedExactlyTheSetupAndTheOneAction();
  void setupWasAcknowledgedDrainedAndLockedOut();
  void captureShowsTheIdentityMarker();
  void receiptIsBoundToTheRun();
  void cleanupLeavesNothing_data();
  void cleanupLeavesNothing();
  void everyListedProcessIsGone();

private:
  QJsonObject section(const char* name) const { return m_report.value(QLatin1String(name)).toObject(); }

  QTemporaryDir m_dir;
  int m_exitCode = -1;
  QByteArray m_stdout;
  QJsonObject m_report;
};

void tst_Demo::initTestCase() {
  QVERIFY(m_dir.isValid());
  const QString reportPath = m_dir.filePath(QStringLiteral("report.json"));
  QProcess demo;
  demo.setProcessChannelMode(QProcess::SeparateChannels);
  demo.start(QStringLiteral(GC_BIN_DIR "/guest-console-demo"), {QStringLiteral("--json-report"), reportPath});
  QVERIFY2(demo.waitForStarted(10000), qPrintable(demo.errorString()));
  QVERIFY(demo.waitForFinished(280000));
  m_stdout = demo.readAllStandardOutput();
  m_exitCode = demo.exitStatus() == QProcess::NormalExit ? demo.exitCode() : -1;
  QFile file(reportPath);
  QVERIFY2(file.open(QIODevice::ReadOnly), m_stdout.constData());
  m_report = QJsonDocument::fromJson(file.readAll()).object();
  QVERIFY(!m_report.isEmpty());
  qInfo().noquote() << QString::fromUtf8(m_stdout);
}

void tst_Demo::exitsZeroWithEveryCheckPassed() {
  QCOMPARE(m_exitCode, 0);
  QVERIFY(m_report.value(QStringLiteral("ok")).toBool());
  QCOMPARE(m_report.value(QStringLiteral("mode")).toString(), QStringLiteral("scripted"));
  const QJsonArray checks = m_report.value(QStringLiteral("checks")).toArray();
  QVERIFY(checks.size() >= 10);
  for (const QJsonValue& c : checks)
    QVERIFY2(c.toObject().value(QStringLiteral("ok")).toBool(),
             qPrintable(c.toObject().value(QStringLiteral("name")).toString()));
}

void tst_Demo::phasesRunInOrder() {
  QStringList phases;
  qint64 lastMs = -1;
  for (const QJsonValue& v : m_report.value(QStringLiteral("phases")).toArray()) {
    phases.append(v.toObject().value(QStringLiteral("phase")).toString());
    const qint64 ms = v.toObject().value(QStringLiteral("ms")).toInteger();
    QVERIFY(ms >= lastMs);
    lastMs = ms;
  }
  QCOMPARE(phases,
           (QStringList{"SETUP", "LOCKING", "READ_ONLY", "CAPTURING", "REVIEWING", "ACTION", "CLOSED"}));
}

void tst_Demo::guestReceivedExactlyTheSetupAndTheOneAction() {
  const QJsonObject input = section("input");
  const QJsonArray setup = input.value(QStringLiteral("guest_setup")).toArray();
  const QJsonArray expectedSetup = input.value(QStringLiteral("expected_setup")).toArray();
  const QJsonArray action = input.value(QStringLiteral("guest_action")).toArray();
  const QJsonArray expectedAction = input.value(QStringLiteral("expected_action")).toArray();
  QVERIFY(!expectedSetup.isEmpty());
  QCOMPARE(setup, expectedSetup);
  QCOMPARE(expectedAction.size(), 3); // a click: move, left down, left up
  QCOMPARE(action, expectedAction);
  QCOMPARE(input.value(QStringLiteral("guest_received")).toInt(),
           expectedSetup.size() + expectedAction.size());
  QCOMPARE(section("receipt").value(QStringLiteral("events_sent")).toInt(), expectedAction.size());
}

void tst_Demo::setupWasAcknowledgedDrainedAndLockedOut() {
  const QJsonObject input = section("input");
  const qint64 setupEvents = input.value(QStringLiteral("expected_setup")).toArray().size();
  QVERIFY(setupEvents > 0);
  // One more was sent after the lock, to show the gate: refused, never delivered.
  QCOMPARE(input.value(QStringLiteral("sent")).toInteger(), setupEvents + 1);
  QCOMPARE(input.value(QStringLiteral("acknowledged")).toInteger(), setupEvents);
  QCOMPARE(input.value(QStringLiteral("drained_upto")).toInteger(), setupEvents);
  QCOMPARE(input.value(QStringLiteral("refused")).toInteger(), 1);
  QVERIFY(input.value(QStringLiteral("refused_by_code")).toObject().contains(QStringLiteral("PHASE_LOCKED")));
}

void tst_Demo::captureShowsTheIdentityMarker() {
  const QJsonObject capture = section("capture");
  QVERIFY(capture.value(QStringLiteral("marker_found")).toBool());
  QCOMPARE(capture.value(QStringLiteral("marker")).toString(),
           capture.value(QStringLiteral("marker_expected")).toString());
  QVERIFY(capture.value(QStringLiteral("sha256_matches")).toBool());
  QVERIFY(capture.value(QStringLiteral("width")).toInt() > 0);
}

void tst_Demo::receiptIsBoundToTheRun() {
  const QJsonObject receipt = section("receipt");
  const QJsonObject binding = section("binding");
  QCOMPARE(receipt.value(QStringLiteral("outcome")).toString(), QStringLiteral("executed"));
  QCOMPARE(receipt.value(QStringLiteral("run")).toString(), binding.value(QStringLiteral("run")).toString());
  QCOMPARE(receipt.value(QStringLiteral("vm_uuid")).toString(),
           binding.value(QStringLiteral("vm_uuid")).toString());
  QCOMPARE(receipt.value(QStringLiteral("grant_digest")).toString(),
           binding.value(QStringLiteral("grant_digest")).toString());
}

void tst_Demo::cleanupLeavesNothing_data() {
  QTest::addColumn<QString>("field");
  QTest::newRow("run dir gone") << QStringLiteral("run_dir_gone");
  QTest::newRow("evidence verified") << QStringLiteral("evidence_verified");
  QTest::newRow("evidence head is the console's") << QStringLiteral("evidence_head_matches");
  QTest::newRow("temp dir removed") << QStringLiteral("temp_removed");
}

void tst_Demo::cleanupLeavesNothing() {
  QFETCH(QString, field);
  const QJsonObject cleanup = section("cleanup");
  QVERIFY2(cleanup.value(field).toBool(), qPrintable(field));
  QCOMPARE(cleanup.value(QStringLiteral("children_left")).toInt(-1), 0);
  QVERIFY(!QFileInfo::exists(cleanup.value(QStringLiteral("temp_dir")).toString()));
}

void tst_Demo::everyListedProcessIsGone() {
  const QJsonObject pids = section("pids");
  for (const char* label : {"guest", "console", "mcp", "evidence"})
    QVERIFY2(pids.contains(QLatin1String(label)), label);
  for (auto it = pids.begin(); it != pids.end(); ++it) {
    const qint64 pid = it.value().toInteger();
    QVERIFY(pid > 0);
    errno = 0;
    QVERIFY2(::kill(pid_t(pid), 0) != 0 && errno == ESRCH, qPrintable(it.key()));
  }
}

QTEST_GUILESS_MAIN(tst_Demo)
#include "tst_demo.moc"
