// DemoRun: the main job end to end on the embedded default, exactly as the real parties do
// it, with no VM and no VS Code:
//   1. the test guest (gc-test-guest) starts on an ephemeral loopback port with a throwaway
//      password; its ready line gives the port, the certificate's SHA-256 and the marker;
//   2. a libvirt test-driver node (DemoNodeXml) declares the demo VM forwarding
//      127.0.0.1:PORT to guest port 3389, plus a running decoy that binding must ignore;
//   3. a fresh grant is issued for it (GrantIssuer; pin from the ready line);
//   4. `guest-console open` runs as a child driven over its control channel like the VS Code
//      extension drives it (credentials line on stdin);
//   5. SETUP: a scripted operator (PanelClient over a real WebSocket) clicks and types, then
//      locks from the panel — or, with --viewer, a person does it in guest-console-viewer;
//   6. `guest-console mcp` runs as a child; MCP initialize, capture_desktop, perform_action
//      with one click; the action closes the console;
//   7. cleanup is proved: run dir gone, evidence chain verified, every child ended (by PID),
//      the temporary directory removed.
// Every step is timed and checked; run() returns 0 only when every check passed.
//
// Thread: the main thread; run() spins local event loops (EventWait) and returns when done.
#pragma once

#include "tools/demo/DemoReport.h"
#include "tools/demo/OperatorScript.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QTemporaryDir>

#include <memory>
#include <optional>

namespace gc::tools {

class ChildProcess;
class PanelClient;

class DemoRun {
public:
  struct Options {
    QString binDir;      // guest-console, guest-console-viewer
    QString guestBinary; // gc-test-guest
    bool viewer = false;
    int viewerTimeoutSeconds = 1800;
    QString jsonReportPath;
  };

  explicit DemoRun(Options options);
  ~DemoRun();

  int run();

private:
  bool prepareDirectories();
  bool startGuest();
  bool writeVm();
  bool issueGrant();
  bool openConsole();
  bool scriptedSetup();
  bool viewerSetup();
  bool captureAndAct();
  void finishConsole();
  void stopChildren();
  void collectGuestInput();
  void verifyEvidence();
  void checkCleanup();

  ChildProcess* spawn(const QString& label, const QString& program, const QStringList& arguments);
  void onConsoleLine(const QJsonObject& line);
  bool phaseSeen(const QString& phase) const;
  bool waitConsole(const std::function<bool()>& condition, int timeoutMs, const QString& what);
  QStringList consoleArgs() const;

  Options m_options;
  DemoReport m_report;
  std::unique_ptr<QTemporaryDir> m_temp;
  QString
      m_issuerKeyPath; // the public half of the key made for this run (the private one never touches disk)
  QString m_runtimeDir, m_stateDir;
  QByteArray m_password; // throwaway, for this demo's guest only; wiped after use

  QList<ChildProcess*> m_children; // owned; in start order
  ChildProcess* m_guest = nullptr;
  ChildProcess* m_console = nullptr;
  ChildProcess* m_relay = nullptr;
  ChildProcess* m_viewer = nullptr;
  std::unique_ptr<PanelClient> m_panel;

  // What the guest, the node and the grant say.
  QJsonObject m_guestReady;
  QString m_vmUuid, m_vmName, m_libvirtUri;
  quint16 m_port = 0;
  QString m_runId, m_taskId, m_grantId, m_grantDigest, m_grantPath, m_mcpTool;
  QString m_evidencePath;

  // What the console said.
  QJsonObject m_ready, m_closed, m_receipt;
  QStringList m_phases;
  QStringList m_errors;
  int m_width = 0, m_height = 0;
  std::optional<OperatorScript> m_script;
  int m_actionX = 0, m_actionY = 0;
};

} // namespace gc::tools
