// The one table of process exit statuses, for every guest-console subcommand (check, open,
// evidence, sweep, mcp). docs/operating.md lists it; tst_refusal checks the two agree. `mcp`
// uses the sysexits values its MCP hosts expect (EX_USAGE, EX_UNAVAILABLE); the others use
// 0/1/2. Add a status by adding one line; never renumber one (scripts and hosts read them).
#pragma once

#include "common/Refusal.h"

// X(Enumerator, status, "meaning, for the operator")
#define GC_EXIT_CODES(X)                                                                                     \
  X(Ok, 0, "done: the check bound, the console closed (whatever the close reason), the log verified")        \
  X(Internal, 1, "internal error or bad options (a message on stderr or an error event)")                    \
  X(Refused, 2, "refused: a typed refusal code was reported (error event, `--json`, stderr)")                \
  X(Usage, 64, "`mcp`: bad arguments (EX_USAGE)")                                                            \
  X(Unavailable, 69,                                                                                         \
    "`mcp`: no console it may relay to: `RUN_NOT_FOUND` or `MCP_NOT_AUTHORIZED` (EX_UNAVAILABLE)")

namespace gc {

enum class ExitCode : int {
#define GC_EXIT_ENUM(name, status, meaning) name = status,
  GC_EXIT_CODES(GC_EXIT_ENUM)
#undef GC_EXIT_ENUM
};

constexpr int exitStatus(ExitCode code) {
  return static_cast<int>(code);
}

constexpr const char* exitCodeName(ExitCode code) {
  switch (code) {
#define GC_EXIT_NAME(name, status, meaning)                                                                  \
  case ExitCode::name:                                                                                       \
    return #name;
    GC_EXIT_CODES(GC_EXIT_NAME)
#undef GC_EXIT_NAME
  }
  return "";
}

constexpr const char* exitCodeMeaning(ExitCode code) {
  switch (code) {
#define GC_EXIT_MEANING(name, status, meaning)                                                               \
  case ExitCode::name:                                                                                       \
    return meaning;
    GC_EXIT_CODES(GC_EXIT_MEANING)
#undef GC_EXIT_MEANING
  }
  return "";
}

constexpr ExitCode kAllExitCodes[] = {
#define GC_EXIT_LIST(name, status, meaning) ExitCode::name,
    GC_EXIT_CODES(GC_EXIT_LIST)
#undef GC_EXIT_LIST
};

// The status a subcommand other than mcp exits with for a refusal: Internal for INTERNAL,
// Refused for every other code.
constexpr ExitCode exitCodeFor(Refusal code) {
  return code == Refusal::Internal ? ExitCode::Internal : ExitCode::Refused;
}

} // namespace gc
