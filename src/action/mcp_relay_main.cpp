// gc-mcp-relay: `guest-console mcp` as a separate executable until the console's own
// subcommand is wired (guest-console mcp --run RUN_ID). Reads XDG_RUNTIME_DIR.
#include "action/McpRelay.h"
#include "common/Log.h"

#include <QCommandLineParser>
#include <QCoreApplication>

#include <cstdio>

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  QCoreApplication::setApplicationName(QStringLiteral("guest-console-mcp"));
  gc::Log::install();
  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("MCP server (stdio) for one running Guest Console."));
  parser.addHelpOption();
  const QCommandLineOption run(QStringLiteral("run"), QStringLiteral("The run id."),
                               QStringLiteral("RUN_ID"));
  parser.addOption(run);
  if (!parser.parse(app.arguments()) || !parser.isSet(run) || !parser.positionalArguments().isEmpty()) {
    std::fputs("usage: gc-mcp-relay --run RUN_ID\n", stderr);
    return gc::kMcpExitUsage;
  }
  return gc::runMcpRelay(qEnvironmentVariable("XDG_RUNTIME_DIR"), parser.value(run));
}
