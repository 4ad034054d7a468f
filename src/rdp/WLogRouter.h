// Routes FreeRDP/WinPR's WLog into Qt logging (category "gc.rdp"), so it passes through the
// console's redacting handler, and clamps it: never below WARN. TRACE would dump packets
// (WLog_Packet) and DEBUG can echo settings; neither may reach a log.
// Lives on any thread; install() is idempotent and thread-safe.
#pragma once

#include <QLoggingCategory>

namespace gc {

Q_DECLARE_LOGGING_CATEGORY(lcRdp)

class WLogRouter {
public:
  static void install();
};

} // namespace gc
