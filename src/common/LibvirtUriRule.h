// LibvirtUriRule: which libvirt URIs a grant may name. A libvirt URI is close to a command
// line: "+ext" runs the program in ?command=, "+ssh" spawns ssh, a host connects off the
// machine. Only the local drivers are accepted, spelled exactly:
//   qemu:///system, qemu:///session, test:///default, test:///ABSOLUTE/PATH
// where PATH is normalised (no empty, "." or ".." segments, no trailing "/") and made of
// [A-Za-z0-9._~+=,@-] between the slashes: no %-escapes, no query, no fragment, no spaces.
// Used by GrantLoader (a hostile grant is refused before anything else looks at it) and by
// LibvirtConnection (nothing reaches virConnectOpen* without passing it).
//
// Thread: reentrant; use from any thread.
#pragma once

#include "common/Outcome.h"

#include <QString>

namespace gc {

class LibvirtUriRule {
public:
  // LIBVIRT_URI_FORBIDDEN, naming the first rule the URI breaks, for anything else.
  static Status check(const QString& uri);
};

} // namespace gc
