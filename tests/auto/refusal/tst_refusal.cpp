#include "common/Log.h"
#include "common/Outcome.h"
#include "common/Refusal.h"

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
};

QTEST_GUILESS_MAIN(tst_Refusal)
#include "tst_refusal.moc"
