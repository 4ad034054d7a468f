// What RdpSession needs to open one pinned RDP connection to the guest.
#pragma once

#include "privacy/Credentials.h"

#include <QByteArray>
#include <QString>

namespace gc {

// What the Client Core Data asks for (the grant's rdp.desktop and rdp.keyboard_layout);
// 0 leaves FreeRDP's default. The server may still present another size: the console judges.
struct ClientDesktop {
  quint32 width = 0;
  quint32 height = 0;
  quint32 keyboardLayout = 0; // a Windows KLID
  quint32 keyboardType = 0;   // with the layout: MS-RDPBCGR keyboardType/SubType/FunctionKey
  quint32 keyboardSubType = 0;
  quint32 keyboardFunctionKey = 0;
};

struct RdpConfig {
  QString host;          // must be 127.0.0.1 (the per-run loopback forward)
  quint16 port = 0;      // the per-run host port
  QByteArray pinSha256;  // SHA-256 of the guest certificate's DER, 32 raw bytes
  bool unpinned = false; // the grant visibly opted out of pinning
  QString configDir;     // a private, empty directory for FreeRDP; nothing is written there
  int connectTimeoutMs = 10000;
  ClientDesktop desktop;
  // rdp.desktop.size_from: "server" (true) bounds the guest's size by the desktop's pixel
  // count; "grant" (false) makes the fronts refuse any size but the desktop's (FrontGuard).
  bool desktopSizeFromServer = true;
};

// Moved into RdpSession::start(); wiped as soon as FreeRDP holds its own copies.
using RdpCredentials = Credentials;

} // namespace gc
