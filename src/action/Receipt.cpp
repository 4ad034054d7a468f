#include "action/Receipt.h"

namespace gc {

QString Receipt::resultName(Result result) {
  return result == Result::Executed ? QStringLiteral("executed") : QStringLiteral("failed");
}

QString Receipt::confirmationName(Confirmation c) {
  switch (c) {
  case Confirmation::Confirmed:
    return QStringLiteral("guest_confirmed");
  case Confirmation::Unconfirmed:
    return QStringLiteral("unconfirmed");
  case Confirmation::NotAttempted:
    break;
  }
  return QStringLiteral("not_attempted");
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
  if (!coordinateSpace.isEmpty()) {
    json.insert(QStringLiteral("coordinate_space"), coordinateSpace);
    json.insert(QStringLiteral("mapped_to"), mappedTo);
    json.insert(QStringLiteral("mapping"), mapping);
  }
  json.insert(QStringLiteral("candidate"),
              hasCandidate ? QJsonValue(QJsonObject{{QStringLiteral("id"), candidateId},
                                                    {QStringLiteral("label"), candidateLabel},
                                                    {QStringLiteral("action"), action}})
                           : QJsonValue(QJsonValue::Null));
  if (!lockConfirmation.isEmpty())
    json.insert(QStringLiteral("lock_confirmation"), lockConfirmation);
  json.insert(QStringLiteral("dialect"),
              dialect.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(dialect));
  json.insert(QStringLiteral("original"),
              dialect.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(original));
  json.insert(QStringLiteral("guest_confirmed"), confirmation == Confirmation::Confirmed);
  json.insert(QStringLiteral("confirmation"), confirmationName(confirmation));
  json.insert(QStringLiteral("guest_confirmed_at"), confirmation == Confirmation::Confirmed
                                                        ? QJsonValue(confirmedAt.toString(Qt::ISODateWithMs))
                                                        : QJsonValue(QJsonValue::Null));
  if (confirmMs >= 0)
    json.insert(QStringLiteral("confirm_ms"), confirmMs);
  if (release.attempted) {
    QJsonObject r{{QStringLiteral("ok"), release.ok},
                  {QStringLiteral("keys_released"), release.keys},
                  {QStringLiteral("buttons_released"), release.buttons}};
    if (release.failure)
      r.insert(QStringLiteral("code"), refusalName(release.failure->code));
    json.insert(QStringLiteral("released"), r);
  }
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
