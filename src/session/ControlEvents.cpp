#include "session/ControlEvents.h"

namespace gc::control {

Event ready(const QString& run, const QString& task, const QString& vm, const QJsonObject& identity,
            quint16 panelPort, const QByteArray& capabilityHex) {
  return {QStringLiteral("ready"),
          QJsonObject{{QStringLiteral("run"), run},
                      {QStringLiteral("task"), task},
                      {QStringLiteral("vm"), vm},
                      {QStringLiteral("identity"), identity},
                      {QStringLiteral("panel"),
                       QJsonObject{{QStringLiteral("port"), int(panelPort)},
                                   {QStringLiteral("capability"), QString::fromLatin1(capabilityHex)}}}}};
}

Event credentialsRequired(const QJsonValue& username, const QJsonValue& domain, int attempt,
                          int maxAttempts) {
  QJsonObject fields{{QStringLiteral("attempt"), attempt}, {QStringLiteral("max_attempts"), maxAttempts}};
  if (username.isString())
    fields.insert(QStringLiteral("username"), username);
  if (domain.isString())
    fields.insert(QStringLiteral("domain"), domain);
  return {QStringLiteral("credentials_required"), fields};
}

Event phase(Phase phase, const QString& reason) {
  return {QStringLiteral("phase"),
          QJsonObject{{QStringLiteral("phase"), phaseName(phase)}, {QStringLiteral("reason"), reason}}};
}

Event drained(quint64 upto) {
  return {QStringLiteral("drained"), QJsonObject{{QStringLiteral("upto"), qint64(upto)}}};
}

Event receipt(const QJsonObject& receipt) {
  return {QStringLiteral("receipt"), receipt};
}

Event error(Refusal code, const QString& message, const QString& evidencePath) {
  QJsonObject fields{{QStringLiteral("code"), refusalName(code)}, {QStringLiteral("message"), message}};
  if (!evidencePath.isEmpty())
    fields.insert(QStringLiteral("evidence"), evidencePath);
  return {QStringLiteral("error"), fields};
}

Event closed(Refusal reason, const QString& message, const QByteArray& evidenceHead,
             const QString& evidencePath) {
  return {QStringLiteral("closed"),
          QJsonObject{{QStringLiteral("reason"), refusalName(reason)},
                      {QStringLiteral("message"), message},
                      {QStringLiteral("evidence_head"), QString::fromLatin1(evidenceHead)},
                      {QStringLiteral("evidence"), evidencePath}}};
}

} // namespace gc::control
