// Routes FreeRDP/WinPR's WLog into Qt logging (category "gc.rdp"), so it passes through the
// console's redacting handler, and clamps it: never below WARN. TRACE would dump packets
// (WLog_Packet) and DEBUG can echo settings; neither may reach a log.
// Levels: WARN -> warning, ERROR/FATAL -> critical, except what a good session always
// produces (a short list of FreeRDP 3.10's routine errors, and everything on a thread inside
// ExpectedErrors), which goes to debug: a critical line always means a real failure.
// Lives on any thread; install() is idempotent and thread-safe.
#pragma once

#include <QLoggingCategory>

namespace gc {

Q_DECLARE_LOGGING_CATEGORY(lcRdp)

class WLogRouter {
public:
  static void install();

  // While one is alive on a thread, FreeRDP's errors on that thread are expected and are
  // logged at debug level instead of critical: the pin probe refuses every certificate on
  // purpose, and "certificate not trusted, aborting" on each good open would teach operators
  // to ignore critical lines. The probe reports its own outcome. Not copyable; nestable.
  class ExpectedErrors {
  public:
    ExpectedErrors();
    ~ExpectedErrors();
    ExpectedErrors(const ExpectedErrors&) = delete;
    ExpectedErrors& operator=(const ExpectedErrors&) = delete;
  };
};

} // namespace gc
