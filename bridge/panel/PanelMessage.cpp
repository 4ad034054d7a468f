#include "bridge/panel/PanelMessage.h"

#include "common/StrictJson.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QSet>

#include <cmath>

namespace gc::panel {
namespace {

Failure malformed(const QString& why) {
  return Failure{Refusal::ProtocolMalformed, why};
}

// Exactly these keys (besides "type"): nothing more, nothing less, except optional ones.
std::optional<Failure> checkKeys(const QJsonObject& o, QSet<QString> required,
                                 const QSet<QString>& optional = {}) {
  for (auto it = o.begin(); it != o.end(); ++it) {
    if (it.key() == QLatin1String("type"))
      continue;
    if (!required.remove(it.key()) && !optional.contains(it.key()))
      return malformed(QStringLiteral("unexpected field"));
  }
  if (!required.isEmpty())
    return malformed(QStringLiteral("missing field %1").arg(*required.begin()));
  return std::nullopt;
}

// JSON numbers are doubles; accept only exact integers within [lo, hi].
std::optional<qint64> integer(const QJsonValue& v, qint64 lo, qint64 hi) {
  if (!v.isDouble())
    return std::nullopt;
  const double d = v.toDouble();
  if (!std::isfinite(d) || std::trunc(d) != d || d < double(lo) || d > double(hi))
    return std::nullopt;
  return static_cast<qint64>(d);
}

std::optional<QString> boundedString(const QJsonValue& v, int maxLen) {
  if (!v.isString())
    return std::nullopt;
  const QString s = v.toString();
  if (s.size() > maxLen)
    return std::nullopt;
  return s;
}

constexpr qint64 kMaxSeq = (qint64(1) << 53); // exact in a JSON double

QByteArray object(const char* type, const QJsonObject& rest = {}) {
  QByteArray out = QByteArrayLiteral("{\"type\":\"") + type + '"';
  QByteArray body = QJsonDocument(rest).toJson(QJsonDocument::Compact);
  if (body.size() > 2)
    out += ',' + body.mid(1, body.size() - 2);
  return out + '}';
}

Outcome<Message> parseHello(const QJsonObject& o) {
  if (auto bad = checkKeys(o,
                           {QStringLiteral("run"), QStringLiteral("task"), QStringLiteral("capability"),
                            QStringLiteral("client")},
                           {QStringLiteral("panel")}))
    return *bad;
  Hello h;
  const auto run = boundedString(o.value(QStringLiteral("run")), 128);
  const auto task = boundedString(o.value(QStringLiteral("task")), 128);
  const auto cap = boundedString(o.value(QStringLiteral("capability")), 64);
  if (!run || !task || !cap)
    return malformed(QStringLiteral("hello: run, task and capability must be strings"));
  static const QRegularExpression hex64(QStringLiteral("^[0-9a-f]{64}$"));
  if (!hex64.match(*cap).hasMatch())
    return Failure{Refusal::PanelUnauthorized,
                   QStringLiteral("hello: capability is not 64 lowercase hex digits")};
  const QJsonValue client = o.value(QStringLiteral("client"));
  if (!client.isObject())
    return malformed(QStringLiteral("hello: client must be an object"));
  const QJsonObject c = client.toObject();
  if (auto bad = checkKeys(c, {QStringLiteral("kind"), QStringLiteral("version")}))
    return *bad;
  const auto kind = boundedString(c.value(QStringLiteral("kind")), 64);
  const auto version = boundedString(c.value(QStringLiteral("version")), 64);
  if (!kind || !version)
    return malformed(QStringLiteral("hello: client kind and version must be strings"));
  if (o.contains(QStringLiteral("panel"))) {
    if (!o.value(QStringLiteral("panel")).isObject())
      return malformed(QStringLiteral("hello: panel must be an object"));
    h.panel = o.value(QStringLiteral("panel")).toObject();
  }
  h.run = *run;
  h.task = *task;
  h.capability = QByteArray::fromHex(cap->toLatin1());
  h.clientKind = *kind;
  h.clientVersion = *version;
  return Message(h);
}

Outcome<Message> parseKey(const QJsonObject& o) {
  if (auto bad = checkKeys(o, {QStringLiteral("seq"), QStringLiteral("scancode"), QStringLiteral("down")}))
    return *bad;
  const auto seq = integer(o.value(QStringLiteral("seq")), 0, kMaxSeq);
  const auto sc = integer(o.value(QStringLiteral("scancode")), 0, 0xFFFF);
  const QJsonValue down = o.value(QStringLiteral("down"));
  if (!seq || !sc || !down.isBool())
    return malformed(QStringLiteral("key: seq, scancode must be unsigned integers, down a boolean"));
  return Message(Key{quint64(*seq), quint16(*sc), down.toBool()});
}

Outcome<Message> parsePointer(const QJsonObject& o) {
  if (auto bad = checkKeys(o, {QStringLiteral("seq"), QStringLiteral("x"), QStringLiteral("y"),
                               QStringLiteral("buttons"), QStringLiteral("wheel")}))
    return *bad;
  const auto seq = integer(o.value(QStringLiteral("seq")), 0, kMaxSeq);
  const auto x = integer(o.value(QStringLiteral("x")), 0, 0xFFFF);
  const auto y = integer(o.value(QStringLiteral("y")), 0, 0xFFFF);
  const auto buttons = integer(o.value(QStringLiteral("buttons")), 0, 0xFF);
  const auto wheel = integer(o.value(QStringLiteral("wheel")), -32768, 32767);
  if (!seq || !x || !y || !buttons || !wheel)
    return malformed(QStringLiteral("pointer: fields out of range"));
  return Message(Pointer{quint64(*seq), quint16(*x), quint16(*y), quint8(*buttons), qint16(*wheel)});
}

} // namespace

bool isForbiddenRoute(const QString& type) {
  static const QSet<QString> forbidden{
      QStringLiteral("clipboard"),      QStringLiteral("clipboard_set"), QStringLiteral("paste"),
      QStringLiteral("file"),           QStringLiteral("file_transfer"), QStringLiteral("upload"),
      QStringLiteral("drop"),           QStringLiteral("macro"),         QStringLiteral("shortcut"),
      QStringLiteral("text"),           QStringLiteral("type_text"),     QStringLiteral("action"),
      QStringLiteral("perform_action"), QStringLiteral("receipt"),       QStringLiteral("capture"),
      QStringLiteral("unlock"),         QStringLiteral("phase"),         QStringLiteral("exec")};
  return forbidden.contains(type);
}

Outcome<Message> parse(const QByteArray& text) {
  if (text.size() > kMaxTextMessageBytes)
    return Failure{Refusal::ProtocolOversize,
                   QStringLiteral("message over %1 bytes").arg(kMaxTextMessageBytes)};
  const Outcome<QJsonObject> json = StrictJson::parseObject(text, kMaxTextMessageBytes, 4);
  if (!json.ok())
    return Failure{json.code() == Refusal::ProtocolOversize ? Refusal::ProtocolOversize
                                                            : Refusal::ProtocolMalformed,
                   json.failure().message};
  // "type" must be the first key: a reader can dispatch before looking at anything else.
  static const QRegularExpression typeFirst(QStringLiteral("^\\s*\\{\\s*\"type\"\\s*:"));
  if (!typeFirst.match(QString::fromUtf8(text.left(64))).hasMatch())
    return malformed(QStringLiteral("\"type\" must be the first key"));
  const QJsonObject& o = json.value();
  const QJsonValue typeValue = o.value(QStringLiteral("type"));
  if (!typeValue.isString())
    return malformed(QStringLiteral("type must be a string"));
  const QString type = typeValue.toString();
  if (type == QLatin1String("hello"))
    return parseHello(o);
  if (type == QLatin1String("key"))
    return parseKey(o);
  if (type == QLatin1String("pointer"))
    return parsePointer(o);
  if (type == QLatin1String("frame_ack") || type == QLatin1String("frame_refresh")) {
    if (auto bad = checkKeys(o, {QStringLiteral("frame")}))
      return *bad;
    const auto frame = integer(o.value(QStringLiteral("frame")), 0, 0xFFFFFFFFLL);
    if (!frame)
      return malformed(QStringLiteral("%1: frame must be an unsigned 32-bit integer").arg(type));
    return type == QLatin1String("frame_ack") ? Message(FrameAck{quint32(*frame)})
                                              : Message(FrameRefresh{quint32(*frame)});
  }
  if (type == QLatin1String("lock") || type == QLatin1String("close")) {
    if (auto bad = checkKeys(o, {}))
      return *bad;
    return type == QLatin1String("lock") ? Message(Lock{}) : Message(Close{});
  }
  if (isForbiddenRoute(type))
    return Failure{Refusal::RouteForbidden, QStringLiteral("the panel has no %1 route").arg(type.left(32))};
  return Failure{Refusal::ProtocolUnknownType, QStringLiteral("unknown message type")};
}

QByteArray welcome(const QString& run, const QString& task, const QString& vm, const QJsonObject& identity,
                   const QString& phaseName, int width, int height) {
  return object("welcome", QJsonObject{{QStringLiteral("run"), run},
                                       {QStringLiteral("task"), task},
                                       {QStringLiteral("vm"), vm},
                                       {QStringLiteral("identity"), identity},
                                       {QStringLiteral("phase"), phaseName},
                                       {QStringLiteral("width"), width},
                                       {QStringLiteral("height"), height},
                                       {QStringLiteral("protocol"), kProtocolVersion}});
}

QByteArray phase(const QString& phaseName, const QString& reason) {
  return object("phase",
                QJsonObject{{QStringLiteral("phase"), phaseName}, {QStringLiteral("reason"), reason}});
}

QByteArray inputAck(quint64 upto) {
  return object("input_ack", QJsonObject{{QStringLiteral("upto"), qint64(upto)}});
}

QByteArray inputRefused(quint64 seq, Refusal code) {
  return object("input_refused", QJsonObject{{QStringLiteral("seq"), qint64(seq)},
                                             {QStringLiteral("code"), refusalName(code)}});
}

QByteArray drained(quint64 upto) {
  return object("drained", QJsonObject{{QStringLiteral("upto"), qint64(upto)}});
}

QByteArray error(Refusal code, const QString& message) {
  return object("error", QJsonObject{{QStringLiteral("code"), refusalName(code)},
                                     {QStringLiteral("message"), message}});
}

QByteArray bye(const QString& reason) {
  return object("bye", QJsonObject{{QStringLiteral("reason"), reason}});
}

} // namespace gc::panel
