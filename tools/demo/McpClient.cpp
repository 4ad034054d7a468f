#include "tools/demo/McpClient.h"

#include "tools/demo/ChildProcess.h"
#include "tools/demo/EventWait.h"

#include <QJsonDocument>

namespace gc::tools {

McpClient::McpClient(ChildProcess* relay, QObject* parent) : QObject(parent), m_relay(relay) {
  connect(relay, &ChildProcess::jsonLine, this, &McpClient::onLine);
}

qint64 McpClient::request(const QString& method, const QJsonObject& params) {
  const qint64 id = m_nextId++;
  m_relay->writeLine(QJsonDocument(QJsonObject{{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                                               {QStringLiteral("id"), id},
                                               {QStringLiteral("method"), method},
                                               {QStringLiteral("params"), params}})
                         .toJson(QJsonDocument::Compact));
  return id;
}

void McpClient::notify(const QString& method) {
  m_relay->writeLine(QJsonDocument(QJsonObject{{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                                               {QStringLiteral("method"), method}})
                         .toJson(QJsonDocument::Compact));
}

qint64 McpClient::initialize() {
  return request(QStringLiteral("initialize"),
                 QJsonObject{{QStringLiteral("protocolVersion"), QString::fromLatin1(kProtocolVersion)},
                             {QStringLiteral("capabilities"), QJsonObject{}},
                             {QStringLiteral("clientInfo"),
                              QJsonObject{{QStringLiteral("name"), QStringLiteral("guest-console-demo")},
                                          {QStringLiteral("version"), QStringLiteral("1")}}}});
}

qint64 McpClient::callTool(const QString& name, const QJsonObject& arguments) {
  QJsonObject params{{QStringLiteral("name"), name}};
  if (!arguments.isEmpty()) // tools that take no arguments are called without any
    params.insert(QStringLiteral("arguments"), arguments);
  return request(QStringLiteral("tools/call"), params);
}

std::optional<QJsonObject> McpClient::response(qint64 id) const {
  const auto it = m_responses.constFind(id);
  if (it == m_responses.constEnd())
    return std::nullopt;
  return *it;
}

std::optional<QJsonObject> McpClient::waitForResponse(qint64 id, int timeoutMs) {
  EventWait::until([&] { return m_responses.contains(id) || m_relay->hasExited(); }, timeoutMs);
  return response(id);
}

void McpClient::onLine(const QJsonObject& line) {
  const QJsonValue id = line.value(QStringLiteral("id"));
  if (id.isDouble())
    m_responses.insert(id.toInteger(), line);
}

} // namespace gc::tools
