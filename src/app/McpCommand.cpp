// guest-console mcp --run RUN: the stdio MCP server for one running console, relayed over
// the run's private Unix socket (docs/mcp.md).
#include "app/AppPaths.h"
#include "app/Commands.h"
#include "relay/McpRelay.h"

#include <cstdio>

namespace gc {

int runMcp(const QStringList& arguments) {
  QCommandLineParser parser;
  prepareParser(parser, QStringLiteral("MCP server (stdio) for one running Guest Console."));
  parser.addOption({QStringLiteral("run"), QStringLiteral("The run id."), QStringLiteral("id")});
  parser.process(arguments);
  if (!parser.isSet(QStringLiteral("run")) || !parser.positionalArguments().isEmpty()) {
    std::fputs("usage: guest-console mcp --run RUN_ID [--runtime-dir DIR]\n", stderr);
    return exitStatus(ExitCode::Usage);
  }
  const Outcome<AppPaths> paths = resolvePaths(parser);
  if (!paths.ok()) {
    std::fprintf(stderr, "guest-console mcp: %s\n", qPrintable(paths.failure().toString()));
    return exitStatus(ExitCode::Unavailable);
  }
  return runMcpRelay(paths->runtimeDir, parser.value(QStringLiteral("run")));
}

} // namespace gc
