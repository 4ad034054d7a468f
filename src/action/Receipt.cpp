#include "action/Receipt.h"

namespace gc {

QString Receipt::resultName(Result result) {
  return result == Result::Executed ? QStringLiteral("executed") : QStringLiteral("failed");
}

QJsonObject Receipt::body() const {
  QJsonObject json{{QStringLiteral("grant_digest"), grantDigest},
                   {QStringLiteral("run"), runId},
                   {QStringLiteral("task"), taskId},
                   {QStringLiteral("vm_uuid"), vmUuid},
                   {QStringLiteral("vm_name"), vmName},
                   {QStringLiteral("mcp_server"), mcpServer},
                   {QStringLiteral("mcp_tool"), mcpTool},
                   {QStringLiteral("action"), action},
                   {QStringLiteral("action_spec"), actionJson},
                   {QStringLiteral("event_id"), eventId},
                   {QStringLiteral("outcome"), resultName(result)},
                   {QStringLiteral("events_sent"), eventsSent},
                   {QStringLiteral("desktop"), QJsonObject{{QStringLiteral("width"), desktop.width()},
                                                           {QStringLiteral("height"), desktop.height()}}},
                   {QStringLiteral("time"), time.toString(Qt::ISODateWithMs)}};
  json.insert(QStringLiteral("candidate"),
              hasCandidate ? QJsonValue(QJsonObject{{QStringLiteral("id"), candidateId},
                                                    {QStringLiteral("label"), candidateLabel},
                                                    {QStringLiteral("action"), action}})
                           : QJsonValue(QJsonValue::Null));
  if (!lockConfirmation.isEmpty())
    json.insert(QStringLiteral("lock_confirmation"), lockConfirmation);
  if (failure)
    json.insert(QStringLiteral("failure"), QJsonObject{{QStringLiteral("code"), refusalName(failure->code)},
                                                       {QStringLiteral("message"), failure->message}});
  return json;
}

QJsonObject Receipt::toJson() const {
  QJsonObject json = body();
  json.insert(QStringLiteral("evidence_head"), QString::fromLatin1(evidenceHead));
  return json;
}

} // namespace gc
