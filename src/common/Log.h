// The console's logger: every qDebug/qWarning/... (and FreeRDP's WLog, routed in
// src/rdp/) goes through one message handler that redacts before writing to stderr.
// Diagnostics only: evidence goes to the audit log, never here.
#pragma once

#include <QLoggingCategory>
#include <QString>

namespace gc {

Q_DECLARE_LOGGING_CATEGORY(lcApp)

class Log {
public:
  // Installs the redacting handler (idempotent). Lives on any thread; the handler is
  // serialized by an internal mutex. Lines start "<program>[pid]": the console's, or its RDP
  // reader's (guest-console-rdp), which writes to the same stderr.
  static void install(const char* program = "guest-console");
  // Removes secret-looking material from a diagnostic line: 32+ hex digit runs
  // (capabilities, keys), "password"/"capability"/"secret" JSON values, and anything
  // after "password=".
  static QString redact(const QString& line);
};

} // namespace gc
