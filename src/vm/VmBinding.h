// The result of a successful bind: the exact domain and the single loopback forward to it.
#pragma once

#include <QString>

namespace gc {

struct VmBinding {
  QString uri;
  QString uuid; // canonical lower-case form as libvirt reports it
  QString name;
  quint16 hostPort = 0;
  QString hostAddress; // always "127.0.0.1"
  QString ruleSource;  // "portForward" | "hostfwd"
};

} // namespace gc
