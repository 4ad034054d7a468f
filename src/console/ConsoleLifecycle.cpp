#include "console/ConsoleLifecycle.h"

#include <iterator>

namespace gc {
namespace {

struct Edge {
  Lifecycle from;
  Lifecycle to;
  const char* reason;
};

using L = Lifecycle;
constexpr Edge kEdges[] = {
    {L::Opening, L::AwaitingCredentials, "opened: ready sent, credentials asked for"},
    {L::Opening, L::TearingDown, "closed before the open finished (the console was destroyed)"},
    {L::Opening, L::Closed, "the open was refused: the refusal is reported, nothing stays open"},
    {L::AwaitingCredentials, L::Connecting, "credentials received: the RDP login starts"},
    {L::AwaitingCredentials, L::TearingDown, "closed while asking for credentials"},
    {L::Connecting, L::AwaitingCredentials, "the password was refused: another attempt"},
    {L::Connecting, L::Connected, "the guest's desktop was accepted; no panel yet"},
    {L::Connecting, L::Serving, "the guest's desktop was accepted; the panel was already there"},
    {L::Connecting, L::TearingDown, "closed during the login"},
    {L::Connected, L::Serving, "the panel was authorized"},
    {L::Connected, L::TearingDown, "closed while connected"},
    {L::Serving, L::TearingDown, "closed while serving the panel"},
    {L::TearingDown, L::AwaitingVmVerdict, "RDP_LOST: asking libvirt whether the VM went away"},
    {L::TearingDown, L::Closed, "torn down: closed sent"},
    {L::AwaitingVmVerdict, L::Closed, "the VM verdict is in (or its window ended): closed sent"},
};

constexpr const char* kNames[] = {"opening", "awaiting_credentials", "connecting",          "connected",
                                  "serving", "tearing_down",         "awaiting_vm_verdict", "closed"};
static_assert(std::size(kNames) == std::size(kAllLifecycles));

} // namespace

QString lifecycleName(Lifecycle state) {
  return QString::fromLatin1(kNames[static_cast<int>(state)]);
}

std::optional<QString> lifecycleEdgeReason(Lifecycle from, Lifecycle to) {
  for (const Edge& e : kEdges) {
    if (e.from == from && e.to == to)
      return QString::fromLatin1(e.reason);
  }
  return std::nullopt;
}

} // namespace gc
