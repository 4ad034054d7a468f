// guest-console sweep [--json]: removes run directories that dead consoles left behind
// (privacy/RunSweeper); everything it does not remove is reported with the reason.
#include "app/AppPaths.h"
#include "app/Commands.h"
#include "privacy/RunSweeper.h"

#include <QJsonDocument>

#include <cstdio>

namespace gc {

int runSweep(const QStringList& arguments) {
  QCommandLineParser parser;
  prepareParser(parser,
                QStringLiteral("Remove run directories of consoles that are gone; report everything kept."));
  parser.addOption({QStringLiteral("json"), QStringLiteral("Print one JSON object.")});
  parser.process(arguments);
  const bool json = parser.isSet(QStringLiteral("json"));
  const Outcome<AppPaths> paths = resolvePaths(parser);
  if (!paths.ok()) {
    if (json) {
      RunSweeper::Report report;
      report.refused = paths.failure();
      std::fputs(QJsonDocument(report.toJson()).toJson(QJsonDocument::Compact).append('\n').constData(),
                 stdout);
    } else {
      std::fprintf(stdout, "refused: %s\n", qPrintable(paths.failure().toString()));
    }
    return exitStatus(ExitCode::Refused);
  }
  const RunSweeper::Report report = RunSweeper::sweep(paths->runtimeDir);
  if (json) {
    std::fputs(QJsonDocument(report.toJson()).toJson(QJsonDocument::Compact).append('\n').constData(),
               stdout);
  } else {
    for (const QString& run : report.removed)
      std::fprintf(stdout, "removed %s\n", qPrintable(run));
    for (const RunSweeper::Kept& kept : report.kept)
      std::fprintf(stdout, "kept    %s: %s\n", qPrintable(kept.run), qPrintable(kept.reason));
    std::fprintf(stdout, "%lld removed, %lld kept\n", static_cast<long long>(report.removed.size()),
                 static_cast<long long>(report.kept.size()));
  }
  std::fflush(stdout);
  return exitStatus(report.refused ? ExitCode::Refused : ExitCode::Ok);
}

} // namespace gc
