// GrantDraft: everything a version-1 grant says, before it is rendered to bytes. Filled in
// by IssueGrantCommand from the command line (or directly by tests); GrantIssuer renders it
// and checks the result with the console's own GrantLoader.
//
// Thread: a value type; use from any thread.
#pragma once

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QPair>
#include <QString>

namespace gc::tools {

struct GrantDraft {
  struct Candidate {
    QString id;
    QString label;
    QJsonObject action; // {"type":"click","x":1,"y":2} or {"type":"key_chord","keys":[…]}
  };

  QString grantId; // UUID, lowercase
  QString runId;
  QString taskId;
  QDateTime issuedAt;  // UTC, whole seconds
  QDateTime expiresAt; // UTC, whole seconds
  QString vmUuid;
  QString vmName;
  QString libvirtUri;
  quint16 port = 0;
  QString certSha256; // 64 lowercase hex digits; empty iff insecureNoCertPin
  bool insecureNoCertPin = false;
  int desktopWidth = 0; // 0: no rdp.desktop (the loader's default, 1920x1080)
  int desktopHeight = 0;
  QString desktopSizeFrom; // empty: no size_from (the loader's default, "grant")
  QString keyboardLayout;  // "0x00000409"; empty: no rdp.keyboard_layout (default 0x00000409)
  QString title;
  QList<QPair<QString, QString>> panelFields; // besides the title, in the order given
  QString mcpServer = QStringLiteral("guest-console");
  QString mcpTool = QStringLiteral("perform_action");
  QList<Candidate> candidates; // empty: the grant has no "action"
  QString lockConfirmation;    // "guest" or "settle"; empty: no "lock" (the loader's default, guest)
  int captureWidth = 0;        // capture.size; 0: none
  int captureHeight = 0;
  int captureLongEdge = 0; // capture.long_edge; 0: none (neither: no "capture", the desktop's size)
};

} // namespace gc::tools
