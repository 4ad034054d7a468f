#include "audit/EvidenceLog.h"

#include <QFile>
#include <QJsonObject>
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
