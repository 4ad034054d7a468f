// The docs stay true to the code (issue 28 item 5, which found ten stale statements): refusal
// codes both ways, the FreeRDP messages the log router treats as routine, the MCP subcommand,
// the live lane's argv, the count of the live lane's fixed behaviours, links and repository
// paths, no dated runs in the references, the results files, and the battery's item files and
// traceability rows.
#include "common/Refusal.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSet>
#include <QTest>

#include <algorithm>

namespace {

QString sourcePath(const QString& relative) {
  return QStringLiteral(GC_SOURCE_DIR "/") + relative;
}

QString readSource(const QString& relative) {
  QFile file(sourcePath(relative));
  if (!file.open(QIODevice::ReadOnly))
    return {};
  return QString::fromUtf8(file.readAll());
}

QString collapseWhitespace(QString text) {
  return text.replace(QRegularExpression(QStringLiteral("\\s+")), QStringLiteral(" "));
}

// "four" → 4; a number written in digits as itself; -1 when it is neither.
int countWord(const QString& word) {
  static const QStringList kWords = {
      QStringLiteral("zero"),  QStringLiteral("one"),  QStringLiteral("two"), QStringLiteral("three"),
      QStringLiteral("four"),  QStringLiteral("five"), QStringLiteral("six"), QStringLiteral("seven"),
      QStringLiteral("eight"), QStringLiteral("nine"), QStringLiteral("ten")};
  const qsizetype index = kWords.indexOf(word.toLower());
  if (index >= 0)
    return static_cast<int>(index);
  bool ok = false;
  const int n = word.toInt(&ok);
  return ok ? n : -1;
}

// The reference pages (not the generated results) and the top-level README.
QStringList markdownPages(bool withResults) {
  QStringList pages{QStringLiteral("README.md")};
  const QDir docs(sourcePath(QStringLiteral("docs")));
  for (const QString& name : docs.entryList({QStringLiteral("*.md")}, QDir::Files, QDir::Name))
    pages << QStringLiteral("docs/") + name;
  if (withResults) {
    const QDir results(sourcePath(QStringLiteral("docs/results")));
    for (const QString& name : results.entryList({QStringLiteral("*.md")}, QDir::Files, QDir::Name))
      pages << QStringLiteral("docs/results/") + name;
  }
  return pages;
}

// The section of a Markdown page from a heading line to the next heading of any level.
QString section(const QString& text, const QString& heading) {
  const qsizetype start = text.indexOf(heading + QLatin1Char('\n'));
  if (start < 0)
    return {};
  const qsizetype next = text.indexOf(QRegularExpression(QStringLiteral("\n#+ ")), start + heading.size());
  return text.mid(start, next < 0 ? -1 : next - start);
}

} // namespace

class tst_Docs : public QObject {
  Q_OBJECT
private slots:
  void troubleshootingNamesEveryRefusalCode() {
    const QString text = readSource(QStringLiteral("docs/troubleshooting.md"));
    QVERIFY(!text.isEmpty());
    QStringList missing;
    for (gc::Refusal code : gc::allRefusals()) {
      if (!text.contains(QStringLiteral("`%1`").arg(gc::refusalName(code))))
        missing << gc::refusalName(code);
    }
    QVERIFY2(missing.isEmpty(), qPrintable(missing.join(QLatin1Char(' '))));
  }

  // A code documented in a table row must be one the console can raise (IDENTITY_FAILURE was
  // documented after nothing raised it any more).
  void troubleshootingDocumentsOnlyCodesThatExist() {
    const QString text = readSource(QStringLiteral("docs/troubleshooting.md"));
    const QRegularExpression row(QStringLiteral("^\\| `([A-Z][A-Z0-9_]+)` \\|"),
                                 QRegularExpression::MultilineOption);
    QStringList unknown;
    int rows = 0;
    for (const QRegularExpressionMatch& m : row.globalMatch(text)) {
      ++rows;
      if (!gc::refusalFromName(m.captured(1)))
        unknown << m.captured(1);
    }
    QCOMPARE(rows, static_cast<int>(gc::allRefusals().size()));
    QVERIFY2(unknown.isEmpty(), qPrintable(unknown.join(QLatin1Char(' '))));
  }

  // architecture.md quotes, whole, each message WLogRouter.cpp's isRoutineNoise matches, and
  // says how many there are.
  void architectureQuotesEveryRoutineFreeRdpMessage() {
    const QString code = readSource(QStringLiteral("src/rdp/WLogRouter.cpp"));
    const qsizetype begin = code.indexOf(QStringLiteral("kNoise[] = {"));
    QVERIFY2(begin >= 0, "WLogRouter.cpp has no kNoise list");
    const qsizetype end = code.indexOf(QStringLiteral("};"), begin);
    QVERIFY(end > begin);
    QStringList messages;
    const QRegularExpression literal(QStringLiteral("^\\s*\"((?:[^\"\\\\]|\\\\.)*)\",\\s*$"),
                                     QRegularExpression::MultilineOption);
    for (const QRegularExpressionMatch& m : literal.globalMatch(code.mid(begin, end - begin)))
      messages << m.captured(1);
    QVERIFY(!messages.isEmpty());

    const QString page = collapseWhitespace(readSource(QStringLiteral("docs/architecture.md")));
    QStringList unquoted;
    for (const QString& message : messages) {
      if (!page.contains(QLatin1Char('"') + message + QLatin1Char('"')))
        unquoted << message;
    }
    QVERIFY2(unquoted.isEmpty(), qPrintable(unquoted.join(QStringLiteral(" | "))));

    const QRegularExpression count(QStringLiteral(
        "\\b(\\w+) FreeRDP [0-9.]+ messages `WLogRouter.cpp`'s `isRoutineNoise` lists, matched whole"));
    const QRegularExpressionMatch said = count.match(page);
    QVERIFY2(said.hasMatch(), "architecture.md no longer says how many messages are matched whole");
    QCOMPARE(countWord(said.captured(1)), static_cast<int>(messages.size()));
  }

  // The `mcp` subcommand is the relay; nothing builds a separate gc-mcp-relay.
  // Every part has its row: a folder under src/ or bridge/ that the parts table does not name
  // is a part nobody can find (src/guestlink, src/sandbox and the reader's own folder were
  // missing once).
  void architectureHasAPartsRowForEverySourceFolder() {
    const QString text = readSource(QStringLiteral("docs/architecture.md"));
    const QString parts = section(text, QStringLiteral("## Parts and where they live"));
    QVERIFY(!parts.isEmpty());
    QStringList rows;
    for (const QString& line : parts.split(QLatin1Char('\n')))
      if (line.startsWith(QLatin1String("| ")))
        rows << line;
    QStringList missing;
    for (const QString& top : {QStringLiteral("src"), QStringLiteral("bridge")}) {
      const QDir dir(sourcePath(top));
      for (const QString& name : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
        const QString folder = QStringLiteral("`%1/%2/").arg(top, name);
        const bool named =
            std::any_of(rows.cbegin(), rows.cend(), [&](const QString& row) { return row.contains(folder); });
        if (!named)
          missing << top + QLatin1Char('/') + name;
      }
    }
    QVERIFY2(missing.isEmpty(), qPrintable(missing.join(QLatin1Char(' '))));
  }

  void mcpPageSaysTheSubcommandIsWired() {
    const QString mcp = readSource(QStringLiteral("docs/mcp.md"));
    QVERIFY(mcp.contains(QStringLiteral("guest-console mcp")));
    QVERIFY2(!mcp.contains(QStringLiteral("not wired")), "mcp.md says the mcp subcommand is not wired");
    QStringList naming;
    for (const QString& page : markdownPages(true)) {
      if (readSource(page).contains(QStringLiteral("gc-mcp-relay")))
        naming << page;
    }
    QVERIFY2(naming.isEmpty(),
             qPrintable(QStringLiteral("gc-mcp-relay named in ") + naming.join(QLatin1Char(' '))));
  }

  // The extension spawns the console with `--issuer-key`; every argv live.md quotes says so.
  void liveArgvNamesTheIssuerKey() {
    const QString live = readSource(QStringLiteral("docs/live.md"));
    const QRegularExpression argv(QStringLiteral("`(open --grant G[^`]*)`"));
    int quoted = 0;
    QStringList without;
    for (const QRegularExpressionMatch& m : argv.globalMatch(collapseWhitespace(live))) {
      ++quoted;
      if (!m.captured(1).contains(QStringLiteral("--issuer-key")))
        without << m.captured(1);
    }
    QVERIFY(quoted > 0);
    QVERIFY2(without.isEmpty(), qPrintable(without.join(QStringLiteral(" | "))));
  }

  // live.md lists the console behaviours the lane found and fixed (one bold bullet each);
  // wherever live.md or test-135.md counts them, the count is that list's.
  void fixedBehaviourCountsAgree() {
    const QString live = readSource(QStringLiteral("docs/live.md"));
    const QString fixes = section(live, QStringLiteral("## Console behaviour the lane found, and the fixes"));
    QVERIFY2(!fixes.isEmpty(), "live.md has no section of the fixed behaviours");
    const int listed = static_cast<int>(
        fixes.count(QRegularExpression(QStringLiteral("^- \\*\\*"), QRegularExpression::MultilineOption)));
    QVERIFY(listed > 0);
    const QRegularExpression counted(QStringLiteral("\\b(\\w+) fixed behaviours\\b"));
    for (const QString& page : {QStringLiteral("docs/live.md"), QStringLiteral("docs/test-135.md")}) {
      int said = 0;
      for (const QRegularExpressionMatch& m : counted.globalMatch(collapseWhitespace(readSource(page)))) {
        ++said;
        QVERIFY2(
            countWord(m.captured(1)) == listed,
            qPrintable(
                QStringLiteral("%1 says \"%2\"; live.md lists %3").arg(page, m.captured(0)).arg(listed)));
      }
      QVERIFY2(said > 0, qPrintable(page + QStringLiteral(" no longer counts the fixed behaviours")));
    }
  }

  // Every relative link in the docs (and the README) reaches a file or folder that exists.
  void docsLinkOnlyFilesThatExist() {
    const QRegularExpression link(QStringLiteral("\\]\\(([^)\\s]+)\\)"));
    QStringList broken;
    for (const QString& page : markdownPages(true)) {
      const QString dir = QFileInfo(sourcePath(page)).absolutePath();
      for (const QRegularExpressionMatch& m : link.globalMatch(readSource(page))) {
        QString target = m.captured(1);
        if (target.startsWith(QLatin1Char('#')) || target.contains(QStringLiteral("://")) ||
            target.startsWith(QStringLiteral("mailto:")))
          continue;
        target = target.section(QLatin1Char('#'), 0, 0);
        if (!QFileInfo::exists(dir + QLatin1Char('/') + target))
          broken << page + QStringLiteral(" → ") + m.captured(1);
      }
    }
    QVERIFY2(broken.isEmpty(), qPrintable(broken.join(QStringLiteral(", "))));
  }

  // A repository path a reference page names in backticks exists (a class may be named without
  // its .h/.cpp). Not paths: MCP's tools/list and tools/call, VS Code's own src/vs/…, what a
  // build or npm makes (dist/, node_modules), and templates (<unit>, *, {…}, $VAR).
  void docsNameOnlyPathsThatExist() {
    const QRegularExpression quoted(QStringLiteral("`((?:src|tests|bridge|widgets|resources|scripts|tools|"
                                                   "packaging|vscode-extension|docs|cmake)/[^`\\s]*)`"));
    const QRegularExpression notAPath(
        QStringLiteral("^(tools/(list|call)|src/vs/)|node_modules|/dist/|[<>*{}$|]"));
    QStringList missing;
    for (const QString& page : markdownPages(false)) {
      for (const QRegularExpressionMatch& m : quoted.globalMatch(readSource(page))) {
        const QString path = m.captured(1).section(QLatin1Char(':'), 0, 0).section(QLatin1Char('#'), 0, 0);
        if (notAPath.match(path).hasMatch())
          continue;
        const QString full = sourcePath(path);
        if (!QFileInfo::exists(full) && !QFileInfo::exists(full + QStringLiteral(".h")) &&
            !QFileInfo::exists(full + QStringLiteral(".cpp")))
          missing << page + QStringLiteral(": ") + m.captured(1);
      }
    }
    QVERIFY2(missing.isEmpty(), qPrintable(missing.join(QStringLiteral(", "))));
  }

  // Docs are references: a dated run belongs in a results file. (An RFC 3339 example time and
  // the MCP protocol version 2025-11-25 are not runs.)
  void referencePagesCarryNoDatedRuns() {
    const QRegularExpression date(QStringLiteral("\\b20\\d\\d-\\d\\d-\\d\\d\\b(?!T)"));
    QStringList dated;
    for (const QString& page : markdownPages(false)) {
      for (const QRegularExpressionMatch& m : date.globalMatch(readSource(page))) {
        if (m.captured(0) != QStringLiteral("2025-11-25"))
          dated << page + QLatin1Char(' ') + m.captured(0);
      }
    }
    QVERIFY2(dated.isEmpty(), qPrintable(dated.join(QStringLiteral(", "))));
  }

  void resultsFileSaysWhereItComesFrom_data() {
    QTest::addColumn<QString>("results");
    QTest::addColumn<QString>("runner");
    QTest::addColumn<QString>("reference");
    QTest::newRow("battery") << QStringLiteral("docs/results/battery.md")
                             << QStringLiteral("tests/battery/run") << QStringLiteral("docs/test-135.md");
    QTest::newRow("bench") << QStringLiteral("docs/results/bench.md") << QStringLiteral("tests/bench/run")
                           << QStringLiteral("docs/performance.md");
    QTest::newRow("live") << QStringLiteral("docs/results/live.md") << QStringLiteral("tests/live/run")
                          << QStringLiteral("docs/live.md");
  }

  // A committed results file names its runner and says not to edit it; its reference page links it.
  void resultsFileSaysWhereItComesFrom() {
    QFETCH(QString, results);
    QFETCH(QString, runner);
    QFETCH(QString, reference);
    const QString head = readSource(results).section(QLatin1Char('\n'), 0, 11);
    QVERIFY2(!head.isEmpty(), qPrintable(results + QStringLiteral(" is missing")));
    QVERIFY(head.contains(QStringLiteral("`%1`").arg(runner)));
    QVERIFY(head.contains(QStringLiteral("Do not edit")));
    QVERIFY(head.contains(QStringLiteral("Generated by `%1` at ").arg(runner)) ||
            head.contains(QStringLiteral("Not generated:")));
    QVERIFY2(readSource(reference).contains(QStringLiteral("(results/") + QFileInfo(results).fileName() +
                                            QLatin1Char(')')),
             qPrintable(reference + QStringLiteral(" does not link ") + results));
  }

  // Each battery item is a file named after its behaviour, run by the runner and traced in
  // test-135.md; the runner runs no item that has no file.
  void batteryItemsAreRunAndTraced() {
    const QDir items(sourcePath(QStringLiteral("tests/battery/items")));
    QStringList files;
    for (const QString& name : items.entryList({QStringLiteral("*.js")}, QDir::Files, QDir::Name))
      files << name.chopped(3);
    QVERIFY(!files.isEmpty());
    const QString runner = readSource(QStringLiteral("tests/battery/run"));
    const qsizetype begin = runner.indexOf(QStringLiteral("const ITEMS = ["));
    QVERIFY(begin >= 0);
    const QString list = runner.mid(begin, runner.indexOf(QStringLiteral("];"), begin) - begin);
    QStringList run;
    for (const QRegularExpressionMatch& m :
         QRegularExpression(QStringLiteral("'([a-z0-9-]+)'")).globalMatch(list))
      run << m.captured(1);
    QStringList sortedRun = run;
    sortedRun.sort();
    QCOMPARE(sortedRun, files);
    QCOMPARE(QSet<QString>(run.begin(), run.end()).size(), run.size());
    const QString traced = readSource(QStringLiteral("docs/test-135.md"));
    QStringList untraced;
    for (const QString& name : files) {
      if (!traced.contains(QLatin1Char('`') + name + QLatin1Char('`')))
        untraced << name;
    }
    QVERIFY2(untraced.isEmpty(), qPrintable(untraced.join(QLatin1Char(' '))));
  }

  // Every item number the battery reports (check(ITEM, …)) has its row in test-135.md's table.
  void everyReportedBatteryItemHasATraceabilityRow() {
    const QDir items(sourcePath(QStringLiteral("tests/battery/items")));
    const QRegularExpression reported(
        QStringLiteral("\\b(?:check|knownGap)\\(\\s*(?:'([^']+)'|(\\d+))\\s*,"));
    QSet<QString> ids;
    for (const QString& name : items.entryList({QStringLiteral("*.js")}, QDir::Files)) {
      for (const QRegularExpressionMatch& m :
           reported.globalMatch(readSource(QStringLiteral("tests/battery/items/") + name)))
        ids.insert(m.captured(1).isEmpty() ? m.captured(2) : m.captured(1));
    }
    QVERIFY(ids.size() > 10);
    const QString table = section(readSource(QStringLiteral("docs/test-135.md")), QStringLiteral("## Items"));
    QSet<QString> rows;
    for (const QRegularExpressionMatch& m :
         QRegularExpression(QStringLiteral("^\\| ([^ |]+) \\|"), QRegularExpression::MultilineOption)
             .globalMatch(table))
      rows.insert(m.captured(1));
    QStringList missing;
    for (const QString& id : ids) {
      if (!rows.contains(id))
        missing << id;
    }
    missing.sort();
    QVERIFY2(missing.isEmpty(),
             qPrintable(QStringLiteral("no row in test-135.md for ") + missing.join(QLatin1Char(' '))));
  }
};

QTEST_GUILESS_MAIN(tst_Docs)
#include "tst_docs.moc"
