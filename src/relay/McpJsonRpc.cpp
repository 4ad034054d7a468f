#include "relay/McpJsonRpc.h"

#include "common/StrictJson.h"

#include <QJsonDocument>

#include <cmath>

namespace gc {
namespace {

QByteArray line(const QJsonObject& message) {
  return QJsonDocument(message).toJson(QJsonDocument::Compact) + '\n';
}

bool isIntegral(const QJsonValue& v) {
  const double d = v.toDouble();
  // Within ±2^53 a double holds every integer exactly, so the key below is unambiguous.
  return v.isDouble() && std::isfinite(d) && std::floor(d) == d && std::fabs(d) <= 9007199254740992.0;
}

} // namespace

std::variant<McpJsonRpc::Message, McpJsonRpc::Error> McpJsonRpc::parse(const QByteArray& text) {
  const QByteArray trimmed = text.trimmed();
  if (trimmed.startsWith('['))
    return Error{InvalidRequest, QStringLiteral("batches are not supported"), QJsonValue::Null};
  const Outcome<QJsonObject> parsed = StrictJson::parseObject(text, kMaxMessageBytes, 64);
  if (!parsed) {
    if (parsed.code() == Refusal::ProtocolOversize)
      return Error{InvalidRequest, QStringLiteral("message too large"), QJsonValue::Null};
    return Error{ParseError, QStringLiteral("parse error: %1").arg(parsed.failure().message),
                 QJsonValue::Null};
  }
  const QJsonObject& json = parsed.value();
  const bool hasId = json.contains(QStringLiteral("id"));
  const QJsonValue id = json.value(QStringLiteral("id"));
  const bool idValid = id.isString() || isIntegral(id);
  Error invalid{InvalidRequest, QString(), idValid ? id : QJsonValue(QJsonValue::Null)};

  if (json.value(QStringLiteral("jsonrpc")).toString() != u"2.0") {
    invalid.message = QStringLiteral("jsonrpc must be \"2.0\"");
    return invalid;
  }
  Message message;
  if (!json.contains(QStringLiteral("method"))) {
    // A response to a request of ours; we send none, so it is read and dropped.
    if (!hasId || !(json.contains(QStringLiteral("result")) || json.contains(QStringLiteral("error")))) {
      invalid.message = QStringLiteral("neither a request nor a response");
      return invalid;
    }
    message.kind = Message::Kind::Response;
    message.id = id;
    return message;
  }
  const QJsonValue method = json.value(QStringLiteral("method"));
  if (!method.isString() || method.toString().isEmpty()) {
    invalid.message = QStringLiteral("method must be a non-empty string");
    return invalid;
  }
  const QJsonValue params = json.value(QStringLiteral("params"));
  if (!params.isUndefined() && !params.isObject()) {
    invalid.message = QStringLiteral("params must be an object");
    return invalid;
  }
  for (auto it = json.constBegin(); it != json.constEnd(); ++it) {
    if (it.key() != u"jsonrpc" && it.key() != u"id" && it.key() != u"method" && it.key() != u"params") {
      invalid.message = QStringLiteral("unknown member in request");
      return invalid;
    }
  }
  message.method = method.toString();
  message.params = params.toObject();
  if (!hasId) {
    message.kind = Message::Kind::Notification;
    return message;
  }
  if (!idValid) {
    invalid.message = QStringLiteral("id must be a string or an integer");
    return invalid;
  }
  const QString key = id.isString() ? QStringLiteral("s:") + id.toString()
                                    : QStringLiteral("n:") + QString::number(qint64(id.toDouble()));
  if (m_usedIds.contains(key)) {
    invalid.message = QStringLiteral("request id already used in this session");
    return invalid;
  }
  m_usedIds.insert(key);
  message.kind = Message::Kind::Request;
  message.id = id;
  return message;
}

QByteArray McpJsonRpc::result(const QJsonValue& id, const QJsonObject& result) {
  return line({{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
               {QStringLiteral("id"), id},
               {QStringLiteral("result"), result}});
}

QByteArray McpJsonRpc::error(const Error& error) {
  return line({{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
               {QStringLiteral("id"), error.id},
               {QStringLiteral("error"), QJsonObject{{QStringLiteral("code"), error.code},
                                                     {QStringLiteral("message"), error.message}}}});
}

} // namespace gc
