// The subcommands of guest-console. Each returns the process exit status, one of
// common/ExitCode.h's table (docs/operating.md).
#pragma once

#include "common/ExitCode.h"

#include <QStringList>

namespace gc {

int runCheck(const QStringList& arguments);
int runOpen(const QStringList& arguments);
int runEvidence(const QStringList& arguments);
int runMcp(const QStringList& arguments);
int runSweep(const QStringList& arguments);

} // namespace gc
