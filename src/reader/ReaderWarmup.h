// ReaderWarmup: one FreeRDP client context created and freed before the RDP reader's sandbox
// closes, so what FreeRDP, WinPR and OpenSSL initialise once per process (and may need a file
// or a library for) is done while they still can. Any thread; once, before the sandbox.
#pragma once

#include "common/Outcome.h"

namespace gc {

class ReaderWarmup {
public:
  static Status run();
};

} // namespace gc
