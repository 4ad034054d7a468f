// What a grant names: the one VM to bind to and the forward that must reach its RDP port.
#pragma once

#include <QString>

namespace gc {

struct VmTarget {
  QString uri;  // libvirt URI, e.g. qemu:///system (tests: test:///abs/path.xml)
  QString uuid; // the domain's UUID (any case)
  QString name; // must equal the domain's name exactly
  quint16 hostPort = 0;
  quint16 guestPort = 3389;
};

} // namespace gc
