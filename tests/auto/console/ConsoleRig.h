#pragma once
// A console under test, in-process: a real test guest (FreeRDP server), a libvirt
// test-driver node file naming it, a fresh grant, the console's control channel on pipes,
// and a real WebSocket panel. Thread: the test thread.

#include "../testguest/GuestProcess.h"
#include "console/Console.h"
#include "session/ControlChannel.h"
#include "vm/LibvirtEventLoop.h"

#include <QImage>
#include <QJsonObject>
#include <QRegion>
#include <QSize>
#include <QTemporaryDir>
#include <QWebSocket>

#include <memory>

struct GrantSpec {
  int lifetimeSeconds = 600;
  QString pin; // empty: the guest's
  bool readWriteLibvirt = false;
  QString password = QStringLiteral("throwaway-pw");
  bool signGrant = true;      // with the rig's own issuer key (made per rig)
  bool allowUnsigned = false; // the console's --allow-unsigned-grants
  // rdp.desktop: small under ASan (the product's default is 1920x1080); an invalid size
  // leaves the field out. sizeFrom/keyboardLayout: empty leaves them out.
  QSize desktop{1024, 768};
  QString sizeFrom = QString();
  QString keyboardLayout = QString();
  QString lockConfirmation = QString(); // lock.confirmation; empty leaves "lock" out
  QJsonObject action =
      QJsonObject(); // the grant's "action" block (issue 25: kinds, limits); empty leaves it out
  QJsonObject capture = QJsonObject(); // the grant's "capture" section (issue 25.4); empty leaves it out
};

class ConsoleRig {
public:
  // How far openSession() goes: the console open (waiting for credentials), logged in to the
  // guest, or with a panel connected and welcomed as well.
  enum class Reach { Opened, LoggedIn, Panel };

  explicit ConsoleRig(GrantSpec spec = {});
  ~ConsoleRig();

  // startGuest() + writeGrant(): everything a console needs before it opens.
  bool prepare(const QStringList& guestArgs = {});
  // prepare(), openConsole(), then as far as `reach`. False names the failed step in `failure`.
  bool openSession(Reach reach = Reach::Panel, const QStringList& guestArgs = {});
  QString failure;

  bool startGuest(const QStringList& extraArgs = {});
  QString writeGrant();
  gc::Status openConsole();
  // Control channel, parent side.
  void sendControl(const QByteArray& line);
  void closeControlInput(); // the parent goes away: stdin EOF
  QList<QJsonObject> controlEvents(const QString& name) const;
  bool waitControl(const QString& name, int count = 1, int timeoutMs = 15000);
  bool waitPhase(const QString& phase, int timeoutMs = 15000);
  // Logs in with the spec's password and waits for the guest session.
  bool connectGuest();
  // A panel that said the right hello and got its welcome.
  bool connectPanel();
  QList<QJsonObject> panelMessages(const QString& type) const;

  GrantSpec spec;
  QTemporaryDir dir;
  GuestProcess guest;
  QString uuid;
  QString runId;
  QString grantPath;
  QString ledgerDir; // the rig's own consumed-grants ledger (the product's is per user)
  QByteArray issuerPublicPem;
  std::unique_ptr<gc::LibvirtEventLoop> events;
  std::unique_ptr<gc::ControlChannel> control;
  std::unique_ptr<gc::Console> console;
  QWebSocket panel;
  QList<QJsonObject> panelReceived;
  int framesReceived = 0;
  bool ackFrames = true;       // false: a panel that stopped acknowledging
  QList<QRegion> frameRegions; // what each received frame update covered
  quint32 lastFrameId = 0;
  QImage canvas; // the panel's picture, from the binary frame updates
  bool finished = false;

private:
  void readControl();
  int m_parentWrite = -1, m_parentRead = -1, m_consoleRead = -1, m_consoleWrite = -1;
  QByteArray m_issuerPrivatePem; // lives only in this process's memory
  QByteArray m_pending;
  QList<QJsonObject> m_control;
};

// The run's evidence log (the first *.jsonl under the rig's state dir) and its entries of one
// event, in order; empty when there is none yet.
QString evidenceFile(const ConsoleRig& rig);
QList<QJsonObject> evidenceEntries(const ConsoleRig& rig, const QString& event);
