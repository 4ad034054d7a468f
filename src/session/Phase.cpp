#include "session/Phase.h"

#include "common/StateTable.h"

namespace gc {
namespace {

using P = Phase;
// Forward, one step at a time, and from any phase but CLOSED to CLOSED; never back.
constexpr auto kPhases = makeStateTable<Phase>(
    {"SETUP", "LOCKING", "READ_ONLY", "CAPTURING", "REVIEWING", "ACTION", "CLOSED"},
    {
        {P::Setup, P::Locking, "the operator or the MCP host asked for the lock: the gate closes"},
        {P::Locking, P::ReadOnly, "every accepted event drained and acknowledged"},
        {P::ReadOnly, P::Capturing, "the lock is committed, Capture Desktop starts"},
        {P::Capturing, P::Reviewing, "the first capture was handed to the MCP host"},
        {P::Reviewing, P::Action, "the model chose its one action"},
        {P::Setup, P::Closed, "closed in SETUP"},
        {P::Locking, P::Closed, "closed while draining"},
        {P::ReadOnly, P::Closed, "closed during the guest sync"},
        {P::Capturing, P::Closed, "closed while capturing"},
        {P::Reviewing, P::Closed, "closed while the model reviewed"},
        {P::Action, P::Closed, "the one action ran (or failed): closed"},
    });
static_assert(kPhases.names.size() == std::size(kAllPhases));

} // namespace

QString phaseName(Phase phase) {
  return kPhases.name(phase);
}

std::optional<Phase> phaseFromName(QStringView name) {
  return kPhases.fromName(name);
}

bool isLegalTransition(Phase from, Phase to) {
  return kPhases.allows(from, to);
}

} // namespace gc
