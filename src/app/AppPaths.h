// Where the console keeps its evidence and its runtime files (run directories), from the
// command line or the XDG defaults, and its consumed-grants ledger (fixed per user).
#pragma once

#include "common/Outcome.h"
#include "grant/GrantPolicy.h"

#include <QCommandLineParser>
#include <QString>

namespace gc {

struct AppPaths {
  QString stateDir;   // evidence (--state-dir, else XDG_STATE_HOME or ~/.local/state)
  QString runtimeDir; // run directories
  QString ledgerDir;  // consumed grants and run locks: GrantLedger::perUserDir() (tests: a hook)
};

// Global options every subcommand takes.
void addGlobalOptions(QCommandLineParser& parser);
// A subcommand's parser: its description, --help and the global options.
void prepareParser(QCommandLineParser& parser, const QString& description);
Outcome<AppPaths> resolvePaths(const QCommandLineParser& parser);
Outcome<GrantPolicy> resolvePolicy(const QCommandLineParser& parser);
// "90", "90s", "15m", "8h" → seconds.
std::optional<std::chrono::seconds> parseDuration(const QString& text);

} // namespace gc
