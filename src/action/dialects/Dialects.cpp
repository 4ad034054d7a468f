#include "action/dialects/Dialects.h"

#include "grant/ActionSpecKeys.h"

#include <cmath>

namespace gc::dialects {

QStringList names() {
  return {QStringLiteral("anthropic"), QStringLiteral("openai"), QStringLiteral("osworld"),
          QStringLiteral("ui_tars")};
}

Outcome<QJsonObject> translate(const QString& dialect, const QJsonValue& input, const Context& context) {
  if (dialect == u"anthropic")
    return anthropic(input, context);
  if (dialect == u"openai")
    return openai(input, context);
  if (dialect == u"osworld")
    return osworld(input, context);
  if (dialect == u"ui_tars")
    return uiTars(input, context);
  return detail::invalid(QStringLiteral("unknown dialect"));
}

namespace detail {

Failure invalid(const QString& message) {
  return Failure{Refusal::ActionInvalid, message};
}

Outcome<QJsonArray> keys(const QStringList& spelled, const QString& field) {
  QJsonArray out;
  for (const QString& key : spelled) {
    const std::optional<QString> canonical = ActionSpecKeys::normalise(key);
    if (!canonical)
      return invalid(QStringLiteral("%1: %2 is not a key the console knows").arg(field, key.left(32)));
    out.append(*canonical);
  }
  if (out.isEmpty())
    return invalid(field + QStringLiteral(": no keys"));
  return out;
}

Status fields(const QJsonObject& o, const QStringList& allowed, const QStringList& required) {
  for (auto it = o.constBegin(); it != o.constEnd(); ++it)
    if (!allowed.contains(it.key()))
      return invalid(QStringLiteral("%1: not a field of this action").arg(it.key().left(40)));
  for (const QString& r : required)
    if (!o.contains(r))
      return invalid(r + QStringLiteral(": required"));
  return success();
}

Outcome<int> integer(const QJsonValue& v, const QString& field) {
  const double d = v.toDouble(std::nan(""));
  if (!v.isDouble() || !std::isfinite(d) || std::floor(d) != d || std::abs(d) > 1e6)
    return invalid(field + QStringLiteral(": expected an integer"));
  return int(d);
}

Outcome<QPoint> pair(const QJsonValue& v, const QString& field) {
  const QJsonArray a = v.toArray();
  if (!v.isArray() || a.size() != 2)
    return invalid(field + QStringLiteral(": expected [x, y]"));
  const Outcome<int> x = integer(a.at(0), field + QStringLiteral("[0]"));
  if (!x)
    return x.failure();
  const Outcome<int> y = integer(a.at(1), field + QStringLiteral("[1]"));
  if (!y)
    return y.failure();
  return QPoint(*x, *y);
}

QJsonObject at(QPoint p, QJsonObject o) {
  o.insert(QStringLiteral("x"), p.x());
  o.insert(QStringLiteral("y"), p.y());
  return o;
}

} // namespace detail
} // namespace gc::dialects
