#include "audit/EvidenceLog.h"

#include <QCryptographicHash>
#include <QFile>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

using namespace gc;

namespace {

QString writeSampleLog(const QTemporaryDir& dir, int lines) {
  EvidenceLog log;
  if (!log.open(dir.filePath(QStringLiteral("evidence")), QStringLiteral("run-1")).ok())
    return {};
  for (int i = 0; i < lines; ++i)
    if (!log.append(QStringLiteral("phase"), QJsonObject{{QStringLiteral("to"), QStringLiteral("P%1").arg(i)},
                                                         {QStringLiteral("n"), i}})
             .ok())
      return {};
  return log.path();
}

QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void writeAll(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
  QCOMPARE(f.write(bytes), bytes.size());
}

// What anyone who can write the file can do without a key: edit a line, then recompute
// every prev/hash after it so the chain is consistent again.
QByteArray rechained(const QByteArray& contents, const QByteArray& from, const QByteArray& to) {
  static const QRegularExpression prevField(QStringLiteral("\"prev\":\"[0-9a-f]{64}\"$"));
  QByteArray prev(64, '0');
  QByteArray out;
  for (const QByteArray& line : contents.split('\n')) {
    if (line.isEmpty())
      continue;
    QString body = QString::fromUtf8(line.left(line.lastIndexOf(",\"hash\":\"")));
    body.replace(QString::fromLatin1(from), QString::fromLatin1(to));
    body.replace(prevField, QStringLiteral("\"prev\":\"%1\"").arg(QString::fromLatin1(prev)));
    QCryptographicHash h(QCryptographicHash::Sha256);
    h.addData(prev);
    h.addData(body.toUtf8());
    prev = h.result().toHex();
    out += body.toUtf8() + ",\"hash\":\"" + prev + "\"}\n";
  }
  return out;
}

struct Verified {
  int exitCode = -1;
  QString output;
};

Verified runVerify(const QString& file, const QByteArray& head) {
  QProcess p;
  QStringList args{QStringLiteral("evidence"), QStringLiteral("verify"), file};
  if (!head.isEmpty())
    args << QStringLiteral("--head") << QString::fromLatin1(head);
  p.start(QStringLiteral(GC_CONSOLE_BINARY), args);
  if (!p.waitForFinished(60000))
    return {};
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
          QString::fromUtf8(p.readAllStandardOutput())};
}

} // namespace

class tst_Evidence : public QObject {
  Q_OBJECT
private slots:
  void chainVerifies() {
    QTemporaryDir dir;
    const QString path = writeSampleLog(dir, 5);
    QVERIFY(!path.isEmpty());
    const auto v = EvidenceLog::verifyFile(path);
    QVERIFY2(v.ok, qPrintable(v.error));
    QCOMPARE(v.lines, quint64(5));
    QCOMPARE(v.head.size(), 64);
    struct stat st {};
    QCOMPARE(::stat(QFile::encodeName(path).constData(), &st), 0);
    QCOMPARE(st.st_mode & 07777, mode_t(0600));
  }

  void editingAnyLineBreaksVerification_data() {
    QTest::addColumn<int>("line");
    for (int i = 0; i < 5; ++i)
      QTest::addRow("line %d", i + 1) << i;
  }
  void editingAnyLineBreaksVerification() {
    QFETCH(int, line);
    QTemporaryDir dir;
    const QByteArray original = readAll(writeSampleLog(dir, 5));
    QList<QByteArray> lines = original.split('\n');
    lines[line].replace(QByteArrayLiteral("\"P"), QByteArrayLiteral("\"Q"));
    const auto v = EvidenceLog::verify(lines.join('\n'));
    QVERIFY(!v.ok);
    QVERIFY(v.error.startsWith(QStringLiteral("line %1").arg(line + 1)));
  }

  void removingReorderingOrTruncatingIsDetected() {
    QTemporaryDir dir;
    const QByteArray original = readAll(writeSampleLog(dir, 4));
    QList<QByteArray> lines = original.split('\n');
    QList<QByteArray> removed = lines;
    removed.removeAt(1);
    QVERIFY(!EvidenceLog::verify(removed.join('\n')).ok);
    QList<QByteArray> swapped = lines;
    swapped.swapItemsAt(1, 2);
    QVERIFY(!EvidenceLog::verify(swapped.join('\n')).ok);
    QVERIFY(!EvidenceLog::verify(original.left(original.size() - 10)).ok);
    // Dropping whole tail lines verifies as a shorter chain, but its head differs from the
    // anchor the console handed out.
    QList<QByteArray> tail = lines.mid(0, 3);
    tail.append(QByteArray());
    const auto shorter = EvidenceLog::verify(tail.join('\n'));
    QVERIFY(shorter.ok);
    QVERIFY(shorter.head != EvidenceLog::verify(original).head);
  }

  // The chain alone cannot tell a cut or re-chained log from an intact one; the head the run
  // handed out (the closed line's evidence_head) can: `evidence verify --head`.
  void verifyWithTheHeadDetectsCutAndRechainedLogs_data() {
    QTest::addColumn<QString>("log"); // intact, cut, rechained
    QTest::addColumn<bool>("withHead");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("says");
    QTest::newRow("intact") << "intact" << false << 0 << "internal consistency only";
    QTest::newRow("intact --head") << "intact" << true << 0 << "ends at the expected head";
    QTest::newRow("cut") << "cut" << false << 0 << "internal consistency only";
    QTest::newRow("cut --head") << "cut" << true << 2 << "EVIDENCE_HEAD_MISMATCH";
    QTest::newRow("rechained") << "rechained" << false << 0 << "internal consistency only";
    QTest::newRow("rechained --head") << "rechained" << true << 2 << "EVIDENCE_HEAD_MISMATCH";
  }
  void verifyWithTheHeadDetectsCutAndRechainedLogs() {
    QFETCH(QString, log);
    QFETCH(bool, withHead);
    QFETCH(int, exitCode);
    QFETCH(QString, says);
    QTemporaryDir dir;
    const QString intact = writeSampleLog(dir, 6);
    QVERIFY(!intact.isEmpty());
    const auto original = EvidenceLog::verifyFile(intact);
    QVERIFY(original.ok);
    const QByteArray head = original.head; // what the closed line handed out
    QString file = intact;
    if (log == u"cut") {
      QList<QByteArray> lines = readAll(intact).split('\n');
      lines.removeLast(); // the empty tail
      lines.removeLast(); // the last entry
      file = dir.filePath(QStringLiteral("cut.jsonl"));
      writeAll(file, lines.join('\n') + '\n');
    } else if (log == u"rechained") {
      file = dir.filePath(QStringLiteral("rechained.jsonl"));
      writeAll(file, rechained(readAll(intact), "\"to\":\"P1\"", "\"to\":\"P9\""));
      QVERIFY(readAll(file) != readAll(intact));
    }
    if (log != u"intact") // the forgery is internally consistent: the library alone accepts it
      QVERIFY(EvidenceLog::verifyFile(file).ok);
    const Verified v = runVerify(file, withHead ? head : QByteArray());
    QVERIFY2(v.exitCode == exitCode, qPrintable(v.output));
    QVERIFY2(v.output.contains(says), qPrintable(v.output));
    if (log == u"cut" && withHead) // the expected head is not in a cut log at all
      QVERIFY2(v.output.contains(u"not in the log"), qPrintable(v.output));
  }

  // Given the head of an earlier line (e.g. the receipt's), verify names where it is.
  void verifyWithAnEarlierHeadSaysWhereItIs() {
    QTemporaryDir dir;
    const QString path = writeSampleLog(dir, 5);
    const auto v = EvidenceLog::verifyFile(path);
    QCOMPARE(v.hashes.size(), 5);
    QCOMPARE(v.hashes.last(), v.head);
    const Verified r = runVerify(path, v.hashes.at(2));
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.output.contains(u"the expected head is line 3; the log goes on to line 5"),
             qPrintable(r.output));
    QCOMPARE(runVerify(path, "nothex").exitCode, 1);
  }

  void refusesReservedKeysAndExistingFiles() {
    QTemporaryDir dir;
    EvidenceLog log;
    QVERIFY(log.open(dir.path(), QStringLiteral("r")).ok());
    QVERIFY(!log.append(QStringLiteral("x"), QJsonObject{{QStringLiteral("hash"), QStringLiteral("forged")}})
                 .ok());
    QVERIFY(!log.append(QStringLiteral("x"), QJsonObject{{QStringLiteral("seq"), 9}}).ok());
    EvidenceLog second;
    QVERIFY(!second.open(dir.path(), QStringLiteral("r")).ok()); // never appends to a file it did not create
    QVERIFY(!second.open(dir.path(), QStringLiteral("../escape")).ok());
    QVERIFY(QFile::link(dir.filePath(QStringLiteral("r.jsonl")), dir.filePath(QStringLiteral("l.jsonl"))));
    QVERIFY(!second.open(dir.path(), QStringLiteral("l")).ok());
  }

  // The fsync is the log's own thread's; the write is not: whoever reads the file after an
  // append (the parent told an evidence path, a verify) finds the line there.
  void eachLineIsInTheFileWhenAppendReturns() {
    QTemporaryDir dir;
    EvidenceLog log;
    QVERIFY(log.open(dir.path(), QStringLiteral("r")).ok());
    for (int i = 1; i <= 50; ++i) {
      QVERIFY(log.append(QStringLiteral("phase"), QJsonObject{{QStringLiteral("n"), i}}).ok());
      const auto v = EvidenceLog::verifyFile(log.path());
      QVERIFY2(v.ok, qPrintable(v.error));
      QCOMPARE(v.lines, quint64(i));
      QCOMPARE(v.head, log.headHash());
    }
    QVERIFY(log.sync().ok());
    log.close();
    QCOMPARE(EvidenceLog::verifyFile(log.path()).lines, quint64(50));
  }

  void aSecondOpenIsRefusedUntilTheLogIsClosed() {
    QTemporaryDir dir;
    EvidenceLog log;
    QVERIFY(log.sync().ok()); // nothing open: nothing to wait for
    QVERIFY(log.open(dir.path(), QStringLiteral("a")).ok());
    QVERIFY(log.append(QStringLiteral("x")).ok());
    QVERIFY(!log.open(dir.path(), QStringLiteral("b")).ok());
    QCOMPARE(log.path(), dir.filePath(QStringLiteral("a.jsonl")));
    log.close();
    QVERIFY(!log.isOpen());
    // Closed, it opens again: a new file with a chain and a syncer of its own.
    QVERIFY(log.open(dir.path(), QStringLiteral("b")).ok());
    QVERIFY(log.append(QStringLiteral("y")).ok());
    QVERIFY(log.sync().ok());
    log.close();
    QCOMPARE(EvidenceLog::verifyFile(dir.filePath(QStringLiteral("a.jsonl"))).lines, quint64(1));
    QVERIFY(EvidenceLog::verifyFile(dir.filePath(QStringLiteral("b.jsonl"))).ok);
  }

  void valuesThatLookLikeTheHashKeyStayData() {
    QTemporaryDir dir;
    EvidenceLog log;
    QVERIFY(log.open(dir.path(), QStringLiteral("r")).ok());
    QVERIFY(log.append(QStringLiteral("receipt"),
                       QJsonObject{{QStringLiteral("label"),
                                    QStringLiteral(",\"hash\":\"ignore previous instructions\"}")}})
                .ok());
    const auto v = EvidenceLog::verifyFile(log.path());
    QVERIFY2(v.ok, qPrintable(v.error));
    QCOMPARE(v.head, log.headHash());
  }
};

QTEST_GUILESS_MAIN(tst_Evidence)
#include "tst_evidence.moc"
