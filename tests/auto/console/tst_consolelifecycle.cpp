// The console's lifecycle table (console/ConsoleLifecycle.h, issue 28.2): every pair of
// states is legal exactly when the table says so, with a reason; nothing leaves CLOSED; every
// state is reachable from Opening and every one can end.
#include "console/ConsoleLifecycle.h"

#include <QSet>
#include <QTest>

using namespace gc;

Q_DECLARE_METATYPE(gc::Lifecycle)

namespace gc {
inline size_t qHash(Lifecycle l, size_t seed = 0) noexcept {
  return ::qHash(int(l), seed);
}
} // namespace gc

namespace {

using L = Lifecycle;
// The edges the console takes, written out once more by hand: a change to the table must
// change this list too.
const QSet<QPair<L, L>> kExpected{
    {L::Opening, L::AwaitingCredentials},
    {L::Opening, L::TearingDown},
    {L::Opening, L::Closed},
    {L::AwaitingCredentials, L::Connecting},
    {L::AwaitingCredentials, L::TearingDown},
    {L::Connecting, L::AwaitingCredentials},
    {L::Connecting, L::Connected},
    {L::Connecting, L::Serving},
    {L::Connecting, L::TearingDown},
    {L::Connected, L::Serving},
    {L::Connected, L::TearingDown},
    {L::Serving, L::TearingDown},
    {L::TearingDown, L::AwaitingVmVerdict},
    {L::TearingDown, L::Closed},
    {L::AwaitingVmVerdict, L::Closed},
};

} // namespace

class tst_ConsoleLifecycle : public QObject {
  Q_OBJECT
private slots:
  void everyPairFollowsTheTable_data() {
    QTest::addColumn<Lifecycle>("from");
    QTest::addColumn<Lifecycle>("to");
    for (L from : kAllLifecycles)
      for (L to : kAllLifecycles)
        QTest::addRow("%s -> %s", qPrintable(lifecycleName(from)), qPrintable(lifecycleName(to)))
            << from << to;
  }
  void everyPairFollowsTheTable() {
    QFETCH(Lifecycle, from);
    QFETCH(Lifecycle, to);
    const bool expected = kExpected.contains({from, to});
    QCOMPARE(isLegalLifecycleEdge(from, to), expected);
    if (expected)
      QVERIFY(!lifecycleEdgeReason(from, to)->isEmpty());
  }

  void closedIsTerminalAndNothingReturnsToOpening() {
    for (L to : kAllLifecycles) {
      QVERIFY(!isLegalLifecycleEdge(L::Closed, to));
      QVERIFY(!isLegalLifecycleEdge(to, L::Opening));
    }
  }

  void everyStateIsReachableAndCanEnd() {
    QSet<L> reached{L::Opening};
    for (bool grew = true; grew;) {
      grew = false;
      for (L from : kAllLifecycles)
        for (L to : kAllLifecycles)
          if (reached.contains(from) && isLegalLifecycleEdge(from, to) && !reached.contains(to)) {
            reached.insert(to);
            grew = true;
          }
    }
    QCOMPARE(reached.size(), qsizetype(std::size(kAllLifecycles)));
    // Once torn down nothing is served again: no edge back to the guest or the panel.
    for (L from : {L::TearingDown, L::AwaitingVmVerdict, L::Closed})
      for (L to : {L::AwaitingCredentials, L::Connecting, L::Connected, L::Serving})
        QVERIFY(!isLegalLifecycleEdge(from, to));
  }

  void namesAreUnique() {
    QSet<QString> names;
    for (L state : kAllLifecycles)
      names.insert(lifecycleName(state));
    QCOMPARE(names.size(), qsizetype(std::size(kAllLifecycles)));
    QVERIFY(!names.contains(QString()));
  }
};

QTEST_GUILESS_MAIN(tst_ConsoleLifecycle)
#include "tst_consolelifecycle.moc"
