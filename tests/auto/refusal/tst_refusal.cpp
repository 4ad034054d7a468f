#include "common/ExitCode.h"
#include "common/Log.h"
#include "common/Outcome.h"
#include "common/Refusal.h"

#include <QFile>
#include <QRegularExpression>
#include <QSet>
#include <QTest>

using namespace gc;

class tst_Refusal : public QObject {
  Q_OBJECT
private slots:
  void namesAreUniqueStableAndRoundTrip() {
    QSet<QString> seen;
    for (Refusal code : allRefusals()) {
      const QString name = refusalName(code);
      QVERIFY2(!seen.contains(name), qPrintable(name));
      seen.insert(name);
      static const QRegularExpression shape(QStringLiteral("^[A-Z][A-Z0-9_]+$"));
      QVERIFY2(shape.match(name).hasMatch(), qPrintable(name));
      QVERIFY(!refusalText(code).isEmpty());
      QCOMPARE(refusalFromName(name), std::optional<Refusal>(code));
    }
    QCOMPARE(refusalFromName(u"NOT_A_CODE"), std::nullopt);
  }

  void outcomeCarriesValueOrFailure() {
    Outcome<int> good(7);
    QVERIFY(good.ok());
    QCOMPARE(good.value(), 7);
    Outcome<int> bad(Refusal::GrantExpired, QStringLiteral("late"));
    QVERIFY(!bad.ok());
    QCOMPARE(bad.code(), Refusal::GrantExpired);
    QCOMPARE(bad.failure().toString(), QStringLiteral("GRANT_EXPIRED: late"));
  }

  void redactsSecretsFromDiagnostics_data() {
    QTest::addColumn<QString>("line");
    QTest::addColumn<QString>("secret");
    QTest::newRow("capability hex")
        << QStringLiteral("hello cap=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
        << QStringLiteral("0123456789abcdef0123456789abcdef");
    QTest::newRow("json password") << QStringLiteral("{\"cmd\":\"credentials\",\"password\":\"S3ntinel-pw\"}")
                                   << QStringLiteral("S3ntinel-pw");
    QTest::newRow("escaped json password")
        << QStringLiteral("{\"password\":\"a\\\"S3ntinel\"}") << QStringLiteral("S3ntinel");
    QTest::newRow("assignment") << QStringLiteral("login password=S3ntinel-pw user=x")
                                << QStringLiteral("S3ntinel-pw");
  }
  void redactsSecretsFromDiagnostics() {
    QFETCH(QString, line);
    QFETCH(QString, secret);
    const QString out = Log::redact(line);
    QVERIFY2(!out.contains(secret), qPrintable(out));
    QVERIFY(out.contains(QStringLiteral("redacted")));
  }

  // Issue 28: one exit-status table for every subcommand (the console's 0/1/2 and the relay's
  // sysexits 64/69), and docs/operating.md lists exactly it: status, name and meaning.
  void exitStatusesAreOneDocumentedTable() {
    QSet<int> statuses;
    QMap<int, QPair<QString, QString>> table;
    for (ExitCode code : kAllExitCodes) {
      QVERIFY2(!statuses.contains(exitStatus(code)), exitCodeName(code));
      statuses.insert(exitStatus(code));
      table.insert(exitStatus(code),
                   {QString::fromLatin1(exitCodeName(code)), QString::fromUtf8(exitCodeMeaning(code))});
    }
    // What scripts, hosts and tests rely on.
    QCOMPARE(exitStatus(ExitCode::Ok), 0);
    QCOMPARE(exitStatus(ExitCode::Internal), 1);
    QCOMPARE(exitStatus(ExitCode::Refused), 2);
    QCOMPARE(exitStatus(ExitCode::Usage), 64);       // EX_USAGE
    QCOMPARE(exitStatus(ExitCode::Unavailable), 69); // EX_UNAVAILABLE
    QCOMPARE(exitCodeFor(Refusal::Internal), ExitCode::Internal);
    QCOMPARE(exitCodeFor(Refusal::GrantReused), ExitCode::Refused);

    QFile doc(QStringLiteral(GC_OPERATING_MD));
    QVERIFY(doc.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(doc.readAll());
    const qsizetype section = text.indexOf(QStringLiteral("## 4. Exit statuses"));
    QVERIFY(section >= 0);
    static const QRegularExpression row(QStringLiteral("^\\| (\\d+) \\| `(\\w+)` \\| (.+) \\|$"),
                                        QRegularExpression::MultilineOption);
    QMap<int, QPair<QString, QString>> documented;
    for (auto it = row.globalMatch(text.mid(section)); it.hasNext();) {
      const QRegularExpressionMatch m = it.next();
      documented.insert(m.captured(1).toInt(), {m.captured(2), m.captured(3)});
    }
    QCOMPARE(documented, table);
  }
};

QTEST_GUILESS_MAIN(tst_Refusal)
#include "tst_refusal.moc"
