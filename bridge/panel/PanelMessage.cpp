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

// One text message, either direction: bounded, one strict JSON object, "type" first and a
// string. The caller dispatches on the type.
Outcome<QJsonObject> envelope(const QByteArray& text) {
  if (text.size() > kMaxTextMessageBytes)
    return Failure{Refusal::ProtocolOversize,
                   QStringLiteral("message over %1 bytes").arg(kMaxTextMessageBytes)};
  Outcome<QJsonObject> json = StrictJson::parseObject(text, kMaxTextMessageBytes, 4);
  if (!json.ok())
    return Failure{json.code() == Refusal::ProtocolOversize ? Refusal::ProtocolOversize
                                                            : Refusal::ProtocolMalformed,
                   json.failure().message};
  // "type" must be the first key: a reader can dispatch before looking at anything else.
  static const QRegularExpression typeFirst(QStringLiteral("^\\s*\\{\\s*\"type\"\\s*:"));
  if (!typeFirst.match(QString::fromUtf8(text.left(64))).hasMatch())
    return malformed(QStringLiteral("\"type\" must be the first key"));
  if (!json.value().value(QStringLiteral("type")).isString())
    return malformed(QStringLiteral("type must be a string"));
  return json;
}

// hello "features": a short array of short lowercase names; unknown names are ignored.
std::optional<Failure> parseFeatures(const QJsonValue& v, Hello& h) {
  static const QRegularExpression name(QStringLiteral("^[a-z][a-z0-9_]{0,31}$"));
  if (!v.isArray() || v.toArray().size() > kMaxFeatures)
    return malformed(
        QStringLiteral("hello: features must be an array of at most %1 names").arg(kMaxFeatures));
  for (const QJsonValue f : v.toArray()) {
    if (!f.isString() || !name.match(f.toString()).hasMatch())
      return malformed(QStringLiteral("hello: a feature is not a short lowercase name"));
    if (f.toString() == QLatin1String(kFeatureCopyRect))
      h.copyRect = true;
  }
  return std::nullopt;
}

Outcome<Message> parseHello(const QJsonObject& o) {
  if (auto bad = checkKeys(o,
                           {QStringLiteral("run"), QStringLiteral("task"), QStringLiteral("capability"),
                            QStringLiteral("client")},
                           {QStringLiteral("panel"), QStringLiteral("features")}))
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
  if (o.contains(QStringLiteral("features")))
    if (auto bad = parseFeatures(o.value(QStringLiteral("features")), h))
      return *bad;
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
  const Outcome<QJsonObject> json = envelope(text);
  if (!json.ok())
    return json.failure();
  const QJsonObject& o = json.value();
  const QString type = o.value(QStringLiteral("type")).toString();
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

QByteArray hello(const HelloFields& f) {
  QJsonObject rest{{QStringLiteral("run"), f.run},
                   {QStringLiteral("task"), f.task},
                   {QStringLiteral("capability"), QString::fromLatin1(f.capabilityHex)},
                   {QStringLiteral("client"), QJsonObject{{QStringLiteral("kind"), f.clientKind},
                                                          {QStringLiteral("version"), f.clientVersion}}}};
  if (!f.panel.isEmpty())
    rest.insert(QStringLiteral("panel"), f.panel);
  if (!f.features.isEmpty())
    rest.insert(QStringLiteral("features"), QJsonArray::fromStringList(f.features));
  return object("hello", rest);
}

QByteArray key(quint64 seq, quint16 scancode, bool down) {
  return object("key", QJsonObject{{QStringLiteral("seq"), qint64(seq)},
                                   {QStringLiteral("scancode"), scancode},
                                   {QStringLiteral("down"), down}});
}

QByteArray pointer(quint64 seq, quint16 x, quint16 y, quint8 buttons, qint16 wheel) {
  return object("pointer", QJsonObject{{QStringLiteral("seq"), qint64(seq)},
                                       {QStringLiteral("x"), x},
                                       {QStringLiteral("y"), y},
                                       {QStringLiteral("buttons"), buttons},
                                       {QStringLiteral("wheel"), wheel}});
}

QByteArray frameAck(quint32 frame) {
  return object("frame_ack", QJsonObject{{QStringLiteral("frame"), qint64(frame)}});
}

QByteArray frameRefresh(quint32 frame) {
  return object("frame_refresh", QJsonObject{{QStringLiteral("frame"), qint64(frame)}});
}

QByteArray lock() {
  return object("lock");
}

QByteArray close() {
  return object("close");
}

namespace {

std::optional<QString> phaseValue(const QJsonValue& v) {
  const auto s = boundedString(v, 16);
  if (!s || !phaseNames().contains(*s))
    return std::nullopt;
  return s;
}

std::optional<QString> refusalValue(const QJsonValue& v) {
  const auto s = boundedString(v, 64);
  if (!s || !refusalFromName(*s))
    return std::nullopt;
  return s;
}

constexpr int kMaxConsoleString = 1024;

Outcome<ConsoleMessage> parseWelcome(const QJsonObject& o) {
  if (auto bad = checkKeys(o, {QStringLiteral("run"), QStringLiteral("task"), QStringLiteral("vm"),
                               QStringLiteral("identity"), QStringLiteral("phase"), QStringLiteral("width"),
                               QStringLiteral("height"), QStringLiteral("protocol")}))
    return *bad;
  const auto run = boundedString(o.value(QStringLiteral("run")), kMaxConsoleString);
  const auto task = boundedString(o.value(QStringLiteral("task")), kMaxConsoleString);
  const auto vm = boundedString(o.value(QStringLiteral("vm")), kMaxConsoleString);
  const auto phaseName = phaseValue(o.value(QStringLiteral("phase")));
  const auto width = integer(o.value(QStringLiteral("width")), 0, 0xFFFF);
  const auto height = integer(o.value(QStringLiteral("height")), 0, 0xFFFF);
  const auto protocol = integer(o.value(QStringLiteral("protocol")), 0, 0xFFFF);
  if (!run || !task || !vm || !phaseName || !width || !height || !protocol ||
      !o.value(QStringLiteral("identity")).isObject())
    return malformed(QStringLiteral("welcome: a field has the wrong type or value"));
  if (*protocol != kProtocolVersion)
    return malformed(
        QStringLiteral("welcome: protocol %1, this panel speaks %2").arg(*protocol).arg(kProtocolVersion));
  Welcome w;
  w.run = *run;
  w.task = *task;
  w.vm = *vm;
  w.identity = o.value(QStringLiteral("identity")).toObject();
  w.phase = *phaseName;
  w.width = int(*width);
  w.height = int(*height);
  w.protocol = int(*protocol);
  return ConsoleMessage(w);
}

Outcome<ConsoleMessage> parseUpto(const QJsonObject& o, bool isDrained) {
  if (auto bad = checkKeys(o, {QStringLiteral("upto")}))
    return *bad;
  const auto upto = integer(o.value(QStringLiteral("upto")), 0, kMaxSeq);
  if (!upto)
    return malformed(QStringLiteral("upto must be an unsigned integer"));
  if (isDrained)
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
  const Outcome<QJsonObject> json = envelope(text);
  if (!json.ok())
    return json.failure();
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
    const auto phaseName = phaseValue(o.value(QStringLiteral("phase")));
    const auto reason = boundedString(o.value(QStringLiteral("reason")), kMaxConsoleString);
    if (!phaseName || !reason)
      return malformed(QStringLiteral("phase: unknown phase or bad reason"));
    return ConsoleMessage(PhaseChange{*phaseName, *reason});
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
    const auto message = boundedString(o.value(QStringLiteral("message")), kMaxConsoleString);
    if (!code || !message)
      return malformed(QStringLiteral("error: unknown code or bad message"));
    return ConsoleMessage(ConsoleError{*code, *message});
  }
  if (type == QLatin1String("bye")) {
    if (auto bad = checkKeys(o, {QStringLiteral("reason")}))
      return *bad;
    const auto reason = boundedString(o.value(QStringLiteral("reason")), kMaxConsoleString);
    if (!reason)
      return malformed(QStringLiteral("bye: reason must be a string"));
    return ConsoleMessage(Bye{*reason});
  }
  return malformed(QStringLiteral("unknown console message type"));
}

} // namespace gc::panel
