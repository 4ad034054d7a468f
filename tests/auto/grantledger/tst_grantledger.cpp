// The single-use rule: a consumed grant_id is refused forever, across instances and
// processes, and the ledger file itself cannot be redirected or loosened.
#include "grant/GrantLedger.h"
#include "grant/RunLock.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <QUuid>

#include <csignal>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace gc;

namespace {

Grant grantWithId(const QString& id) {
  Grant g;
  g.grantId = id;
  g.digestHex = QCryptographicHash::hash(id.toLatin1(), QCryptographicHash::Sha256).toHex();
  return g;
}

Grant freshGrant() {
  return grantWithId(QUuid::createUuid().toString(QUuid::WithoutBraces));
}

mode_t modeOf(const QString& path) {
  struct stat st {};
  if (::lstat(QFile::encodeName(path).constData(), &st) != 0)
    return 0;
  return st.st_mode & 07777;
}

off_t sizeOf(const QString& path) {
  struct stat st {};
  if (::lstat(QFile::encodeName(path).constData(), &st) != 0)
    return -1;
  return st.st_size;
}

// Runs `body` in a forked child (its own uid, mount namespace or deadline can differ) and
// returns its exit code; -signal when it was killed (e.g. SIGALRM: it blocked). The child
// never returns into the test.
template <typename Body> int inChild(Body body) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0)
    ::_exit(body());
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status))
    return -WTERMSIG(status);
  return WEXITSTATUS(status);
}

// Drops to uid/gid 65534 (nobody) for good, in a child.
bool becomeNobody() {
  return ::setgroups(0, nullptr) == 0 && ::setresgid(65534, 65534, 65534) == 0 &&
         ::setresuid(65534, 65534, 65534) == 0;
}

} // namespace

class tst_GrantLedger : public QObject {
  Q_OBJECT
private slots:
  void consumesAGrantOnce() {
    QTemporaryDir dir;
    GrantLedger ledger(dir.filePath("state"));
    const Grant g = freshGrant();
    QVERIFY(ledger.consume(g).ok());
    const Status replay = ledger.consume(g);
    QVERIFY(!replay.ok());
    QCOMPARE(replay.code(), Refusal::GrantReused);
  }

  void refusesReplayAcrossInstances() {
    QTemporaryDir dir;
    const Grant g = freshGrant();
    QVERIFY(GrantLedger(dir.path()).consume(g).ok());
    QCOMPARE(GrantLedger(dir.path()).consume(g).code(), Refusal::GrantReused);
    // Other grants are unaffected.
    QVERIFY(GrantLedger(dir.path()).consume(freshGrant()).ok());
  }

  void recordsOnlyIdsDigestsAndTimes() {
    QTemporaryDir dir;
    GrantLedger ledger(dir.path());
    const Grant a = freshGrant();
    const Grant b = freshGrant();
    QVERIFY(ledger.consume(a).ok());
    QVERIFY(ledger.consume(b).ok());
    QFile f(ledger.ledgerPath());
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = f.readAll().split('\n');
    QCOMPARE(lines.size(), 3); // two records and the empty tail
    QVERIFY(lines[2].isEmpty());
    const QList<QByteArray> fields = lines[0].split(' ');
    QCOMPARE(fields.size(), 4); // id, digest, time, check
    QCOMPARE(lines[0] + '\n', GrantLedger::recordLine(fields[0], fields[1], fields[2]));
    QCOMPARE(QString::fromLatin1(fields[0]), a.grantId);
    QCOMPARE(fields[1], a.digestHex);
    QVERIFY(QDateTime::fromString(QString::fromLatin1(fields[2]), Qt::ISODateWithMs).isValid());
    QVERIFY(fields[2].endsWith('Z'));
    QVERIFY(lines[1].startsWith(b.grantId.toLatin1() + ' '));
  }

  void isConsumedDoesNotConsume() {
    QTemporaryDir dir;
    GrantLedger ledger(dir.filePath("state"));
    const Grant g = freshGrant();
    QCOMPARE(ledger.isConsumed(g.grantId), false);
    QCOMPARE(ledger.isConsumed(g.grantId), false);
    QVERIFY(!QFile::exists(ledger.ledgerPath())); // a check creates nothing
    QVERIFY(ledger.consume(g).ok());
    QCOMPARE(ledger.isConsumed(g.grantId), true);
    QCOMPARE(ledger.isConsumed(g.grantId.toUpper()), true);
    QCOMPARE(ledger.isConsumed(freshGrant().grantId), false);
  }

  void matchesWholeIdsOnly() {
    QTemporaryDir dir;
    GrantLedger ledger(dir.path());
    const Grant g = grantWithId("00000000-0000-4000-8000-000000000001");
    QVERIFY(ledger.consume(g).ok());
    QCOMPARE(ledger.isConsumed("00000000-0000-4000-8000-000000000010"), false);
    QVERIFY(ledger.consume(grantWithId("00000000-0000-4000-8000-000000000010")).ok());
  }

  void survivesAPartialLastLine() {
    QTemporaryDir dir;
    GrantLedger ledger(dir.path());
    const Grant first = freshGrant();
    QVERIFY(ledger.consume(first).ok());
    {
      QFile f(ledger.ledgerPath());
      QVERIFY(f.open(QIODevice::Append));
      f.write("deadbeef-dead"); // a crash mid-append
    }
    const Grant next = freshGrant();
    QVERIFY(ledger.consume(next).ok());
    QVERIFY(ledger.isConsumed(first.grantId));
    QVERIFY(ledger.isConsumed(next.grantId));
    QCOMPARE(ledger.consume(next).code(), Refusal::GrantReused);
  }

  void createsDirectory0700AndFile0600() {
    QTemporaryDir dir;
    const QString state = dir.filePath("a/b/state");
    const mode_t old = ::umask(0);
    GrantLedger ledger(state);
    const Status s = ledger.consume(freshGrant());
    ::umask(old);
    QVERIFY(s.ok());
    QCOMPARE(modeOf(state), mode_t(0700));
    QCOMPARE(modeOf(ledger.ledgerPath()), mode_t(0600));
  }

  void refusesUnsafeLedgers_data() {
    QTest::addColumn<QString>("kind");
    QTest::newRow("symlink to a file") << "symlink";
    QTest::newRow("dangling symlink") << "dangling";
    QTest::newRow("directory") << "directory";
    QTest::newRow("group writable") << "group-writable";
    QTest::newRow("world writable") << "world-writable";
  }
  void refusesUnsafeLedgers() {
    QFETCH(QString, kind);
    QTemporaryDir dir;
    GrantLedger ledger(dir.filePath("state"));
    QVERIFY(QDir().mkpath(ledger.dir()));
    const QByteArray path = QFile::encodeName(ledger.ledgerPath());
    const QString target = dir.filePath("elsewhere");
    if (kind == u"symlink") {
      QFile t(target);
      QVERIFY(t.open(QIODevice::WriteOnly));
      t.close();
      QCOMPARE(::symlink(QFile::encodeName(target).constData(), path.constData()), 0);
    } else if (kind == u"dangling") {
      QCOMPARE(::symlink(QFile::encodeName(target).constData(), path.constData()), 0);
    } else if (kind == u"directory") {
      QCOMPARE(::mkdir(path.constData(), 0700), 0);
    } else {
      QFile f(ledger.ledgerPath());
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.close();
      QCOMPARE(::chmod(path.constData(), kind == u"group-writable" ? 0620 : 0602), 0);
    }
    const Grant g = freshGrant();
    const Status s = ledger.consume(g);
    QVERIFY(!s.ok());
    QCOMPARE(s.code(), Refusal::GrantLedger);
    QVERIFY(!ledger.lookup(g.grantId).ok());
    QCOMPARE(ledger.isConsumed(g.grantId), true); // fail closed
    if (kind == u"symlink" || kind == u"dangling") {
      QVERIFY2(s.failure().message.contains("symlink"), qPrintable(s.failure().message));
      QVERIFY(!QFile(target).exists() || QFile(target).size() == 0); // nothing written through it
    }
  }

  void refusesNonCanonicalIdsAndDigests_data() {
    QTest::addColumn<QString>("id");
    QTest::addColumn<QByteArray>("digest");
    const QByteArray digest(64, 'a');
    QTest::newRow("uppercase id") << "3F2B8C1E-7D4A-4E9B-A1C2-5D6E7F809A1B" << digest;
    QTest::newRow("id with newline") << "3f2b8c1e-7d4a-4e9b-a1c2-5d6e7f809a1b\nx" << digest;
    QTest::newRow("empty id") << "" << digest;
    QTest::newRow("digest with space") << "3f2b8c1e-7d4a-4e9b-a1c2-5d6e7f809a1b" << QByteArray(63, 'a') + ' ';
    QTest::newRow("empty digest") << "3f2b8c1e-7d4a-4e9b-a1c2-5d6e7f809a1b" << QByteArray();
  }
  void refusesNonCanonicalIdsAndDigests() {
    QFETCH(QString, id);
    QFETCH(QByteArray, digest);
    QTemporaryDir dir;
    Grant g;
    g.grantId = id;
    g.digestHex = digest;
    QCOMPARE(GrantLedger(dir.path()).consume(g).code(), Refusal::GrantLedger);
  }

  // Two processes released at the same moment race through the same fresh grants in the
  // same order; the flock'd read-check-append makes exactly one of them win each grant.
  // A batch per round keeps the two in contention long enough for a missing lock to show.
  // The product's ledger is the real user's, whatever HOME or XDG_STATE_HOME say.
  void perUserDirIgnoresTheEnvironment() {
    const QString before = GrantLedger::perUserDir();
    QVERIFY(before.endsWith(u"/.local/state/guest-console"));
    const QByteArray home = qgetenv("HOME"), xdg = qgetenv("XDG_STATE_HOME");
    qputenv("HOME", "/tmp/not-the-home");
    qputenv("XDG_STATE_HOME", "/tmp/not-the-state");
    const QString after = GrantLedger::perUserDir();
    qputenv("HOME", home);
    if (xdg.isEmpty())
      qunsetenv("XDG_STATE_HOME");
    else
      qputenv("XDG_STATE_HOME", xdg);
    QCOMPARE(after, before);
    QVERIFY(!after.startsWith(u"/tmp/not-the"));
  }

  void runLockAdmitsOneHolderAtATime() {
    QTemporaryDir dir;
    // Missing parents are created (a fresh account has no ~/.local/state yet).
    const QString ledger = dir.filePath(QStringLiteral("home/.local/state/guest-console"));
    Outcome<RunLock> first = RunLock::acquire(ledger, QStringLiteral("run-1"));
    QVERIFY2(first.ok(), first.ok() ? "" : qPrintable(first.failure().toString()));
    QVERIFY(first->isHeld());
    const Outcome<RunLock> second = RunLock::acquire(ledger, QStringLiteral("run-1"));
    QVERIFY(!second.ok());
    QCOMPARE(second.code(), Refusal::RunAlreadyOpen);
    QVERIFY(RunLock::acquire(ledger, QStringLiteral("run-2")).ok()); // another run is independent
    struct stat st {};
    const QByteArray path = QFile::encodeName(RunLock::lockPath(ledger, QStringLiteral("run-1")));
    QCOMPARE(::lstat(path.constData(), &st), 0);
    QCOMPARE(st.st_mode & 07777, mode_t(0600));
    QVERIFY(!path.contains("run-1")); // the name is a hash, not the run id
    first.value().release();
    QVERIFY(RunLock::acquire(ledger, QStringLiteral("run-1")).ok());
  }

  void runLockRefusesALinkedLockFile() {
    QTemporaryDir dir;
    const QString ledger = dir.filePath(QStringLiteral("ledger"));
    QVERIFY(QDir().mkpath(ledger + QStringLiteral("/live")));
    const QString victim = dir.filePath(QStringLiteral("victim"));
    QFile v(victim);
    QVERIFY(v.open(QIODevice::WriteOnly));
    v.close();
    QVERIFY(QFile::link(victim, RunLock::lockPath(ledger, QStringLiteral("run-1"))));
    const Outcome<RunLock> lock = RunLock::acquire(ledger, QStringLiteral("run-1"));
    QVERIFY(!lock.ok());
    QCOMPARE(lock.code(), Refusal::GrantLedger);
  }

  void runLockRefusesALinkedOrSharedLiveDirectory_data() {
    QTest::addColumn<QString>("kind");
    QTest::newRow("a symlink to a directory of ours") << "symlink";
    QTest::newRow("writable by others, even sticky") << "shared";
  }
  void runLockRefusesALinkedOrSharedLiveDirectory() {
    QFETCH(QString, kind);
    QTemporaryDir dir;
    const QString ledger = dir.filePath(QStringLiteral("ledger"));
    QVERIFY(QDir().mkpath(ledger));
    const QByteArray live = QFile::encodeName(ledger + QStringLiteral("/live"));
    if (kind == u"symlink") {
      QVERIFY(QDir().mkpath(dir.filePath(QStringLiteral("elsewhere"))));
      QCOMPARE(::symlink(QFile::encodeName(dir.filePath(QStringLiteral("elsewhere"))).constData(),
                         live.constData()),
               0);
    } else {
      QCOMPARE(::mkdir(live.constData(), 0700), 0);
      QCOMPARE(::chmod(live.constData(), 01777), 0);
    }
    const Outcome<RunLock> lock = RunLock::acquire(ledger, QStringLiteral("run-1"));
    QVERIFY2(!lock.ok(), "locked a run in a linked or shared directory");
    QCOMPARE(lock.code(), Refusal::GrantLedger);
    QVERIFY(QDir(dir.filePath(QStringLiteral("elsewhere"))).isEmpty());
  }

  // Issue 26: with an ancestor that others may write and that is not sticky, another uid
  // renames the state dir away; the console must not start an empty ledger and open the
  // consumed grant again.
  void refusesALedgerAnotherUserCanRenameAway() {
    if (::geteuid() != 0)
      QSKIP("needs root to act as a second uid (setresuid 65534)");
    QTemporaryDir dir;
    QCOMPARE(::chmod(QFile::encodeName(dir.path()).constData(), 0755), 0);
    const QString parent = dir.filePath("state");
    QCOMPARE(::mkdir(QFile::encodeName(parent).constData(), 0755), 0);
    GrantLedger ledger(parent + "/guest-console");
    const Grant g = freshGrant();
    QVERIFY(ledger.consume(g).ok());
    // The misconfiguration: anyone may rename what the parent holds.
    QCOMPARE(::chmod(QFile::encodeName(parent).constData(), 0777), 0);
    const int renamed = inChild([&] {
      if (!becomeNobody())
        return 10;
      return ::rename(QFile::encodeName(ledger.dir()).constData(),
                      QFile::encodeName(parent + "/moved").constData()) == 0
                 ? 0
                 : 11;
    });
    QCOMPARE(renamed, 0);
    QVERIFY(!QFileInfo::exists(ledger.ledgerPath()));
    const Status replay = ledger.consume(g);
    QVERIFY2(!replay.ok(), "the consumed grant opened again");
    QCOMPARE(replay.code(), Refusal::GrantLedger);
    QVERIFY2(replay.failure().message.contains("not sticky"), qPrintable(replay.failure().message));
    QVERIFY(!QFileInfo::exists(ledger.dir())); // refused before anything was created
    QVERIFY(!ledger.lookup(g.grantId).ok());
    QVERIFY(ledger.isConsumed(g.grantId));

    // Sticky (like /tmp): others may not rename our entries, and the ledger is usable.
    QVERIFY(QDir().rename(parent + "/moved", ledger.dir()));
    QCOMPARE(::chmod(QFile::encodeName(parent).constData(), 01777), 0);
    const int stickyRename = inChild([&] {
      if (!becomeNobody())
        return 10;
      return ::rename(QFile::encodeName(ledger.dir()).constData(),
                      QFile::encodeName(parent + "/moved").constData()) == 0
                 ? 0
                 : 11;
    });
    QCOMPARE(stickyRename, 11);
    QCOMPARE(ledger.consume(g).code(), Refusal::GrantReused);
  }

  void refusesUnsafeAncestors_data() {
    QTest::addColumn<QString>("kind");
    QTest::newRow("world writable, not sticky") << "0777";
    QTest::newRow("group writable, not sticky") << "0775";
    QTest::newRow("owned by another user") << "foreign";
    QTest::newRow("a symlink") << "symlink";
    QTest::newRow("not a directory") << "file";
  }
  void refusesUnsafeAncestors() {
    QFETCH(QString, kind);
    QTemporaryDir dir;
    const QString middle = dir.filePath("middle");
    const QByteArray m = QFile::encodeName(middle);
    if (kind == u"symlink") {
      QVERIFY(QDir().mkpath(dir.filePath("real")));
      QCOMPARE(::symlink(QFile::encodeName(dir.filePath("real")).constData(), m.constData()), 0);
    } else if (kind == u"file") {
      QFile f(middle);
      QVERIFY(f.open(QIODevice::WriteOnly));
    } else {
      QCOMPARE(::mkdir(m.constData(), 0700), 0);
      if (kind == u"foreign") {
        if (::geteuid() != 0)
          QSKIP("needs root to chown to a second uid");
        QCOMPARE(::chown(m.constData(), 65534, 65534), 0);
      } else {
        QCOMPARE(::chmod(m.constData(), kind.toUInt(nullptr, 8)), 0);
      }
    }
    GrantLedger ledger(middle + "/deeper/state");
    const Grant g = freshGrant();
    const Status s = ledger.consume(g);
    QVERIFY2(!s.ok(), "consumed through an unsafe ancestor");
    QCOMPARE(s.code(), Refusal::GrantLedger);
    QVERIFY(!ledger.lookup(g.grantId).ok());
    // The run lock beside the ledger walks the same chain (it once checked only its own two
    // directories, creating the rest through the unsafe one).
    const Outcome<RunLock> lock = RunLock::acquire(ledger.dir(), QStringLiteral("run-1"));
    QVERIFY2(!lock.ok(), "locked a run through an unsafe ancestor");
    QCOMPARE(lock.code(), Refusal::GrantLedger);
    QVERIFY(!QFileInfo::exists(middle + "/deeper") && !QFileInfo::exists(dir.filePath("real/deeper")));
  }

  // Issue 26: a FIFO (or a device) named consumed-grants is refused at once by consume and
  // lookup alike; the child's alarm turns a blocking open into a failure, not a hang.
  void refusesNonRegularLedgersWithoutBlocking_data() {
    QTest::addColumn<QString>("kind");
    QTest::newRow("fifo") << "fifo";
    QTest::newRow("character device") << "device";
  }
  void refusesNonRegularLedgersWithoutBlocking() {
    QFETCH(QString, kind);
    QTemporaryDir dir;
    GrantLedger ledger(dir.filePath("state"));
    QVERIFY(QDir().mkpath(ledger.dir()));
    const QByteArray path = QFile::encodeName(ledger.ledgerPath());
    if (kind == u"fifo") {
      QCOMPARE(::mkfifo(path.constData(), 0600), 0);
    } else {
      if (::geteuid() != 0)
        QSKIP("mknod needs root");
      QCOMPARE(::mknod(path.constData(), S_IFCHR | 0600, makedev(1, 3)), 0); // like /dev/null
    }
    const Grant g = freshGrant();
    const int result = inChild([&] {
      ::alarm(20);
      const Status consumed = ledger.consume(g);
      const Outcome<bool> seen = ledger.lookup(g.grantId);
      int bits = 0;
      if (!consumed.ok() && consumed.code() == Refusal::GrantLedger &&
          consumed.failure().message.contains("not a regular file"))
        bits |= 1;
      if (!seen.ok() && seen.code() == Refusal::GrantLedger)
        bits |= 2;
      return bits;
    });
    QCOMPARE(result, 3);
  }

  // The reader counts complete lines with a matching check (or legacy three-field lines);
  // a line whose check does not match, or a torn tail, consumes nothing.
  void countsOnlyCompleteCheckedLines() {
    QTemporaryDir dir;
    GrantLedger ledger(dir.filePath("state"));
    const Grant legacy = freshGrant(), forged = freshGrant(), torn = freshGrant(), next = freshGrant();
    QVERIFY(QDir().mkpath(ledger.dir()));
    {
      QFile f(ledger.ledgerPath());
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(legacy.grantId.toLatin1() + ' ' + legacy.digestHex + " 2026-01-01T00:00:00.000Z\n");
      QByteArray bad =
          GrantLedger::recordLine(forged.grantId.toLatin1(), forged.digestHex, "2026-01-01T00:00:00.000Z");
      bad[bad.size() - 2] = bad[bad.size() - 2] == '0' ? '1' : '0';
      f.write(bad);
      const QByteArray whole =
          GrantLedger::recordLine(torn.grantId.toLatin1(), torn.digestHex, "2026-01-01T00:00:00.000Z");
      f.write(whole.left(whole.size() - 1)); // all but the newline: a crash mid-append
    }
    QCOMPARE(ledger.isConsumed(legacy.grantId), true);
    QCOMPARE(ledger.isConsumed(forged.grantId), false);
    QCOMPARE(ledger.isConsumed(torn.grantId), false);
    QVERIFY(ledger.consume(next).ok()); // drops the torn tail, then appends
    QVERIFY(ledger.consume(torn).ok());
    QCOMPARE(ledger.consume(legacy).code(), Refusal::GrantReused);
    QFile f(ledger.ledgerPath());
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray all = f.readAll();
    QVERIFY(all.endsWith('\n'));
    QCOMPARE(all.count('\n'), 4);
  }

  // Issue 26: a full disk. In a private mount namespace a tiny tmpfs is the state dir; the
  // ledger is grown to just below a page boundary and the rest of the tmpfs filled, so the
  // next record can only partly land (a short write). The consume is refused GRANT_LEDGER and
  // leaves the ledger as it was; once space is back the very same grant opens (not
  // GRANT_REUSED).
  void aFullDiskDoesNotBurnTheGrant() {
    QTemporaryDir dir;
    const QString mountPoint = dir.filePath("tmpfs");
    QVERIFY(QDir().mkpath(mountPoint));
    const Grant g = freshGrant();
    const int result = inChild([&]() -> int {
      ::alarm(60);
      if (::unshare(CLONE_NEWNS) != 0)
        return 77;
      if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        return 78;
      const QByteArray mp = QFile::encodeName(mountPoint);
      if (::mount("gc-ledger-test", mp.constData(), "tmpfs", MS_NOSUID | MS_NODEV, "size=8k,mode=0700") != 0)
        return 79;
      GrantLedger ledger(mountPoint + "/guest-console");
      // Fill the ledger's first page until the next line would straddle the boundary.
      const long page = ::sysconf(_SC_PAGESIZE);
      off_t size = 0;
      for (int i = 0; i < 1000; ++i) {
        if (!ledger.consume(freshGrant()).ok())
          return 20;
        const off_t grown = sizeOf(ledger.ledgerPath());
        const off_t line = grown - size;
        size = grown;
        const off_t room = page - size % page;
        if (room > 0 && room < line - 8)
          break;
      }
      // Fill every other page of the tmpfs.
      {
        const int filler =
            ::open(QFile::encodeName(mountPoint + "/filler").constData(), O_WRONLY | O_CREAT, 0600);
        if (filler < 0)
          return 21;
        const QByteArray chunk(512, 'x');
        while (::write(filler, chunk.constData(), size_t(chunk.size())) > 0) {
        }
        ::close(filler);
      }
      const Status full = ledger.consume(g);
      if (full.ok() || full.code() != Refusal::GrantLedger)
        return 30;
      if (sizeOf(ledger.ledgerPath()) != size)
        return 31; // the partial record must be taken back
      const Outcome<bool> seen = ledger.lookup(g.grantId);
      if (!seen.ok() || seen.value())
        return 32;
      if (::unlink(QFile::encodeName(mountPoint + "/filler").constData()) != 0)
        return 22;
      const Status again = ledger.consume(g);
      if (!again.ok())
        return again.code() == Refusal::GrantReused ? 40 : 41;
      if (ledger.consume(g).code() != Refusal::GrantReused)
        return 42;
      return 0;
    });
    if (result == 77)
      QSKIP("unshare(CLONE_NEWNS) refused: no private mount namespace for the tmpfs");
    QCOMPARE(result, 0);
  }

  void exactlyOneOfTwoRacingProcessesWins() {
    QTemporaryDir dir;
    const QString state = dir.filePath("state");
    const int rounds = 50;
    const int grantsPerRound = 20;
    for (int round = 0; round < rounds; ++round) {
      QStringList arguments{state};
      for (int i = 0; i < grantsPerRound; ++i)
        arguments.append(freshGrant().grantId);
      QProcess a, b;
      QProcess* procs[] = {&a, &b};
      for (QProcess* p : procs) {
        p->setProgram(QStringLiteral(GC_LEDGER_CONSUME));
        p->setArguments(arguments);
        p->start();
      }
      // Both are running and blocked on stdin before either is released.
      for (QProcess* p : procs) {
        QVERIFY(p->waitForStarted());
        while (!p->canReadLine())
          QVERIFY2(p->waitForReadyRead(10000), "helper did not become ready");
        QCOMPARE(p->readLine(), QByteArray("ready\n"));
      }
      // QProcess writes lazily from its event loop; push both signals out now, back to back.
      for (QProcess* p : procs)
        p->write("go\n");
      for (QProcess* p : procs)
        QVERIFY(p->waitForBytesWritten(10000));
      QList<QList<QByteArray>> results;
      for (QProcess* p : procs) {
        QVERIFY(p->waitForFinished(30000));
        QCOMPARE(p->exitStatus(), QProcess::NormalExit);
        QVERIFY2(p->exitCode() == 0, p->readAllStandardError().constData());
        results.append(p->readAllStandardOutput().trimmed().split('\n'));
        QCOMPARE(results.last().size(), grantsPerRound);
      }
      for (int i = 0; i < grantsPerRound; ++i) {
        const QSet<QByteArray> outcomes{results[0][i], results[1][i]};
        QVERIFY2(
            outcomes == (QSet<QByteArray>{"ok", "GRANT_REUSED"}),
            qPrintable(QStringLiteral("round %1 grant %2: %3 / %4")
                           .arg(round)
                           .arg(i)
                           .arg(QString::fromLatin1(results[0][i]), QString::fromLatin1(results[1][i]))));
      }
    }
    // The ledger holds one line per grant: no lost or doubled records.
    QFile f(GrantLedger(state).ledgerPath());
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll().count('\n'), rounds * grantsPerRound);
  }
};

QTEST_GUILESS_MAIN(tst_GrantLedger)
#include "tst_grantledger.moc"
