#include "session/Phase.h"

#include <iterator>

namespace gc {
namespace {

struct Edge {
  Phase from;
  Phase to;
};

// Forward edges only; "→ CLOSED" is added by isLegalTransition for every non-terminal phase.
constexpr Edge kForward[] = {
    {Phase::Setup, Phase::Locking},       // operator or MCP host asks for the lock: the gate closes
    {Phase::Locking, Phase::ReadOnly},    // every accepted event drained and acknowledged
    {Phase::ReadOnly, Phase::Capturing},  // the lock is committed, Capture Desktop starts
    {Phase::Capturing, Phase::Reviewing}, // the first capture was handed to the MCP host
    {Phase::Reviewing, Phase::Action},    // the model chose its one action
};

constexpr const char* kNames[] = {"SETUP",     "LOCKING", "READ_ONLY", "CAPTURING",
                                  "REVIEWING", "ACTION",  "CLOSED"};

} // namespace

QString phaseName(Phase phase) {
  return QString::fromLatin1(kNames[static_cast<int>(phase)]);
}

std::optional<Phase> phaseFromName(QStringView name) {
  for (Phase p : kAllPhases) {
    if (name == QLatin1String(kNames[static_cast<int>(p)]))
      return p;
  }
  return std::nullopt;
}

bool isLegalTransition(Phase from, Phase to) {
  if (from == Phase::Closed)
    return false;
  if (to == Phase::Closed)
    return true;
  for (const Edge& e : kForward) {
    if (e.from == from && e.to == to)
      return true;
  }
  return false;
}

} // namespace gc
