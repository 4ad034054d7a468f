// The values that cross between the console and its RDP reader process (guest-console-rdp):
// what the console asks the reader to connect to, and what the reader reports back. Plain
// value types; no FreeRDP, no sockets. The console treats every value that came from the
// reader as untrusted: ReaderWire's decoder bounds and checks each one before it exists here.
//
// Thread: value types; any thread.
#pragma once

#include "common/Refusal.h"
#include "privacy/Credentials.h"
#include "privacy/ResidueScrubber.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QMetaType>
#include <QPoint>
#include <QRect>
#include <QSize>
#include <QString>
#include <QStringList>

#include <chrono>
#include <utility>

namespace gc {

// What the Client Core Data asks for (the grant's rdp.desktop and rdp.keyboard_layout);
// 0 leaves FreeRDP's default. The server may still present another size: the console judges.
struct ClientDesktop {
  quint32 width = 0;
  quint32 height = 0;
  quint32 keyboardLayout = 0; // a Windows KLID
  quint32 keyboardType = 0;   // with the layout: MS-RDPBCGR keyboardType/SubType/FunctionKey
  quint32 keyboardSubType = 0;
  quint32 keyboardFunctionKey = 0;
  friend bool operator==(const ClientDesktop&, const ClientDesktop&) = default;
};

// What the reader needs to open one pinned RDP connection to the guest. The TCP connection
// itself is made by the console (after the binding checks) and handed over as a socket.
struct RdpConfig {
  QString host;          // must be 127.0.0.1 (the per-run loopback forward)
  quint16 port = 0;      // the per-run host port
  QByteArray pinSha256;  // SHA-256 of the guest certificate's DER, 32 raw bytes
  bool unpinned = false; // the grant visibly opted out of pinning
  int connectTimeoutMs = 10000;
  ClientDesktop desktop;
  bool sizeFromServer = false; // the grant's rdp.desktop.size_from is "server"
  // In-process sessions only (tests): a private, empty directory for FreeRDP and no socket
  // (FreeRDP connects itself). The reader process has neither: it is given the socket.
  QString configDir;
  int socketFd = -1; // a connected TCP socket to host:port, adopted by the session
};

// Moved into the session's start(); wiped as soon as FreeRDP holds its own copies.
using RdpCredentials = Credentials;

// "The pin is decided before any credential can be sent": how many PDUs the client wrote
// before and after the certificate decision.
struct ConnectTrace {
  bool certificateChecked = false;
  bool certificateAccepted = false;
  int pdusBeforeCertificate = 0;
  int pdusAfterCertificate = 0;
  bool socketConnected = false; // the TCP connection to the guest was established
};

// How the reader paces the guest's frames (rdp/FramePacer.h): Unpaced (every
// frame acknowledged at once), NoPanel (nobody looks: a bounded rate, Suppress Output),
// Panel (no faster than the panel presents).
enum class PacingMode : quint8 { Unpaced = 0, NoPanel = 1, Panel = 2 };
QString pacingModeName(PacingMode mode); // "unpaced", "no_panel", "panel"

// The lock's guest sync (rdp/GuestSync.h): its timing, and what happened.
struct SyncTiming {
  std::chrono::milliseconds deadline{5000};   // for the whole sync
  std::chrono::milliseconds quiet{200};       // no changed pixel for this long = settled
  std::chrono::milliseconds answerWait{1500}; // then an unanswered request falls back to the settle
  // Whether the ladder may ask gfx_caps: the CapsAdvertise sent again restarts the server's
  // graphics pipeline, and gnome-remote-desktop ends the session over one that keeps AVC off.
  // Asked only when the lock needs the guest's answer (the grant's strict default).
  bool mayRestartGraphics = true;
};
// What confirmed the drained input: one of the ladder's rungs (GuestSync), each a request the
// guest's server must answer after the input before it, or the quiet screen alone. The values
// are the wire's (an unknown byte is refused, never mapped).
enum class SyncConfirmation : quint8 { SettleOnly = 0, RefreshRect = 1, SuppressOutput = 2, GfxCaps = 3 };
// "settle_only", "refresh_rect", "suppress_output", "gfx_caps"
QString syncConfirmationName(SyncConfirmation c);
// The rungs as bits of SyncResult's sets (SettleOnly is no rung).
constexpr quint8 syncRungBit(SyncConfirmation c) {
  return c == SyncConfirmation::SettleOnly ? quint8(0) : quint8(1u << (quint8(c) - 1));
}
struct SyncResult {
  bool refreshSupported = false;
  bool answered = false;
  bool settled = false;
  SyncConfirmation confirmedBy = SyncConfirmation::SettleOnly;
  qint64 answerMs = -1; // the confirming request → its answer, when answered
  qint64 elapsedMs = 0;
  // Sets of syncRungBit(): the rungs the server advertised, those asked in this sync, and
  // those left out because they went unanswered at an earlier lock of the session.
  quint8 rungsOffered = 0;
  quint8 rungsAsked = 0;
  quint8 rungsSkipped = 0;
};

// The virtual channels of a session: static joined, the graphics pipeline, dynamic opened and
// refused (rdp/ChannelReport.h collects it in the reader).
struct ChannelSnapshot {
  static constexpr int kMaxNameLength = 64;
  static constexpr int kMaxDistinctNames = 16;
  static constexpr int kMaxGfxCommands = 32; // MS-RDPEGFX has 23 PDU types

  QStringList staticRequested;    // the Connect Initial's channel list
  QStringList staticJoined;       // those the server assigned (and the client joined)
  QStringList advertisedCodecs;   // what the client offered the graphics pipeline
  bool gfxAdvertised = false;     // the server's negotiation response: DYNVC_GFX_PROTOCOL_SUPPORTED
  bool gfxOpened = false;         // the RDPGFX channel opened and is decoded
  quint32 gfxCapsVersion = 0;     // RDPGFX_CAPVERSION_* the server confirmed; 0: none
  QStringList gfxCodecsUsed;      // codec of every surface command seen
  quint64 gfxFrames = 0;          // End Frame PDUs decoded
  QMap<QString, int> gfxCommands; // RDPGFX command (our fixed names) -> times executed
  QStringList dynamicOpened;      // dynamic channels opened (at most the pipeline)
  QMap<QString, int> refused;     // sanitised name -> create requests refused
  int refusedOverflow = 0;        // refused creates for names beyond kMaxDistinctNames
  int refusedTotal() const;

  QJsonObject connectedJson() const; // for the `connected` evidence entry
  QJsonObject closedJson() const;    // for the `closed` evidence entry
  // A channel name as the evidence may carry it: printable ASCII (others as '?'), at most
  // kMaxNameLength characters (longer ones cut and marked '~').
  static QString sanitise(QByteArrayView raw);
  // True when every name is what sanitise() can produce and the counts are in bounds: the
  // console checks what the reader reports.
  bool wellFormed() const;
};

// Why the reader stopped a session on the guest's bytes (rdp/front/Violation.h), as the
// evidence records it: the PDU kind and the rule, both the reader's own static strings.
struct ProtocolViolation {
  Refusal code = Refusal::RdpProtocolViolation; // or RdpResourceLimit, RdpDesktopMismatch
  QString pdu;
  QString rule;
  // A desktop size the guest named and the reader refused before anything was allocated for
  // it (empty otherwise): the console judges and records it like any presented size.
  QSize desktop;
  bool isSet() const { return !pdu.isEmpty(); }
};

} // namespace gc
