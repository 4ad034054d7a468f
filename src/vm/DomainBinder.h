// Binds a grant to the exact running VM and its single loopback RDP forward, or refuses
// with the precise reason. Checks, in this order (the first failing one is reported):
//   connection (LIBVIRT_UNAVAILABLE) → UUID (VM_NOT_FOUND) → name (VM_NAME_MISMATCH) →
//   running (VM_NOT_RUNNING) → forwards to the guest port: none (RDP_RULE_NONE), several
//   (RDP_RULE_AMBIGUOUS), not 127.0.0.1 (RDP_RULE_NOT_LOOPBACK), a range (RDP_RULE_RANGE),
//   another port (RDP_PORT_MISMATCH) → any other forward of any domain on the connection,
//   running or not, claiming the host port (RDP_PORT_CONFLICT) → a non-loopback listener on
//   the host port (PUBLIC_LISTENER).
// Binding only reads: it opens no socket and touches no other domain.
// Thread: any thread; blocking (libvirt calls), so not on a latency-sensitive thread.
#pragma once

#include "common/Outcome.h"
#include "vm/ForwardRule.h"
#include "vm/VmBinding.h"
#include "vm/VmTarget.h"

namespace gc {

class LibvirtConnection;

class DomainBinder {
public:
  // Opens a read-only connection to target.uri and binds through it.
  static Outcome<VmBinding> bind(const VmTarget& target);
  // Binds through an already open connection (tests use a read-write test-driver one).
  static Outcome<VmBinding> bind(const LibvirtConnection& connection, const VmTarget& target);
  // The forward-rule policy alone (the rules that reach target.guestPort): exactly one,
  // 127.0.0.1, a single port, equal to target.hostPort.
  static Outcome<ForwardRule> selectRule(const QList<ForwardRule>& rules, const VmTarget& target);
};

} // namespace gc
