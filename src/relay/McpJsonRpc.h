// McpJsonRpc: JSON-RPC 2.0 as MCP's stdio transport uses it — one message per line, UTF-8,
// no batches (removed in MCP 2025-06-18). Parses strictly (StrictJson: no duplicate keys,
// no invalid UTF-8), classifies a message as request, notification or response, and keeps
// the session's request ids: an id may be used once (MCP: "MUST NOT have been previously
// used by the requestor within the same session"), so a replayed request is refused.
//
// Thread: one instance per session, used from one thread.
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QSet>
#include <QString>

#include <variant>

namespace gc {

class McpJsonRpc {
public:
  static constexpr qsizetype kMaxMessageBytes = 1024 * 1024;

  enum ErrorCode {
    ParseError = -32700,
    InvalidRequest = -32600,
    MethodNotFound = -32601,
    InvalidParams = -32602,
    InternalError = -32603,
  };

  struct Message {
    enum class Kind { Request, Notification, Response };
    Kind kind = Kind::Request;
    QJsonValue id; // string or integer; undefined for notifications
    QString method;
    QJsonObject params;
  };
  struct Error {
    int code = InvalidRequest;
    QString message;
    QJsonValue id = QJsonValue::Null; // the request's id when it could be read
  };

  // One line without its newline. A request's id is recorded as used once it parses.
  std::variant<Message, Error> parse(const QByteArray& line);

  // Response lines, newline-terminated.
  static QByteArray result(const QJsonValue& id, const QJsonObject& result);
  static QByteArray error(const Error& error);

private:
  QSet<QString> m_usedIds;
};

} // namespace gc
