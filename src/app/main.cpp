// guest-console: the headless console. Subcommands: check (grant + binding), open, mcp,
// sweep, evidence. Headless QCoreApplication; a subcommand that is not built yet says so.
#include "common/Log.h"

#include <QCommandLineParser>
#include <QCoreApplication>

#include <cstdio>

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  QCoreApplication::setApplicationName(QStringLiteral("guest-console"));
  QCoreApplication::setApplicationVersion(QStringLiteral(GC_VERSION));
  gc::Log::install();

  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("Guest Console: one console to the exact VM a grant names."));
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument(QStringLiteral("command"),
                               QStringLiteral("check | open | mcp | sweep | evidence"));
  parser.process(app);
  std::fputs("guest-console: no command given\n", stderr);
  return 1;
}
