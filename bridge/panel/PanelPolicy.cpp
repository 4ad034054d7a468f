#include "bridge/panel/PanelPolicy.h"

#include <QRegularExpression>

namespace gc {

bool PanelPolicy::originAllowed(const QString& origin) const {
  if (origin.isEmpty())
    return allowMissingOrigin;
  // Desktop VS Code serves each webview from vscode-webview://<uuid-ish authority>.
  static const QRegularExpression webview(QStringLiteral("^vscode-webview://[A-Za-z0-9.-]{1,128}$"));
  if (webview.match(origin).hasMatch())
    return true;
  return extraOrigins.contains(origin);
}

} // namespace gc
