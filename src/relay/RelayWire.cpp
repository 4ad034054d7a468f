#include "relay/RelayWire.h"

#include <QJsonArray>
#include <QSet>

namespace gc::relay {
namespace {

// Writes each field into a JSON object.
struct Writer {
  QJsonObject& out;
  void operator()(const char* key, qint64 v) const { out.insert(QLatin1StringView(key), v); }
  void operator()(const char* key, const QString& v) const { out.insert(QLatin1StringView(key), v); }
  void operator()(const char* key, const QStringList& v) const {
    out.insert(QLatin1StringView(key), QJsonArray::fromStringList(v));
  }
  void operator()(const char* key, const QJsonObject& v) const { out.insert(QLatin1StringView(key), v); }
  void operator()(const char* key, const std::optional<QJsonObject>& v) const {
    if (v)
      out.insert(QLatin1StringView(key), *v);
  }
};

// Reads each field out of a JSON object; the first missing or mistyped field fails it.
struct Reader {
  const QJsonObject& in;
  QSet<QString> seen;
  QString bad;
  QJsonValue take(const char* key) {
    seen.insert(QLatin1StringView(key));
    return in.value(QLatin1StringView(key));
  }
  void fail(const char* key) {
    if (bad.isEmpty())
      bad = QLatin1StringView(key);
  }
  void operator()(const char* key, qint64& v) {
    const QJsonValue j = take(key);
    const double d = j.toDouble();
    // A whole number a double holds exactly (ids and the protocol version are small).
    if (!j.isDouble() || d != double(qint64(d)) || d < 0 || d > double(1ll << 53))
      return fail(key);
    v = qint64(d);
  }
  void operator()(const char* key, QString& v) {
    const QJsonValue j = take(key);
    if (!j.isString())
      return fail(key);
    v = j.toString();
  }
  void operator()(const char* key, QStringList& v) {
    const QJsonValue j = take(key);
    if (!j.isArray())
      return fail(key);
    for (const QJsonValue& e : j.toArray()) {
      if (!e.isString())
        return fail(key);
      v << e.toString();
    }
  }
  void operator()(const char* key, QJsonObject& v) {
    const QJsonValue j = take(key);
    if (!j.isObject())
      return fail(key);
    v = j.toObject();
  }
  void operator()(const char* key, std::optional<QJsonObject>& v) {
    const QJsonValue j = take(key);
    if (j.isUndefined())
      return;
    if (!j.isObject())
      return fail(key);
    v = j.toObject();
  }
};

template <typename M> QJsonObject encodeOne(M m) {
  QJsonObject out{{QStringLiteral("type"), QLatin1StringView(M::kType)}};
  Writer w{out};
  m.fields(w);
  return out;
}

Failure malformed(const QString& why) {
  return Failure{Refusal::ProtocolMalformed, why};
}

template <typename M> Outcome<M> decodeOne(const QJsonObject& line) {
  M m;
  Reader r{line, {QStringLiteral("type")}, {}};
  m.fields(r);
  if (!r.bad.isEmpty())
    return malformed(
        QStringLiteral("%1: field %2 missing or of the wrong type").arg(QLatin1StringView(M::kType), r.bad));
  for (auto it = line.begin(); it != line.end(); ++it)
    if (!r.seen.contains(it.key()))
      return malformed(QStringLiteral("%1: unknown field").arg(QLatin1StringView(M::kType)));
  return m;
}

// The variant's alternative whose kType is the line's type, decoded.
template <typename Variant, std::size_t I = 0> Outcome<Variant> decodeAny(const QJsonObject& line) {
  if constexpr (I == std::variant_size_v<Variant>) {
    return Failure{Refusal::ProtocolUnknownType, QStringLiteral("unexpected message")};
  } else {
    using M = std::variant_alternative_t<I, Variant>;
    if (line.value(QStringLiteral("type")).toString() != QLatin1StringView(M::kType))
      return decodeAny<Variant, I + 1>(line);
    Outcome<M> m = decodeOne<M>(line);
    if (!m.ok())
      return m.failure();
    return Variant(std::move(m).value());
  }
}

} // namespace

QJsonObject encode(const ToRelay& message) {
  return std::visit([](const auto& m) { return encodeOne(m); }, message);
}

QJsonObject encode(const FromRelay& message) {
  return std::visit([](const auto& m) { return encodeOne(m); }, message);
}

Outcome<FromRelay> decodeFromRelay(const QJsonObject& line) {
  if (!line.value(QStringLiteral("type")).isString())
    return malformed(QStringLiteral("no type"));
  return decodeAny<FromRelay>(line);
}

Outcome<ToRelay> decodeToRelay(const QJsonObject& line) {
  if (!line.value(QStringLiteral("type")).isString())
    return malformed(QStringLiteral("no type"));
  return decodeAny<ToRelay>(line);
}

} // namespace gc::relay
