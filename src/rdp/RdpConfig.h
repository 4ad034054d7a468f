// What RdpSession needs to open one pinned RDP connection to the guest.
#pragma once

#include "privacy/Credentials.h"

#include <QByteArray>
#include <QString>

namespace gc {

struct RdpConfig {
  QString host;          // must be 127.0.0.1 (the per-run loopback forward)
  quint16 port = 0;      // the per-run host port
  QByteArray pinSha256;  // SHA-256 of the guest certificate's DER, 32 raw bytes
  bool unpinned = false; // the grant visibly opted out of pinning
  QString configDir;     // a private, empty directory for FreeRDP; nothing is written there
  int connectTimeoutMs = 10000;
};

// Moved into RdpSession::start(); wiped as soon as FreeRDP holds its own copies.
using RdpCredentials = Credentials;

} // namespace gc
