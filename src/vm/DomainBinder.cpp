#include "vm/DomainBinder.h"

#include "vm/ForwardRuleParser.h"
#include "vm/LibvirtConnection.h"
#include "vm/LibvirtDomain.h"
#include "vm/ListenerScanner.h"
#include "vm/VmLog.h"

#include <QStringList>
#include <QUuid>

#include <libvirt/libvirt.h>

#include <cstdlib>
#include <vector>

namespace gc {

namespace {

QString quoted(const QString& text) {
  return QLatin1Char('\'') + text + QLatin1Char('\'');
}

QString describeAll(const QList<ForwardRule>& rules) {
  QStringList parts;
  for (const ForwardRule& rule : rules)
    parts.append(rule.describe());
  return parts.join(QStringLiteral("; "));
}

// Every domain on the connection, active and inactive.
Outcome<std::vector<LibvirtDomain>> allDomains(virConnectPtr conn) {
  virDomainPtr* list = nullptr;
  const int count = virConnectListAllDomains(conn, &list, 0);
  if (count < 0)
    return Failure{Refusal::LibvirtUnavailable,
                   QStringLiteral("cannot list the connection's domains: ") + LibvirtConnection::lastError()};
  std::vector<LibvirtDomain> domains;
  domains.reserve(size_t(count));
  for (int i = 0; i < count; ++i)
    domains.emplace_back(list[i]);
  std::free(list);
  return domains;
}

// Forwards (any guest port) a domain declares, live and — for a running persistent
// domain — in the configuration it will boot with next.
Outcome<QList<ForwardRule>> declaredForwards(const LibvirtDomain& domain, const QString& label) {
  QList<unsigned int> flagSets{0};
  if (virDomainIsActive(domain.get()) == 1 && virDomainIsPersistent(domain.get()) == 1)
    flagSets.append(VIR_DOMAIN_XML_INACTIVE);
  QList<ForwardRule> rules;
  for (unsigned int flags : flagSets) {
    const QString xml = domain.xml(flags);
    if (xml.isNull())
      return Failure{Refusal::RdpPortConflict, QStringLiteral("the XML of domain %1 cannot be read: %2")
                                                   .arg(label, LibvirtConnection::lastError())};
    auto parsed = ForwardRuleParser::parseAll(xml);
    if (!parsed)
      return Failure{Refusal::RdpPortConflict,
                     QStringLiteral("domain %1: %2").arg(label, parsed.failure().message)};
    rules.append(parsed.value());
  }
  return rules;
}

} // namespace

Outcome<ForwardRule> DomainBinder::selectRule(const QList<ForwardRule>& rules, const VmTarget& target) {
  const QString guest = QString::number(target.guestPort);
  if (rules.isEmpty())
    return Failure{
        Refusal::RdpRuleNone,
        QStringLiteral("domain %1 has no TCP forward to guest port %2").arg(quoted(target.name), guest)};
  if (rules.size() > 1)
    return Failure{Refusal::RdpRuleAmbiguous,
                   QStringLiteral("domain %1 has %2 TCP forwards to guest port %3: %4")
                       .arg(quoted(target.name), QString::number(rules.size()), guest, describeAll(rules))};
  const ForwardRule& rule = rules.first();
  if (!rule.isLoopbackOnly()) {
    const QString where =
        rule.address.isEmpty() ? QStringLiteral("all interfaces") : QStringLiteral("address ") + rule.address;
    return Failure{Refusal::RdpRuleNotLoopback,
                   QStringLiteral("the forward to guest port %1 binds %2%3, not 127.0.0.1 only (%4)")
                       .arg(guest, where,
                            rule.device.isEmpty() ? QString() : QStringLiteral(" on device ") + rule.device,
                            rule.describe())};
  }
  if (rule.isRange())
    return Failure{Refusal::RdpRuleRange,
                   QStringLiteral("the forward to guest port %1 is the host port range %2-%3")
                       .arg(guest, QString::number(rule.hostPortFirst), QString::number(rule.hostPortLast))};
  if (rule.hostPortFirst != target.hostPort)
    return Failure{Refusal::RdpPortMismatch,
                   QStringLiteral("the forward to guest port %1 uses host port %2, the grant names %3")
                       .arg(guest, QString::number(rule.hostPortFirst), QString::number(target.hostPort))};
  return rule;
}

Outcome<VmBinding> DomainBinder::bind(const VmTarget& target) {
  auto connection = LibvirtConnection::openReadOnly(target.uri);
  if (!connection)
    return connection.failure();
  return bind(connection.value(), target);
}

Outcome<VmBinding> DomainBinder::bind(const LibvirtConnection& connection, const VmTarget& target) {
  virConnectPtr conn = connection.handle();
  if (!conn)
    return Failure{Refusal::LibvirtUnavailable, QStringLiteral("no libvirt connection")};

  // Identity: UUID, then name, then state.
  if (QUuid::fromString(target.uuid).isNull())
    return Failure{Refusal::VmNotFound, QStringLiteral("%1 is not a UUID").arg(quoted(target.uuid))};
  const LibvirtDomain domain = LibvirtDomain::lookupByUuid(conn, target.uuid);
  if (!domain) {
    if (virConnectIsAlive(conn) != 1)
      return Failure{Refusal::LibvirtUnavailable,
                     QStringLiteral("the libvirt connection is closed: ") + LibvirtConnection::lastError()};
    return Failure{Refusal::VmNotFound,
                   QStringLiteral("no domain with UUID %1 on %2").arg(target.uuid, connection.uri())};
  }
  const QString uuid = domain.uuid();
  const QString name = domain.name();
  if (name != target.name)
    return Failure{Refusal::VmNameMismatch, QStringLiteral("domain %1 is named %2, the grant names %3")
                                                .arg(uuid, quoted(name), quoted(target.name))};
  const int state = domain.state();
  if (state < 0)
    return Failure{Refusal::LibvirtUnavailable,
                   QStringLiteral("the state of domain %1 cannot be read: ").arg(quoted(name)) +
                       LibvirtConnection::lastError()};
  if (state != VIR_DOMAIN_RUNNING)
    return Failure{Refusal::VmNotRunning,
                   QStringLiteral("domain %1 is %2, not running").arg(quoted(name), domainStateName(state))};

  // The one forward to the guest's RDP port.
  const QString xml = domain.xml();
  if (xml.isNull())
    return Failure{Refusal::LibvirtUnavailable,
                   QStringLiteral("the XML of domain %1 cannot be read: ").arg(quoted(name)) +
                       LibvirtConnection::lastError()};
  auto ownRules = ForwardRuleParser::parseAll(xml);
  if (!ownRules)
    return ownRules.failure();
  QList<ForwardRule> reaching;
  for (const ForwardRule& rule : ownRules.value())
    if (rule.reachesGuestPort(target.guestPort))
      reaching.append(rule);
  auto selected = selectRule(reaching, target);
  if (!selected)
    return selected.failure();
  const ForwardRule rule = selected.value();

  // Nothing else may claim the host port: not another forward of this domain, not any
  // forward of any other domain on the connection (a stopped one may start later).
  for (const ForwardRule& other : ownRules.value())
    if (!(other == rule) && other.coversHostPort(target.hostPort))
      return Failure{Refusal::RdpPortConflict,
                     QStringLiteral("domain %1 also forwards host port %2: %3")
                         .arg(quoted(name), QString::number(target.hostPort), other.describe())};
  auto domains = allDomains(conn);
  if (!domains)
    return domains.failure();
  for (const LibvirtDomain& other : domains.value()) {
    if (other.uuid().compare(uuid, Qt::CaseInsensitive) == 0)
      continue;
    const QString label = quoted(other.name());
    auto forwards = declaredForwards(other, label);
    if (!forwards)
      return forwards.failure();
    for (const ForwardRule& claim : forwards.value())
      if (claim.coversHostPort(target.hostPort))
        return Failure{Refusal::RdpPortConflict,
                       QStringLiteral("domain %1 (%2) also claims host port %3: %4")
                           .arg(label, domainStateName(other.state()), QString::number(target.hostPort),
                                claim.describe())};
  }

  // The port must be reachable from loopback only.
  const auto listeners = ListenerScanner::listenersOn(target.hostPort);
  if (!listeners)
    return Failure{Refusal::PublicListener,
                   QStringLiteral("cannot tell who listens on port %1: %2")
                       .arg(QString::number(target.hostPort), listeners.failure().message)};
  for (const ListenerScanner::Listener& listener : listeners.value())
    if (!listener.isLoopback())
      return Failure{Refusal::PublicListener,
                     QStringLiteral("host port %1 is also listened on at %2")
                         .arg(QString::number(target.hostPort), listener.addressText())};

  qCInfo(lcVm).noquote() << "bound domain" << quoted(name) << uuid << "via" << rule.describe();
  VmBinding binding;
  binding.uri = target.uri;
  binding.uuid = uuid;
  binding.name = name;
  binding.hostPort = rule.hostPortFirst;
  binding.hostAddress = rule.address;
  binding.ruleSource = rule.sourceName();
  return binding;
}

} // namespace gc
