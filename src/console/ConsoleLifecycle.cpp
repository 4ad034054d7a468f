#include "console/ConsoleLifecycle.h"

#include "common/StateTable.h"

#include <iterator>

namespace gc {
namespace {

using L = Lifecycle;
constexpr auto kLifecycle = makeStateTable<Lifecycle>(
    {"opening", "awaiting_credentials", "connecting", "connected", "serving", "tearing_down",
     "awaiting_vm_verdict", "closed"},
    {
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
    });
static_assert(kLifecycle.names.size() == std::size(kAllLifecycles));

} // namespace

QString lifecycleName(Lifecycle state) {
  return kLifecycle.name(state);
}

std::optional<QString> lifecycleEdgeReason(Lifecycle from, Lifecycle to) {
  if (const StateEdge<Lifecycle>* e = kLifecycle.edge(from, to))
    return QString::fromLatin1(e->why);
  return std::nullopt;
}

} // namespace gc
