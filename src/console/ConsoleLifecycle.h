// The console's own lifecycle, beside the run's phases (session/Phase.h): where
// the console is in opening, logging in, serving and tearing down. One enum, one edge table
// with a reason per edge; Console::setLifecycle() is the only place it changes.
//
//   Opening ─► AwaitingCredentials ─► Connecting ─► Connected ─► Serving
//                      ▲                  │  └──────────────────────▲
//                      └──────────────────┘ (a refused password, another attempt)
//   any of those ─► TearingDown ─► [AwaitingVmVerdict ─►] Closed;  Opening ─► Closed (refused)
//
// Serving: the guest is connected and the panel authorized (welcome sent, frames flow). A
// panel authorized before the guest connects is the panel server's fact (hasPanel) until then.
//
// Thread: value types and pure functions; any thread.
#pragma once

#include <QString>

#include <optional>

namespace gc {

// In the order a console goes through them (Console::isTornDown compares).
enum class Lifecycle {
  Opening,             // open(): grant, ledger, VM binding, reader, pin, evidence, sockets
  AwaitingCredentials, // "credentials_required" sent; nothing reaches the guest
  Connecting,          // credentials handed to the reader; the RDP login runs
  Connected,           // the guest's desktop is accepted: input may flow, no panel yet
  Serving,             // connected and the panel authorized
  TearingDown,         // the phases are CLOSED: wiping and stopping every part
  AwaitingVmVerdict,   // RDP_LOST: libvirt has a bounded while to say the VM went away
  Closed,              // "closed" sent (or the open refused): nothing runs any more
};

QString lifecycleName(Lifecycle state);
// Why the console may go `from` → `to`; nullopt: the edge is not in the table.
std::optional<QString> lifecycleEdgeReason(Lifecycle from, Lifecycle to);
inline bool isLegalLifecycleEdge(Lifecycle from, Lifecycle to) {
  return lifecycleEdgeReason(from, to).has_value();
}
constexpr Lifecycle kAllLifecycles[] = {
    Lifecycle::Opening, Lifecycle::AwaitingCredentials, Lifecycle::Connecting,        Lifecycle::Connected,
    Lifecycle::Serving, Lifecycle::TearingDown,         Lifecycle::AwaitingVmVerdict, Lifecycle::Closed};

} // namespace gc
