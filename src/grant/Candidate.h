// Candidate: one action the grant offers the model. The label is data shown to the model
// and the operator; it is never interpreted, however it reads.
//
// Thread: a value type; use from any thread.
#pragma once

#include "grant/ActionSpec.h"

#include <QString>

namespace gc {

struct Candidate {
  static constexpr qsizetype kMaxLabelLength = 512;

  QString id;    // unique within the grant, [A-Za-z0-9._:-]{1,64}
  QString label; // any text up to kMaxLabelLength UTF-16 units, kept verbatim
  ActionSpec action;

  friend bool operator==(const Candidate&, const Candidate&) = default;
};

} // namespace gc
