// DescriptorReserve: a few descriptors held from the start of a run (opens of /dev/null) and
// given back to the process when it hits its descriptor limit (EMFILE), so that what must
// still work at the limit can: accepting and sorting panel connections, the control channel,
// the evidence append, teardown. And the check before a grant is consumed: a process that
// has not got the descriptors a run needs refuses with RESOURCE_EXHAUSTED and spends nothing
//.
//
// Thread: the main thread (the reserve is process-wide state without a lock).
#pragma once

#include "common/Outcome.h"

namespace gc {

class DescriptorReserve {
public:
  static constexpr int kReserved = 4;
  // What one run needs beyond what is open when open() checks: the panel listener and its
  // connections in the handshake (PanelServer::kMaxHandshaking), the panel, the evidence
  // log, the MCP socket and its client, libvirt's event loop, the reader's socket pair, the
  // sock_diag socket, teardown's directory walk; with room to spare.
  static constexpr int kPerRun = 48;

  // Takes descriptors until kReserved are held (idempotent).
  static void hold();
  // Closes one held descriptor; false when none is left.
  static bool release();
  // Takes back what was released, as far as descriptors are free again.
  static void replenish();
  static int held();

  // RLIMIT_NOFILE's soft limit minus the descriptors open now (counted in /proc/self/fd);
  // the reserve does not count as free.
  static Outcome<long> freeDescriptors();
  // RESOURCE_EXHAUSTED unless at least `needed` descriptors are free.
  static Status ensureFree(long needed = kPerRun);
};

} // namespace gc
