#include "rdp/WLogRouter.h"

#include <winpr/wlog.h>

#include <algorithm>
#include <iterator>
#include <mutex>
#include <string_view>

namespace gc {

Q_LOGGING_CATEGORY(lcRdp, "gc.rdp")

namespace {

thread_local int t_expectedErrors = 0;

// FreeRDP 3.10 errors that every good session produces; each is followed by FreeRDP carrying
// on as intended. Matched whole, so a different failure of the same function stays critical.
bool isRoutineNoise(std::string_view text) {
  static constexpr std::string_view kNoise[] = {
      // winpr's NTLM asks OpenSSL 3 for MD4 (only in its legacy provider), then uses its own.
      "Failed to initialize digest md4",
      // A server without licensing (xrdp, the test guest) answers with an error alert carrying
      // STATUS_VALID_CLIENT, whose empty blob FreeRDP reads as BB_ERROR_BLOB; it continues.
      "license binary blob::type expected BB_UNKNOWN, got BB_ERROR_BLOB",
      // NLA's SPNEGO tries Kerberos first; on a host without a Kerberos realm it falls back
      // to NTLM.
      "krb5_parse_name (Configuration file does not specify default realm [-1765328160])",
      // A server that joins none of the one channel the console asks for (drdynvc: xrdp with
      // its channels off) answers the MCS Connect Initial with no channel ids; the session
      // goes on, on the bitmap path, and the evidence's channel report says so.
      "requested 1 channels, got 0 instead",
  };
  return std::find(std::begin(kNoise), std::end(kNoise), text) != std::end(kNoise);
}

BOOL onMessage(const wLogMessage* msg) {
  // Re-checked here because a WLOG_FILTER environment entry can lower a child logger's
  // level below the root's.
  if (!msg || msg->Level < WLOG_WARN || msg->Level == WLOG_OFF || !msg->TextString)
    return TRUE;
  const QString text = QString::fromUtf8(msg->TextString);
  if (t_expectedErrors > 0 || isRoutineNoise(msg->TextString))
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
