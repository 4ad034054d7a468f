// Where the console keeps its state (evidence, the consumed-grants ledger) and its runtime
// files (run directories), from the command line or the XDG defaults.
#pragma once

#include "common/Outcome.h"
#include "grant/GrantPolicy.h"

#include <QCommandLineParser>
#include <QString>

namespace gc {

struct AppPaths {
  QString stateDir;
  QString runtimeDir;
};

// Global options every subcommand takes.
void addGlobalOptions(QCommandLineParser& parser);
Outcome<AppPaths> resolvePaths(const QCommandLineParser& parser);
Outcome<GrantPolicy> resolvePolicy(const QCommandLineParser& parser);
// "90", "90s", "15m", "8h" → seconds.
std::optional<std::chrono::seconds> parseDuration(const QString& text);

} // namespace gc
