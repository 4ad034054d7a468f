// The subcommands of guest-console. Each returns the process exit status:
// 0 = done/bound/closed, 2 = refused (a typed code was printed), 1 = internal error.
#pragma once

#include <QStringList>

namespace gc {

int runCheck(const QStringList& arguments);
int runOpen(const QStringList& arguments);
int runEvidence(const QStringList& arguments);
int runMcp(const QStringList& arguments);
int runSweep(const QStringList& arguments);

inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitRefused = 2;

} // namespace gc
