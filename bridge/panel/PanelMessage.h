// The panel protocol's messages, both directions, for both ends (resources/protocol/
// panel-protocol.json is the source of truth; tst_panelserver keeps this file and
// vscode-extension/shared/protocol.ts in step with it): the console parses what panels send
// and writes what they read; the C++ panels (the Qt viewer, the demo, the bench) parse what
// the console sends and write what it reads, with the same validators. Parsing is strict:
// exact field sets, exact types, "type" as the first key, size-bounded; everything else is
// a typed refusal.
//
// Thread: reentrant value types and free functions; use from any thread.
#pragma once

#include "common/Outcome.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <variant>

namespace gc::panel {

inline constexpr int kProtocolVersion = 1;
inline constexpr qsizetype kMaxTextMessageBytes = 4096;
inline constexpr int kHelloDeadlineMs = 3000;
inline constexpr int kMaxUnackedFrames = 2;
inline constexpr int kMaxMessagesPerSecond = 2000;

struct Hello {
  QString run;
  QString task;
  QByteArray capability; // 32 raw bytes
  QString clientKind;
  QString clientVersion;
  QJsonObject panel; // optional metadata the panel shows; must match the grant's
  // Optional frame features the panel can apply (hello "features"; names it does not know
  // are ignored by the console, so a newer panel still talks to an older console).
  bool copyRect = false; // "copy_rect": GCF1 copy records (bridge/frames/FrameReader.h)
};

// The hello "features" this console understands.
inline constexpr char kFeatureCopyRect[] = "copy_rect";
inline constexpr int kMaxFeatures = 16;
struct Key {
  quint64 seq = 0;
  quint16 scancode = 0;
  bool down = false;
};
struct Pointer {
  quint64 seq = 0;
  quint16 x = 0;
  quint16 y = 0;
  quint8 buttons = 0;
  qint16 wheel = 0;
};
struct FrameAck {
  quint32 frame = 0;
};
// The panel could not paint frame `frame` (0: its header was unreadable); its picture no
// longer matches what the console sent, so it asks for the whole desktop again.
struct FrameRefresh {
  quint32 frame = 0;
};
struct Lock {};
struct Close {};

using Message = std::variant<Hello, Key, Pointer, FrameAck, FrameRefresh, Lock, Close>;

// Types the console knows and refuses on purpose (ROUTE_FORBIDDEN), so a panel that tries
// them is told so and the attempt is counted as such, not as "unknown".
bool isForbiddenRoute(const QString& type);

// Parses one text message from the panel.
Outcome<Message> parse(const QByteArray& text);

// Console → panel text messages; "type" first.
QByteArray welcome(const QString& run, const QString& task, const QString& vm, const QJsonObject& identity,
                   const QString& phase, int width, int height);
QByteArray phase(const QString& phase, const QString& reason);
QByteArray inputAck(quint64 upto);
QByteArray inputRefused(quint64 seq, Refusal code);
QByteArray drained(quint64 upto);
QByteArray error(Refusal code, const QString& message);
QByteArray bye(const QString& reason);

// Panel → console text messages, as the C++ panels write them. The hello carries the
// capability: the caller wipes the returned bytes once sent.
struct HelloFields {
  QString run;
  QString task;
  QByteArray capabilityHex; // 64 lowercase hex digits
  QString clientKind;
  QString clientVersion;
  QJsonObject panel;    // omitted when empty
  QStringList features; // omitted when empty
};
QByteArray hello(const HelloFields& fields);
QByteArray key(quint64 seq, quint16 scancode, bool down);
QByteArray pointer(quint64 seq, quint16 x, quint16 y, quint8 buttons, qint16 wheel);
QByteArray frameAck(quint32 frame);
QByteArray frameRefresh(quint32 frame);
QByteArray lock();
QByteArray close();

// Console → panel messages as a panel reads them ("consoleToPanel"): known phases and
// refusal codes only; unknown types are refused (the console never sends them).
struct Welcome {
  QString run;
  QString task;
  QString vm;
  QJsonObject identity; // redacted by the console: digests and fingerprints only
  QString phase;
  int width = 0;
  int height = 0;
  int protocol = 0;
};
struct PhaseChange {
  QString phase;
  QString reason;
};
struct InputAck {
  quint64 upto = 0;
};
struct InputRefused {
  quint64 seq = 0;
  QString code;
};
struct Drained {
  quint64 upto = 0;
};
struct ConsoleError {
  QString code;
  QString message;
};
struct Bye {
  QString reason;
};
using ConsoleMessage = std::variant<Welcome, PhaseChange, InputAck, InputRefused, Drained, ConsoleError, Bye>;

// The protocol's phases, in order.
const QStringList& phaseNames();

// Parses one console → panel text message (PROTOCOL_OVERSIZE or PROTOCOL_MALFORMED).
Outcome<ConsoleMessage> parseConsoleMessage(const QByteArray& text);

} // namespace gc::panel
