// RelayWire: the one definition of the seven messages between the console (ActionSocketServer)
// and `guest-console mcp` (RelayConnection) on the run's Unix socket: one JSON object per
// line, `type` first. Each message lists its fields once, in fields(); that one list is both
// the writer (encode) and the reader (decode) at both ends, as ReaderWire's is for the reader.
// decode() is strict: the type must be the message's, every field present with its JSON type,
// no other key; anything else is PROTOCOL_MALFORMED.
//
//   console → relay  Hello   {"type":"hello","protocol":1,"run":R,"server":S,"tool":T,
//                             "candidates":[ids…],"expires_at":RFC3339}   (on accept; no ids:
//                             a free action)
//   relay → console  Bind    {"type":"bind","server":S,"tool":T}   (what the relay will serve)
//   console → relay  Bound   {"type":"bound"}                      (calls are accepted from now)
//   relay → console  Call    {"type":"call","id":N,"op":OP,"arguments":{…}}
//   console → relay  Result  {"type":"result","id":N,"result":{…}}
//                    Error   {"type":"error","id":N,"code":C,"message":M[,"receipt":{…}]}
//                    Refused {"type":"refused","code":C,"message":M}   then the console closes
//
// Thread: value types and pure functions; any thread.
#pragma once

#include "common/Outcome.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <optional>
#include <variant>

namespace gc::relay {

struct Hello {
  static constexpr const char* kType = "hello";
  qint64 protocol = 0;
  QString run, server, tool;
  QStringList candidates;
  QString expiresAt;
  template <typename F> void fields(F& f) {
    f("protocol", protocol), f("run", run), f("server", server), f("tool", tool), f("candidates", candidates),
        f("expires_at", expiresAt);
  }
};
struct Bind {
  static constexpr const char* kType = "bind";
  QString server, tool;
  template <typename F> void fields(F& f) { f("server", server), f("tool", tool); }
};
struct Bound {
  static constexpr const char* kType = "bound";
  template <typename F> void fields(F&) {}
};
struct Call {
  static constexpr const char* kType = "call";
  qint64 id = 0;
  QString op;
  QJsonObject arguments;
  template <typename F> void fields(F& f) { f("id", id), f("op", op), f("arguments", arguments); }
};
struct Result {
  static constexpr const char* kType = "result";
  qint64 id = 0;
  QJsonObject result;
  template <typename F> void fields(F& f) { f("id", id), f("result", result); }
};
struct Error {
  static constexpr const char* kType = "error";
  qint64 id = 0;
  QString code, message;
  std::optional<QJsonObject> receipt; // a failed action's receipt
  template <typename F> void fields(F& f) {
    f("id", id), f("code", code), f("message", message), f("receipt", receipt);
  }
};
struct Refused {
  static constexpr const char* kType = "refused";
  QString code, message;
  template <typename F> void fields(F& f) { f("code", code), f("message", message); }
};

using ToRelay = std::variant<Hello, Bound, Result, Error, Refused>;
using FromRelay = std::variant<Bind, Call>;

QJsonObject encode(const ToRelay& message);
QJsonObject encode(const FromRelay& message);
// What the console accepts from the relay, and what the relay accepts from the console.
Outcome<FromRelay> decodeFromRelay(const QJsonObject& line);
Outcome<ToRelay> decodeToRelay(const QJsonObject& line);

} // namespace gc::relay
