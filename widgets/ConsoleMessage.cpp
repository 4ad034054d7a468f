#include "widgets/ConsoleMessage.h"

#include "bridge/panel/PanelMessage.h"
#include "common/StrictJson.h"

#include <QRegularExpression>
#include <QSet>

#include <cmath>
#include <optional>

namespace gc::viewer {
namespace {

Failure malformed(const QString& why) {
  return Failure{Refusal::ProtocolMalformed, why};
}

std::optional<Failure> checkKeys(const QJsonObject& o, QSet<QString> required) {
  for (auto it = o.begin(); it != o.end(); ++it) {
    if (it.key() == QLatin1String("type"))
      continue;
    if (!required.remove(it.key()))
      return malformed(QStringLiteral("unexpected field %1").arg(it.key().left(32)));
  }
  if (!required.isEmpty())
    return malformed(QStringLiteral("missing field %1").arg(*required.begin()));
  return std::nullopt;
}

constexpr qint64 kMaxSeq = qint64(1) << 53; // exact in a JSON double

std::optional<qint64> integer(const QJsonValue& v, qint64 lo, qint64 hi) {
  if (!v.isDouble())
    return std::nullopt;
  const double d = v.toDouble();
  if (!std::isfinite(d) || std::trunc(d) != d || d < double(lo) || d > double(hi))
    return std::nullopt;
  return static_cast<qint64>(d);
}

std::optional<QString> string(const QJsonValue& v, int maxLen = 1024) {
  if (!v.isString() || v.toString().size() > maxLen)
    return std::nullopt;
  return v.toString();
}

std::optional<QString> phaseValue(const QJsonValue& v) {
  const auto s = string(v, 16);
  if (!s || !phaseNames().contains(*s))
    return std::nullopt;
  return s;
}

std::optional<QString> refusalValue(const QJsonValue& v) {
  const auto s = string(v, 64);
  if (!s || !refusalFromName(*s))
    return std::nullopt;
  return s;
}

Outcome<ConsoleMessage> parseWelcome(const QJsonObject& o) {
  if (auto bad = checkKeys(o, {QStringLiteral("run"), QStringLiteral("task"), QStringLiteral("vm"),
                               QStringLiteral("identity"), QStringLiteral("phase"), QStringLiteral("width"),
                               QStringLiteral("height"), QStringLiteral("protocol")}))
    return *bad;
  Welcome w;
  const auto run = string(o.value(QStringLiteral("run")));
  const auto task = string(o.value(QStringLiteral("task")));
  const auto vm = string(o.value(QStringLiteral("vm")));
  const auto phase = phaseValue(o.value(QStringLiteral("phase")));
  const auto width = integer(o.value(QStringLiteral("width")), 0, 0xFFFF);
  const auto height = integer(o.value(QStringLiteral("height")), 0, 0xFFFF);
  const auto protocol = integer(o.value(QStringLiteral("protocol")), 0, 0xFFFF);
  if (!run || !task || !vm || !phase || !width || !height || !protocol ||
      !o.value(QStringLiteral("identity")).isObject())
    return malformed(QStringLiteral("welcome: a field has the wrong type or value"));
  if (*protocol != panel::kProtocolVersion)
    return malformed(QStringLiteral("welcome: protocol %1, this viewer speaks %2")
                         .arg(*protocol)
                         .arg(panel::kProtocolVersion));
  w.run = *run;
  w.task = *task;
  w.vm = *vm;
  w.identity = o.value(QStringLiteral("identity")).toObject();
  w.phase = *phase;
  w.width = int(*width);
  w.height = int(*height);
  w.protocol = int(*protocol);
  return ConsoleMessage(w);
}

Outcome<ConsoleMessage> parseUpto(const QJsonObject& o, bool drained) {
  if (auto bad = checkKeys(o, {QStringLiteral("upto")}))
    return *bad;
  const auto upto = integer(o.value(QStringLiteral("upto")), 0, kMaxSeq);
  if (!upto)
    return malformed(QStringLiteral("upto must be an unsigned integer"));
  if (drained)
    return ConsoleMessage(Drained{quint64(*upto)});
  return ConsoleMessage(InputAck{quint64(*upto)});
}

} // namespace

const QStringList& phaseNames() {
  static const QStringList names{QStringLiteral("SETUP"),     QStringLiteral("LOCKING"),
                                 QStringLiteral("READ_ONLY"), QStringLiteral("CAPTURING"),
                                 QStringLiteral("REVIEWING"), QStringLiteral("ACTION"),
                                 QStringLiteral("CLOSED")};
  return names;
}

Outcome<ConsoleMessage> parseConsoleMessage(const QByteArray& text) {
  const Outcome<QJsonObject> json = StrictJson::parseObject(text, panel::kMaxTextMessageBytes, 4);
  if (!json.ok())
    return json.failure();
  static const QRegularExpression typeFirst(QStringLiteral("^\\s*\\{\\s*\"type\"\\s*:"));
  if (!typeFirst.match(QString::fromUtf8(text.left(64))).hasMatch())
    return malformed(QStringLiteral("\"type\" must be the first key"));
  const QJsonObject& o = json.value();
  const QString type = o.value(QStringLiteral("type")).toString();
  if (type == QLatin1String("welcome"))
    return parseWelcome(o);
  if (type == QLatin1String("input_ack"))
    return parseUpto(o, false);
  if (type == QLatin1String("drained"))
    return parseUpto(o, true);
  if (type == QLatin1String("phase")) {
    if (auto bad = checkKeys(o, {QStringLiteral("phase"), QStringLiteral("reason")}))
      return *bad;
    const auto phase = phaseValue(o.value(QStringLiteral("phase")));
    const auto reason = string(o.value(QStringLiteral("reason")));
    if (!phase || !reason)
      return malformed(QStringLiteral("phase: unknown phase or bad reason"));
    return ConsoleMessage(PhaseChange{*phase, *reason});
  }
  if (type == QLatin1String("input_refused")) {
    if (auto bad = checkKeys(o, {QStringLiteral("seq"), QStringLiteral("code")}))
      return *bad;
    const auto seq = integer(o.value(QStringLiteral("seq")), 0, kMaxSeq);
    const auto code = refusalValue(o.value(QStringLiteral("code")));
    if (!seq || !code)
      return malformed(QStringLiteral("input_refused: bad seq or unknown code"));
    return ConsoleMessage(InputRefused{quint64(*seq), *code});
  }
  if (type == QLatin1String("error")) {
    if (auto bad = checkKeys(o, {QStringLiteral("code"), QStringLiteral("message")}))
      return *bad;
    const auto code = refusalValue(o.value(QStringLiteral("code")));
    const auto message = string(o.value(QStringLiteral("message")));
    if (!code || !message)
      return malformed(QStringLiteral("error: unknown code or bad message"));
    return ConsoleMessage(ConsoleError{*code, *message});
  }
  if (type == QLatin1String("bye")) {
    if (auto bad = checkKeys(o, {QStringLiteral("reason")}))
      return *bad;
    const auto reason = string(o.value(QStringLiteral("reason")));
    if (!reason)
      return malformed(QStringLiteral("bye: reason must be a string"));
    return ConsoleMessage(Bye{*reason});
  }
  return malformed(QStringLiteral("unknown console message type"));
}

} // namespace gc::viewer
