#include "tools/issuegrant/GrantIssuer.h"

#include "grant/GrantLoader.h"

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QUuid>

#include <chrono>
#include <limits>

namespace gc::tools {

namespace {

using Members = QList<QPair<QString, QByteArray>>; // key, rendered JSON value

// One JSON value as compact text. Qt escapes strings correctly; wrapping the value in an
// array and stripping the brackets reuses that without a hand-written escaper.
QByteArray scalar(const QJsonValue& value) {
  const QByteArray text = QJsonDocument(QJsonArray{value}).toJson(QJsonDocument::Compact);
  return text.mid(1, text.size() - 2);
}

QByteArray compact(const QJsonObject& object) {
  return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

// QJsonObject sorts its keys; a grant reads best in the documented order, so objects are
// assembled from ordered members here.
QByteArray object(const Members& members, int indent) {
  const QByteArray inner(indent + 2, ' ');
  QByteArray out = "{\n";
  for (qsizetype i = 0; i < members.size(); ++i) {
    out += inner + scalar(members[i].first) + ": " + members[i].second;
    out += i + 1 < members.size() ? ",\n" : "\n";
  }
  out += QByteArray(indent, ' ') + '}';
  return out;
}

QByteArray utc(const QDateTime& time) {
  return scalar(time.toUTC().toString(QStringLiteral("yyyy-MM-ddTHH:mm:ss'Z'")));
}

QString randomHex(int digits) {
  QString out;
  auto* random = QRandomGenerator::system();
  for (int i = 0; i < digits; ++i)
    out += QLatin1Char("0123456789abcdef"[random->bounded(16)]);
  return out;
}

} // namespace

Outcome<QByteArray> GrantIssuer::render(const GrantDraft& d) {
  Members rdp{{QStringLiteral("host"), scalar(QStringLiteral("127.0.0.1"))},
              {QStringLiteral("port"), QByteArray::number(d.port)},
              {QStringLiteral("guest_port"), QByteArrayLiteral("3389")}};
  if (d.insecureNoCertPin)
    rdp.append({QStringLiteral("insecure_no_cert_pin"), QByteArrayLiteral("true")});
  else
    rdp.append({QStringLiteral("cert_sha256"), scalar(d.certSha256)});
  if (d.desktopWidth > 0) {
    QByteArray desktop = "{\"width\": " + QByteArray::number(d.desktopWidth) +
                         ", \"height\": " + QByteArray::number(d.desktopHeight);
    if (!d.desktopSizeFrom.isEmpty())
      desktop += ", \"size_from\": " + scalar(d.desktopSizeFrom);
    rdp.append({QStringLiteral("desktop"), desktop + '}'});
  }
  if (!d.keyboardLayout.isEmpty())
    rdp.append({QStringLiteral("keyboard_layout"), scalar(d.keyboardLayout)});

  Members panel{{QStringLiteral("title"), scalar(d.title)}};
  for (const auto& [key, value] : d.panelFields)
    panel.append({key, scalar(value)});

  Members top{
      {QStringLiteral("version"), QByteArrayLiteral("1")},
      {QStringLiteral("grant_id"), scalar(d.grantId)},
      {QStringLiteral("run_id"), scalar(d.runId)},
      {QStringLiteral("task_id"), scalar(d.taskId)},
      {QStringLiteral("issued_at"), utc(d.issuedAt)},
      {QStringLiteral("expires_at"), utc(d.expiresAt)},
      {QStringLiteral("vm"), object({{QStringLiteral("uuid"), scalar(d.vmUuid)},
                                     {QStringLiteral("name"), scalar(d.vmName)},
                                     {QStringLiteral("libvirt_uri"), scalar(d.libvirtUri)}},
                                    2)},
      {QStringLiteral("rdp"), object(rdp, 2)},
      {QStringLiteral("panel"), object(panel, 2)},
      {QStringLiteral("mcp"),
       object({{QStringLiteral("server"), scalar(d.mcpServer)}, {QStringLiteral("tool"), scalar(d.mcpTool)}},
              2)},
  };
  if (!d.candidates.isEmpty()) {
    QByteArray list = "[\n";
    for (qsizetype i = 0; i < d.candidates.size(); ++i) {
      const GrantDraft::Candidate& c = d.candidates[i];
      list += "      {\"id\": " + scalar(c.id) + ", \"label\": " + scalar(c.label) +
              ", \"action\": " + compact(c.action) + '}';
      list += i + 1 < d.candidates.size() ? ",\n" : "\n";
    }
    list += "    ]";
    top.append({QStringLiteral("action"), object({{QStringLiteral("candidates"), list}}, 2)});
  }
  if (!d.lockConfirmation.isEmpty())
    top.append(
        {QStringLiteral("lock"), object({{QStringLiteral("confirmation"), scalar(d.lockConfirmation)}}, 2)});
  if (d.captureWidth > 0)
    top.append({QStringLiteral("capture"), "{\"size\": [" + QByteArray::number(d.captureWidth) + ", " +
                                               QByteArray::number(d.captureHeight) + "]}"});
  else if (d.captureLongEdge > 0)
    top.append({QStringLiteral("capture"), "{\"long_edge\": " + QByteArray::number(d.captureLongEdge) + '}'});
  QByteArray bytes = object(top, 0) + '\n';

  // The console's loader is the authority on what a grant is. Freshness is neutralised
  // (now = issued_at, no lifetime or window limits) so only the schema speaks.
  GrantPolicy schemaOnly;
  schemaOnly.allowUnsigned = true; // the bytes are checked before they are signed
  schemaOnly.maxLifetime = std::chrono::seconds(std::numeric_limits<int>::max());
  schemaOnly.freshness = schemaOnly.maxLifetime;
  const auto loaded = GrantLoader::parse(bytes, schemaOnly, d.issuedAt.toUTC());
  if (!loaded)
    return loaded.failure();
  return bytes;
}

QString GrantIssuer::newUuid() {
  return QUuid::createUuid().toString(QUuid::WithoutBraces).toLower();
}

QString GrantIssuer::newId(const QString& prefix) {
  return prefix + QLatin1Char('-') + randomHex(12);
}

QString GrantIssuer::normalizeCertSha256(const QString& text) {
  static const QRegularExpression hex64(QStringLiteral("\\A[0-9a-f]{64}\\z"));
  QString hex = text.trimmed().toLower();
  hex.remove(QLatin1Char(':'));
  return hex64.match(hex).hasMatch() ? hex : QString();
}

QByteArray GrantIssuer::digestHex(const QByteArray& bytes) {
  return QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex();
}

} // namespace gc::tools
