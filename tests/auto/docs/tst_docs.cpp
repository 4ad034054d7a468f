// The docs stay true to the code: every refusal code is explained in docs/troubleshooting.md.
#include "common/Refusal.h"

#include <QFile>
#include <QTest>

class tst_Docs : public QObject {
  Q_OBJECT
private slots:
  void troubleshootingNamesEveryRefusalCode() {
    QFile page(QStringLiteral(GC_SOURCE_DIR "/docs/troubleshooting.md"));
    QVERIFY(page.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(page.readAll());
    QStringList missing;
    for (gc::Refusal code : gc::allRefusals()) {
      if (!text.contains(QStringLiteral("`%1`").arg(gc::refusalName(code))))
        missing << gc::refusalName(code);
    }
    QVERIFY2(missing.isEmpty(), qPrintable(missing.join(QLatin1Char(' '))));
  }
};

QTEST_GUILESS_MAIN(tst_Docs)
#include "tst_docs.moc"
