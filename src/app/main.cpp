// guest-console: the headless console. Subcommands: check, open, mcp, sweep, evidence.
// Each has its own --help.
#include "app/Commands.h"
#include "common/ExitCode.h"
#include "common/Log.h"
#include "privacy/ZeroingAllocator.h"

#include <QCoreApplication>

#include <cstdio>
#include <malloc.h>

namespace {

constexpr const char* kUsage = "usage: guest-console <command> [options]\n"
                               "  check     validate a grant and resolve its VM binding (consumes nothing)\n"
                               "  open      open the console for a grant (JSON lines on stdin/stdout)\n"
                               "  mcp       --run RUN: the MCP server (stdio) for a running console\n"
                               "  evidence  verify FILE: check an evidence log's hash chain\n"
                               "  sweep     remove run directories of consoles that are gone\n"
                               "Run 'guest-console <command> --help' for a command's options.\n";

} // namespace

int main(int argc, char** argv) {
  // A fixed mmap threshold: glibc's default raises it (up to 32 MB) whenever a large block is
  // freed, after which 8 MB desktop frames and FreeRDP's surfaces come from arenas that keep
  // their pages after free. Fixed, every block above it is its own mapping, returned on free.
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
  // Freed heap blocks hold zeros, whichever library frees them (guest pixels, capture bytes).
  gc::ZeroingAllocator::install();
  QCoreApplication app(argc, argv);
  QCoreApplication::setApplicationName(QStringLiteral("guest-console"));
  QCoreApplication::setApplicationVersion(QStringLiteral(GC_VERSION));
  gc::Log::install();

  QStringList args = QCoreApplication::arguments();
  if (args.size() < 2 || args.at(1).startsWith(QLatin1Char('-'))) {
    if (args.size() >= 2 && (args.at(1) == QLatin1String("--version") || args.at(1) == QLatin1String("-v"))) {
      std::printf("guest-console %s\n", GC_VERSION);
      return gc::exitStatus(gc::ExitCode::Ok);
    }
    std::fputs(kUsage, args.size() >= 2 && args.at(1).contains(QLatin1String("help")) ? stdout : stderr);
    return gc::exitStatus(args.size() >= 2 && args.at(1).contains(QLatin1String("help"))
                              ? gc::ExitCode::Ok
                              : gc::ExitCode::Internal);
  }
  const QString command = args.takeAt(1);
  // QCommandLineParser sees "guest-console <options…>" for check/open, positional args for evidence.
  if (command == QLatin1String("check"))
    return gc::runCheck(args);
  if (command == QLatin1String("open"))
    return gc::runOpen(args);
  if (command == QLatin1String("mcp"))
    return gc::runMcp(args);
  if (command == QLatin1String("sweep"))
    return gc::runSweep(args);
  if (command == QLatin1String("evidence")) {
    args.insert(1, command);
    return gc::runEvidence(args);
  }
  std::fprintf(stderr, "guest-console: unknown command '%s'\n%s", qPrintable(command), kUsage);
  return gc::exitStatus(gc::ExitCode::Internal);
}
