// Who may be the panel of this run: the run-bound capability, the grant's run/task/panel
// metadata, and the Origins allowed to connect. A value type; use from any thread.
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

namespace gc {

struct PanelPolicy {
  QString run;
  QString task;
  QByteArray capability; // 32 random bytes, never logged or put in a URL
  QJsonObject panelMetadata;
  // Exact web origins allowed besides desktop VS Code's "vscode-webview://…" (e.g. the
  // code-server origin "http://127.0.0.1:8080" the extension reports on the command line).
  QStringList extraOrigins;
  bool allowMissingOrigin = true; // the Qt viewer sends no Origin
  int helloDeadlineMs = 3000;
  // Connections that have not said hello yet, each with its own deadline. Only a valid hello
  // claims the panel slot; past the bound the OLDEST pending connection is closed, so a
  // squatter that keeps reconnecting cannot keep a fresh panel out (PanelServer.h).
  int maxPendingPanels = 8;
  int maxMessagesPerSecond = 2000;

  bool originAllowed(const QString& origin) const;
};

} // namespace gc
