#include "rdp/WLogRouter.h"

#include <winpr/wlog.h>

#include <mutex>

namespace gc {

Q_LOGGING_CATEGORY(lcRdp, "gc.rdp")

namespace {

thread_local int t_expectedErrors = 0;

BOOL onMessage(const wLogMessage* msg) {
  // Re-checked here because a WLOG_FILTER environment entry can lower a child logger's
  // level below the root's.
  if (!msg || msg->Level < WLOG_WARN || msg->Level == WLOG_OFF || !msg->TextString)
    return TRUE;
  const QString text = QString::fromUtf8(msg->TextString);
  if (t_expectedErrors > 0)
    qCDebug(lcRdp).noquote() << "(expected)" << text;
  else if (msg->Level == WLOG_WARN)
    qCWarning(lcRdp).noquote() << text;
  else
    qCCritical(lcRdp).noquote() << text;
  return TRUE;
}

// Data, image and packet messages carry payloads (screens, PDUs): never forwarded.
BOOL dropPayload(const wLogMessage*) {
  return TRUE;
}

wLogCallbacks s_callbacks{&dropPayload, &dropPayload, &onMessage, &dropPayload};

} // namespace

WLogRouter::ExpectedErrors::ExpectedErrors() {
  ++t_expectedErrors;
}

WLogRouter::ExpectedErrors::~ExpectedErrors() {
  --t_expectedErrors;
}

void WLogRouter::install() {
  static std::once_flag once;
  std::call_once(once, [] {
    wLog* root = WLog_GetRoot();
    WLog_SetLogAppenderType(root, WLOG_APPENDER_CALLBACK);
    WLog_ConfigureAppender(WLog_GetLogAppender(root), "callbacks", &s_callbacks);
    WLog_SetLogLevel(root, WLOG_WARN);
  });
}

} // namespace gc
