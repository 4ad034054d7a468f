// Orphan cleanup: RunSweeper removes a run directory only when its binding proves it is
// ours and its console is gone, never follows a link at any level, and leaves everything
// it cannot prove untouched (and reported).
#include "privacy/RunDirectory.h"
#include "privacy/RunSweeper.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>
#include <unistd.h>

using namespace gc;

namespace {

constexpr uid_t kNobody = 65534;
const QByteArray kPrecious = "precious bytes that must survive\n";
const QString kDigest = QString(64, QLatin1Char('a'));

// What a test row plants under the runs root (entry name "victim" unless stated).
enum class Plant {
  OrphanDeadPid,
  OrphanReusedPid,
  LiveConsole,
  SymlinkToPreciousFile,
  SymlinkToPreciousDir,
  SymlinkedRunsRoot,
  NoBinding,
  BindingNotJson,
  BindingDuplicateKey,
  BindingExtraField,
  BindingWrongType,
  BindingOtherApp,
  BindingIsSymlink,
  BindingNamesAnotherDir,
  ForeignOwnedFile,
  ForeignOwnedRunDir,
  NestedSymlinkInOrphan,
};

bool writeFile(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size();
}

QByteArray readFile(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool isPresent(const QString& path) {
  struct stat st {};
  return ::lstat(QFile::encodeName(path).constData(), &st) == 0;
}

QByteArray bindingJson(const QString& run, qint64 pid, quint64 startTime,
                       const QString& app = "guest-console") {
  const QJsonObject o{{"app", app},
                      {"run", run},
                      {"pid", pid},
                      {"start_time", QString::number(startTime)},
                      {"grant_digest", kDigest}};
  return QJsonDocument(o).toJson(QJsonDocument::Compact) + '\n';
}

// The pid of a process that has certainly exited (a child we reaped).
qint64 deadPid() {
  QProcess p;
  p.start("/bin/true", {});
  if (!p.waitForFinished(5000))
    return 0;
  return p.processId() > 0 ? p.processId() : qint64(0x3fffff);
}

qint64 ourPid() {
  return QCoreApplication::applicationPid();
}

quint64 ourStartTime() {
  return RunDirectory::processStartTime(ourPid());
}

} // namespace

class tst_Sweep : public QObject {
  Q_OBJECT

  QTemporaryDir m_scratch;
  QString m_runtime; // the runtime dir handed to the sweeper
  QString m_runs;    // <runtime>/guest-console/runs
  QString m_outside; // a directory outside the app's root with precious content

  bool makeRunDir(const QString& name, const QByteArray& binding) {
    const QString dir = m_runs + "/" + name;
    return QDir().mkpath(dir + "/freerdp") && ::chmod(QFile::encodeName(dir).constData(), 0700) == 0 &&
           (binding.isNull() || writeFile(dir + "/binding.json", binding));
  }
  bool link(const QString& target, const QString& at) {
    return ::symlink(QFile::encodeName(target).constData(), QFile::encodeName(at).constData()) == 0;
  }

private slots:
  void init() {
    QVERIFY(m_scratch.isValid());
    const QString base = m_scratch.path() + "/" + QString::fromLatin1(QTest::currentTestFunction()) + "-" +
                         QString::fromLatin1(QTest::currentDataTag());
    m_runtime = base + "/runtime";
    m_runs = m_runtime + "/guest-console/runs";
    m_outside = base + "/outside";
    QVERIFY(QDir().mkpath(m_runs));
    for (const QString& d : {m_runtime, m_runtime + "/guest-console", m_runs})
      QCOMPARE(::chmod(QFile::encodeName(d).constData(), 0700), 0);
    // Precious things outside the app's root; the "dir" and "runs/victim" ones even carry a
    // valid orphan binding so that only link-following could make them look sweepable.
    QVERIFY(QDir().mkpath(m_outside + "/dir/freerdp"));
    QVERIFY(QDir().mkpath(m_outside + "/runs/victim/freerdp"));
    QVERIFY(writeFile(m_outside + "/precious.txt", kPrecious));
    QVERIFY(writeFile(m_outside + "/dir/inner.txt", kPrecious));
    QVERIFY(writeFile(m_outside + "/dir/binding.json", bindingJson("victim", deadPid(), 1)));
    QVERIFY(writeFile(m_outside + "/runs/victim/binding.json", bindingJson("victim", deadPid(), 1)));
  }

  void sweepsOnlyProvenOrphans_data() {
    QTest::addColumn<Plant>("plant");
    QTest::addColumn<bool>("removed");
    QTest::addColumn<QString>("reason"); // a fragment of the kept reason
    QTest::addColumn<bool>("rootRefused");

    QTest::newRow("orphan-dead-pid") << Plant::OrphanDeadPid << true << QString() << false;
    QTest::newRow("orphan-reused-pid") << Plant::OrphanReusedPid << true << QString() << false;
    QTest::newRow("live-console") << Plant::LiveConsole << false << QString("live console") << false;
    QTest::newRow("symlink-to-precious-file")
        << Plant::SymlinkToPreciousFile << false << QString("symbolic link") << false;
    QTest::newRow("symlink-to-precious-dir")
        << Plant::SymlinkToPreciousDir << false << QString("symbolic link") << false;
    QTest::newRow("symlinked-runs-root")
        << Plant::SymlinkedRunsRoot << false << QString("symbolic link") << true;
    QTest::newRow("no-binding") << Plant::NoBinding << false << QString("no binding") << false;
    QTest::newRow("binding-not-json")
        << Plant::BindingNotJson << false << QString("not strict JSON") << false;
    QTest::newRow("binding-duplicate-key")
        << Plant::BindingDuplicateKey << false << QString("not strict JSON") << false;
    QTest::newRow("binding-extra-field")
        << Plant::BindingExtraField << false << QString("field set") << false;
    QTest::newRow("binding-wrong-type") << Plant::BindingWrongType << false << QString("types") << false;
    QTest::newRow("binding-other-app")
        << Plant::BindingOtherApp << false << QString("not guest-console") << false;
    QTest::newRow("binding-is-symlink")
        << Plant::BindingIsSymlink << false << QString("invalid binding") << false;
    QTest::newRow("binding-names-another-dir")
        << Plant::BindingNamesAnotherDir << false << QString("names another run") << false;
    QTest::newRow("foreign-owned-file")
        << Plant::ForeignOwnedFile << false << QString("not owned by us") << false;
    QTest::newRow("foreign-owned-run-dir")
        << Plant::ForeignOwnedRunDir << false << QString("not owned by us") << false;
    QTest::newRow("nested-symlink-in-orphan") << Plant::NestedSymlinkInOrphan << true << QString() << false;
  }

  void sweepsOnlyProvenOrphans() {
    QFETCH(Plant, plant);
    QFETCH(bool, removed);
    QFETCH(QString, reason);
    QFETCH(bool, rootRefused);
    const QString victim = m_runs + "/victim";

    switch (plant) {
    case Plant::OrphanDeadPid:
      QVERIFY(makeRunDir("victim", bindingJson("victim", deadPid(), 12345)));
      break;
    case Plant::OrphanReusedPid: // our own, live pid, but another process's start time
      QVERIFY(makeRunDir("victim", bindingJson("victim", ourPid(), ourStartTime() + 1)));
      break;
    case Plant::LiveConsole:
      QVERIFY(makeRunDir("victim", bindingJson("victim", ourPid(), ourStartTime())));
      break;
    case Plant::SymlinkToPreciousFile:
      QVERIFY(link(m_outside + "/precious.txt", victim));
      break;
    case Plant::SymlinkToPreciousDir:
      QVERIFY(link(m_outside + "/dir", victim));
      break;
    case Plant::SymlinkedRunsRoot:
      QVERIFY(QDir(m_runs).removeRecursively());
      QVERIFY(link(m_outside + "/runs", m_runs));
      break;
    case Plant::NoBinding:
      QVERIFY(makeRunDir("victim", QByteArray()));
      break;
    case Plant::BindingNotJson:
      QVERIFY(makeRunDir("victim", "{\"app\":\"guest-console\",\"run\":"));
      break;
    case Plant::BindingDuplicateKey:
      QVERIFY(
          makeRunDir("victim", "{\"app\":\"guest-console\",\"run\":\"victim\",\"run\":\"victim\",\"pid\":" +
                                   QByteArray::number(deadPid()) +
                                   ",\"start_time\":\"1\",\"grant_digest\":\"" + kDigest.toLatin1() + "\"}"));
      break;
    case Plant::BindingExtraField: {
      QJsonObject o = QJsonDocument::fromJson(bindingJson("victim", deadPid(), 1)).object();
      o.insert("path", "/etc");
      QVERIFY(makeRunDir("victim", QJsonDocument(o).toJson()));
      break;
    }
    case Plant::BindingWrongType: {
      QJsonObject o = QJsonDocument::fromJson(bindingJson("victim", deadPid(), 1)).object();
      o.insert("pid", QString::number(deadPid()));
      QVERIFY(makeRunDir("victim", QJsonDocument(o).toJson()));
      break;
    }
    case Plant::BindingOtherApp:
      QVERIFY(makeRunDir("victim", bindingJson("victim", deadPid(), 1, "other-app")));
      break;
    case Plant::BindingIsSymlink:
      QVERIFY(makeRunDir("victim", QByteArray()));
      QVERIFY(link(m_outside + "/runs/victim/binding.json", victim + "/binding.json"));
      break;
    case Plant::BindingNamesAnotherDir:
      QVERIFY(makeRunDir("victim", bindingJson("../../outside/dir", deadPid(), 1)));
      break;
    case Plant::ForeignOwnedFile:
    case Plant::ForeignOwnedRunDir:
      if (::geteuid() != 0)
        QSKIP("chown to nobody needs root");
      QVERIFY(makeRunDir("victim", bindingJson("victim", deadPid(), 1)));
      QVERIFY(writeFile(victim + "/freerdp/theirs", kPrecious));
      QCOMPARE(
          ::chown(QFile::encodeName(plant == Plant::ForeignOwnedFile ? victim + "/freerdp/theirs" : victim)
                      .constData(),
                  kNobody, kNobody),
          0);
      break;
    case Plant::NestedSymlinkInOrphan:
      QVERIFY(makeRunDir("victim", bindingJson("victim", deadPid(), 1)));
      QVERIFY(link(m_outside + "/precious.txt", victim + "/freerdp/file-link"));
      QVERIFY(link(m_outside + "/dir", victim + "/freerdp/dir-link"));
      QVERIFY(link(m_outside, victim + "/outside-link"));
      break;
    }

    const RunSweeper::Report report = RunSweeper::sweep(m_runtime);

    QCOMPARE(report.refused.has_value(), rootRefused);
    if (removed) {
      QCOMPARE(report.removed, QStringList{"victim"});
      QVERIFY(report.kept.isEmpty());
      QVERIFY(!isPresent(victim));
    } else {
      QVERIFY(report.removed.isEmpty());
      QCOMPARE(report.kept.size(), 1);
      QCOMPARE(report.kept.first().run, rootRefused ? QString("guest-console/runs") : QString("victim"));
      QVERIFY2(report.kept.first().reason.contains(reason), qPrintable(report.kept.first().reason));
      QVERIFY(isPresent(victim)); // kept as it was (for a link: the link itself)
    }
    // Whatever happened, nothing outside the app's root changed.
    QCOMPARE(readFile(m_outside + "/precious.txt"), kPrecious);
    QCOMPARE(readFile(m_outside + "/dir/inner.txt"), kPrecious);
    QVERIFY(isPresent(m_outside + "/dir/binding.json"));
    QVERIFY(isPresent(m_outside + "/dir/freerdp"));
    QVERIFY(isPresent(m_outside + "/runs/victim/binding.json"));
    QVERIFY(isPresent(m_outside + "/runs/victim/freerdp"));
  }

  void sweepsManyEntriesIndependently() {
    QVERIFY(makeRunDir("orphan-a", bindingJson("orphan-a", deadPid(), 7)));
    QVERIFY(makeRunDir("orphan-b", bindingJson("orphan-b", ourPid(), ourStartTime() + 9)));
    QVERIFY(makeRunDir("live", bindingJson("live", ourPid(), ourStartTime())));
    QVERIFY(link(m_outside + "/precious.txt", m_runs + "/decoy-link"));
    QVERIFY(writeFile(m_runs + "/stray-file", kPrecious));

    const RunSweeper::Report report = RunSweeper::sweep(m_runtime);

    QCOMPARE(report.removed, (QStringList{"orphan-a", "orphan-b"}));
    QStringList kept;
    for (const auto& k : report.kept)
      kept << k.run;
    QCOMPARE(kept, (QStringList{"decoy-link", "live", "stray-file"}));
    const QJsonObject json = report.toJson();
    QCOMPARE(json.value("removed").toArray().size(), 2);
    QCOMPARE(json.value("kept").toArray().size(), 3);
    QCOMPARE(json.value("kept").toArray().at(1).toObject().value("run").toString(), QString("live"));
    QVERIFY(!json.contains("error"));
    QCOMPARE(readFile(m_runs + "/stray-file"), kPrecious);
  }

  void removesWhatRunDirectoryCreatesOnceItsProcessIsGone() {
    // A real run dir of ours is live; rewritten with a dead pid, it is an orphan.
    {
      RunDirectory dir;
      QVERIFY(dir.create(m_runtime, "real-run", kDigest).ok());
      RunSweeper::Report live = RunSweeper::sweep(m_runtime);
      QVERIFY(live.removed.isEmpty());
      QCOMPARE(live.kept.size(), 1);
      QVERIFY(live.kept.first().reason.contains("live console"));
      QFile::remove(dir.path() + "/binding.json");
      QVERIFY(writeFile(dir.path() + "/binding.json", bindingJson("real-run", deadPid(), 3)));
      QCOMPARE(RunSweeper::sweep(m_runtime).removed, QStringList{"real-run"});
      QVERIFY(!dir.exists());
    }
  }

  void treatsAMissingRootAsNothingToDo() {
    QVERIFY(QDir(m_runtime + "/guest-console").removeRecursively());
    const RunSweeper::Report report = RunSweeper::sweep(m_runtime);
    QVERIFY(!report.refused);
    QVERIFY(report.removed.isEmpty() && report.kept.isEmpty());
  }

  void refusesARelativeRuntimeDir() { QVERIFY(RunSweeper::sweep("relative/dir").refused.has_value()); }
};

QTEST_GUILESS_MAIN(tst_Sweep)
#include "tst_sweep.moc"
