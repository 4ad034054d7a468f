// Grant: a parsed, validated version-1 grant (docs/grant.md). Only GrantLoader makes these
// from untrusted bytes; every field here has passed the schema and freshness checks.
//
// Thread: a value type; use from any thread.
#pragma once

#include "grant/Candidate.h"
#include "grant/CaptureBound.h"
#include "grant/KeyboardLayout.h"

#include <QByteArray>
#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace gc {

struct Grant {
  struct Vm {
    QString uuid; // lowercase canonical 8-4-4-4-12
    QString name;
    QString libvirtUri;
  };
  // rdp.desktop and rdp.keyboard_layout: the screen the model sees is part of the task.
  struct Desktop {
    static constexpr int kMin = 200;
    static constexpr int kMax = 8192;
    static constexpr int kDefaultWidth = 1920;
    static constexpr int kDefaultHeight = 1080;
    enum class SizeFrom { Grant, Server };

    int width = kDefaultWidth; // even, kMin..kMax
    int height = kDefaultHeight;
    SizeFrom sizeFrom = SizeFrom::Grant; // Server: the size the server presents is taken and recorded
    quint32 keyboardLayout = KeyboardLayout::kDefault; // a Windows KLID

    static QString sizeFromName(SizeFrom from) {
      return from == SizeFrom::Server ? QStringLiteral("server") : QStringLiteral("grant");
    }
  };
  struct Rdp {
    QString host; // always "127.0.0.1"
    quint16 port = 0;
    quint16 guestPort = 0;
    QByteArray certSha256; // 32 raw bytes; empty iff unpinned
    bool unpinned = false; // the grant visibly opted out of pinning; the panel warns
    Desktop desktop;       // the defaults when the grant names none
  };
  struct Panel {
    QString title;
    QJsonObject metadata; // every panel field as given, title included
  };
  struct Mcp {
    QString server;
    QString tool;
  };
  // How the guest must confirm, at the lock, that it processed the drained input before
  // Capture Desktop may start (docs/grant.md "lock").
  struct Lock {
    enum class Confirmation {
      Guest, // the guest answered the console's Refresh Rect after the last input (the default)
      Settle // a screen that stayed quiet is enough: weaker, opted into, labelled everywhere
    };
    Confirmation confirmation = Confirmation::Guest;
    static QString confirmationName(Confirmation c) {
      return c == Confirmation::Settle ? QStringLiteral("settle") : QStringLiteral("guest");
    }
  };

  int version = 0;
  QString grantId; // lowercase canonical UUID
  QString runId;
  QString taskId;
  QDateTime issuedAt;  // UTC
  QDateTime expiresAt; // UTC
  Vm vm;
  Rdp rdp;
  Panel panel;
  Mcp mcp;
  Lock lock;
  CaptureBound capture;        // the `capture` section; default: the desktop's size
  QList<Candidate> candidates; // empty when the grant has no "action"
  ActionPolicy actionPolicy;   // action.kinds / limits / text_input; default: the original four
  QByteArray digestHex;        // SHA-256 of the exact file bytes, lowercase hex
  bool signed_ = false;        // a configured issuer key verified the signature

  bool hasCandidates() const { return !candidates.isEmpty(); }
  // nullptr when no candidate has this id.
  const Candidate* candidate(QStringView id) const;
  // "aa:bb:…" form for display; empty when unpinned.
  QString certSha256Display() const;
};

} // namespace gc
