// Console -> panel text messages as the viewer reads them (resources/protocol/panel-protocol.json,
// "consoleToPanel"). Parsing is as strict as the console's own parser of panel messages
// (bridge/panel/PanelMessage.h): one object, "type" first, exact field sets, exact types,
// known phases and refusal codes only. A debugging viewer that tolerated drift would hide it.
//
// Thread: reentrant value types and free functions; use from any thread.
#pragma once

#include "common/Outcome.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <variant>

namespace gc::viewer {

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

// Parses one console -> panel text message. Refuses with PROTOCOL_OVERSIZE or
// PROTOCOL_MALFORMED (unknown types included: the console never sends them).
Outcome<ConsoleMessage> parseConsoleMessage(const QByteArray& text);

} // namespace gc::viewer
