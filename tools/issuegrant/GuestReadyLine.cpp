#include "tools/issuegrant/GuestReadyLine.h"

#include "common/StrictJson.h"
#include "tools/issuegrant/GrantIssuer.h"

namespace gc::tools {

Outcome<QString> GuestReadyLine::certSha256(const QByteArray& text) {
  for (const QByteArray& raw : text.split('\n')) {
    const QByteArray line = raw.trimmed();
    if (!line.startsWith('{'))
      continue;
    const auto object = StrictJson::parseObject(line, kMaxLineBytes);
    if (!object || object->value(QStringLiteral("event")).toString() != QStringLiteral("ready"))
      continue;
    const QString cert =
        GrantIssuer::normalizeCertSha256(object->value(QStringLiteral("cert_sha256")).toString());
    if (cert.isEmpty())
      return Failure{Refusal::ProtocolMalformed, QStringLiteral("the ready line has no valid cert_sha256")};
    return cert;
  }
  return Failure{Refusal::ProtocolMalformed, QStringLiteral("no {\"event\":\"ready\",…} line found")};
}

} // namespace gc::tools
