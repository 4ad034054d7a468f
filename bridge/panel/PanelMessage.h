// The panel protocol's messages (resources/protocol/panel-protocol.json is the source of
// truth; tst_panelprotocol keeps this file and vscode-extension/shared/protocol.ts in step
// with it). Parsing is strict: exact field sets, exact types, "type" as the first key,
// size-bounded; everything else is a typed refusal.
//
// Thread: reentrant value types and free functions; use from any thread.
#pragma once

#include "common/Outcome.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>

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
};
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

} // namespace gc::panel
