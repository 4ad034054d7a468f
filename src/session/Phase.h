// The console's phases and the one transition table (DESIGN.md §6). PhaseController is the
// single authority that performs transitions; everything else only reads or mirrors.
#pragma once

#include <QString>
#include <QStringView>

#include <optional>

namespace gc {

enum class Phase { Setup, Locking, ReadOnly, Capturing, Reviewing, Action, Closed };

// Stable wire/evidence names: "SETUP", "LOCKING", "READ_ONLY", ...
QString phaseName(Phase phase);
std::optional<Phase> phaseFromName(QStringView name);
// The transition table. Any phase but CLOSED may go to CLOSED; otherwise only forward,
// one step at a time; nothing ever returns to SETUP.
bool isLegalTransition(Phase from, Phase to);
constexpr Phase kAllPhases[] = {Phase::Setup,     Phase::Locking, Phase::ReadOnly, Phase::Capturing,
                                Phase::Reviewing, Phase::Action,  Phase::Closed};

} // namespace gc
