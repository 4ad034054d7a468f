// One TCP forward from the host into a domain, as declared in its XML.
#pragma once

#include <QString>

namespace gc {

struct ForwardRule {
  enum class Source { PortForward, HostFwd };

  Source source = Source::PortForward;
  QString address;            // host address as written; empty = all interfaces
  QString device;             // portForward's dev= (host interface), empty if none
  quint16 hostPortFirst = 0;  // host port range, inclusive
  quint16 hostPortLast = 0;   //   (first == last for a single port)
  quint16 guestPortFirst = 0; // guest port that hostPortFirst reaches; the range maps 1:1

  bool isRange() const { return hostPortFirst != hostPortLast; }
  quint16 guestPortLast() const { return quint16(guestPortFirst + (hostPortLast - hostPortFirst)); }
  bool coversHostPort(quint16 port) const { return port >= hostPortFirst && port <= hostPortLast; }
  bool reachesGuestPort(quint16 port) const { return port >= guestPortFirst && port <= guestPortLast(); }
  // Binds loopback only: address exactly 127.0.0.1 and no device other than lo.
  bool isLoopbackOnly() const;

  // "portForward" | "hostfwd" (the stable form used in VmBinding::ruleSource).
  QString sourceName() const;
  // For messages, e.g. "hostfwd 0.0.0.0:4000 -> guest 3389".
  QString describe() const;

  friend bool operator==(const ForwardRule&, const ForwardRule&) = default;
};

} // namespace gc
