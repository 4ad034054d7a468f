#include "grant/ActionSpec.h"

#include "grant/ActionSpecKeys.h"

#include <QJsonArray>
#include <QMessageAuthenticationCode>

#include <algorithm>
#include <array>
#include <cmath>

namespace gc {

namespace {

constexpr std::array<QStringView, ActionSpec::kKindCount> kKindNames{
    u"click",    u"move",      u"drag", u"scroll", u"key_chord",
    u"hold_key", u"type_text", u"wait", u"done",   u"fail"};
constexpr std::array<QStringView, 5> kButtonNames{u"left", u"right", u"middle", u"back", u"forward"};

Failure invalid(const QString& message) {
  return Failure{Refusal::ActionInvalid, message};
}

Outcome<int> integerField(const QJsonObject& json, QLatin1StringView name, int min, int max) {
  const QJsonValue v = json.value(name);
  if (v.isUndefined())
    return invalid(name + QStringLiteral(": required"));
  const double d = v.toDouble(-1.0);
  if (!v.isDouble() || !std::isfinite(d) || std::floor(d) != d)
    return invalid(name + QStringLiteral(": expected an integer"));
  if (d < min || d > max)
    return invalid(name + QStringLiteral(": out of range %1..%2").arg(min).arg(max));
  return static_cast<int>(d);
}

Outcome<int> coordinate(const QJsonObject& json, QLatin1StringView name) {
  return integerField(json, name, 0, ActionSpec::kMaxCoordinate);
}

// Seconds as a JSON number, to milliseconds (rounded), within 0..maxMs.
Outcome<int> seconds(const QJsonObject& json, int maxMs, bool positive) {
  const QJsonValue v = json.value(QLatin1StringView("seconds"));
  if (v.isUndefined())
    return invalid(QStringLiteral("seconds: required"));
  const double d = v.toDouble(-1.0);
  if (!v.isDouble() || !std::isfinite(d))
    return invalid(QStringLiteral("seconds: expected a number"));
  if (d < 0 || d * 1000.0 > maxMs || (positive && d * 1000.0 < 1.0))
    return invalid(
        QStringLiteral("seconds: out of range %1..%2").arg(positive ? 0.001 : 0.0).arg(maxMs / 1000.0));
  return static_cast<int>(std::lround(d * 1000.0));
}

// A key list in canonical order: modifiers (ctrl, alt, shift, meta) first, then the others as
// given. `legacyOnly`: the original allowlist.
Outcome<QStringList> keyList(const QJsonObject& json, QLatin1StringView name, int max, bool chord,
                             bool legacyOnly) {
  const QJsonValue value = json.value(name);
  if (value.isUndefined())
    return invalid(name + QStringLiteral(": required"));
  if (!value.isArray())
    return invalid(name + QStringLiteral(": expected an array"));
  const QJsonArray keys = value.toArray();
  if ((chord && keys.isEmpty()) || keys.size() > max)
    return invalid(name + QStringLiteral(": expected %1..%2 keys").arg(chord ? 1 : 0).arg(max));
  QStringList modifiers, others;
  for (qsizetype i = 0; i < keys.size(); ++i) {
    const QString where = QStringLiteral("%1[%2]").arg(name).arg(i);
    if (!keys.at(i).isString())
      return invalid(where + QStringLiteral(": expected a string"));
    QString key = keys.at(i).toString();
    if (key == u"win")
      key = QStringLiteral("meta");
    else if (!ActionSpecKeys::isCanonical(key, legacyOnly))
      return invalid(where + QStringLiteral(": not an allowed key"));
    if (modifiers.contains(key) || others.contains(key))
      return invalid(where + QStringLiteral(": duplicate key"));
    if (ActionSpecKeys::isModifier(key))
      modifiers.append(key);
    else if (chord && !others.isEmpty())
      return invalid(where + QStringLiteral(": at most one non-modifier key"));
    else
      others.append(key);
  }
  std::sort(modifiers.begin(), modifiers.end(), [](const QString& a, const QString& b) {
    return ActionSpecKeys::modifierRank(a) < ActionSpecKeys::modifierRank(b);
  });
  return modifiers + others;
}

Outcome<QString> textField(const QJsonObject& json) {
  const QJsonValue v = json.value(QLatin1StringView("text"));
  if (v.isUndefined())
    return invalid(QStringLiteral("text: required"));
  if (!v.isString())
    return invalid(QStringLiteral("text: expected a string"));
  const QString text = v.toString();
  if (text.isEmpty())
    return invalid(QStringLiteral("text: empty"));
  int chars = 0;
  for (qsizetype i = 0; i < text.size(); ++i) {
    const char16_t c = text[i].unicode();
    if (QChar::isHighSurrogate(c)) {
      if (i + 1 >= text.size() || !QChar::isLowSurrogate(text[i + 1].unicode()))
        return invalid(QStringLiteral("text: an unpaired surrogate at %1").arg(i));
      ++i;
    } else if (QChar::isLowSurrogate(c)) {
      return invalid(QStringLiteral("text: an unpaired surrogate at %1").arg(i));
    } else if ((c < 0x20 && c != u'\n' && c != u'\t' && c != u'\r') || (c >= 0x7F && c < 0xA0)) {
      return invalid(QStringLiteral("text: a control character at %1 (only \\n, \\r and \\t)").arg(i));
    }
    if (++chars > ActionSpec::kMaxTextChars)
      return invalid(QStringLiteral("text: longer than %1 characters").arg(ActionSpec::kMaxTextChars));
  }
  return text;
}

Outcome<QList<QPoint>> pathField(const QJsonObject& json) {
  const QJsonValue v = json.value(QLatin1StringView("path"));
  if (v.isUndefined())
    return invalid(QStringLiteral("path: required"));
  if (!v.isArray())
    return invalid(QStringLiteral("path: expected an array"));
  const QJsonArray points = v.toArray();
  if (points.size() < ActionSpec::kMinDragPoints || points.size() > ActionSpec::kMaxDragPoints)
    return invalid(QStringLiteral("path: expected %1..%2 points")
                       .arg(ActionSpec::kMinDragPoints)
                       .arg(ActionSpec::kMaxDragPoints));
  QList<QPoint> path;
  for (qsizetype i = 0; i < points.size(); ++i) {
    const QString where = QStringLiteral("path[%1]").arg(i);
    if (!points.at(i).isObject())
      return invalid(where + QStringLiteral(": expected an object {x, y}"));
    const QJsonObject p = points.at(i).toObject();
    if (p.size() != 2)
      return invalid(where + QStringLiteral(": expected exactly x and y"));
    const Outcome<int> x = coordinate(p, QLatin1StringView("x"));
    const Outcome<int> y = coordinate(p, QLatin1StringView("y"));
    if (!x || !y)
      return invalid(where + QStringLiteral(".") + (!x ? x.failure().message : y.failure().message));
    path.append(QPoint(*x, *y));
  }
  return path;
}

} // namespace

bool ActionSpec::isModifierKey(QStringView key) {
  return ActionSpecKeys::isModifier(key) || key == u"win";
}

bool ActionSpec::isAllowedKey(QStringView key) {
  return key == u"win" || ActionSpecKeys::isCanonical(key, true);
}

QString ActionSpec::kindName(Kind kind) {
  return kKindNames[size_t(kind)].toString();
}

std::optional<ActionSpec::Kind> ActionSpec::kindFromName(QStringView name) {
  for (size_t i = 0; i < kKindNames.size(); ++i)
    if (kKindNames[i] == name)
      return Kind(i);
  return std::nullopt;
}

QString ActionSpec::buttonName(Button button) {
  return kButtonNames[size_t(button)].toString();
}

bool ActionSpec::isLegacyShape() const {
  if (kind == Kind::KeyChord) {
    for (const QString& k : keys)
      if (!ActionSpecKeys::isCanonical(k, true))
        return false;
    return keys.size() <= kMaxChordKeys;
  }
  if (kind != Kind::Click || !holdKeys.isEmpty())
    return false;
  return (button == Button::Left && (count == 1 || count == 2)) || (button == Button::Right && count == 1);
}

QString ActionSpec::typeName() const {
  if (kind == Kind::Click && holdKeys.isEmpty()) {
    if (button == Button::Left && count == 2)
      return QStringLiteral("double_click");
    if (button == Button::Right && count == 1)
      return QStringLiteral("right_click");
  }
  return kindName(kind);
}

int ActionSpec::textChars() const {
  int n = 0;
  for (qsizetype i = 0; i < text.size(); ++i) {
    if (QChar::isHighSurrogate(text[i].unicode()) && i + 1 < text.size())
      ++i;
    ++n;
  }
  return n;
}

Outcome<ActionSpec> ActionSpec::fromJson(const QJsonObject& json) {
  return fromJson(json, ActionPolicy{});
}

Outcome<ActionSpec> ActionSpec::fromJson(const QJsonObject& json, const ActionPolicy& policy) {
  const QJsonValue typeValue = json.value(QLatin1StringView("type"));
  if (typeValue.isUndefined())
    return invalid(QStringLiteral("type: required"));
  if (!typeValue.isString())
    return invalid(QStringLiteral("type: expected a string"));
  const QString typeText = typeValue.toString();
  ActionSpec spec;
  bool alias = false;
  if (typeText == u"double_click") {
    spec.kind = Kind::Click;
    spec.count = 2;
    alias = true;
  } else if (typeText == u"right_click") {
    spec.kind = Kind::Click;
    spec.button = Button::Right;
    alias = true;
  } else if (const std::optional<Kind> kind = kindFromName(typeText)) {
    spec.kind = *kind;
  } else {
    return invalid(QStringLiteral("type: expected one of click, double_click, right_click, move, drag, "
                                  "scroll, key_chord, hold_key, type_text, wait, done, fail"));
  }
  if (!policy.allows(spec.kind))
    return invalid(QStringLiteral("type: %1 is not one of the grant's action kinds").arg(typeText.left(16)));

  QList<QLatin1StringView> fields;
  switch (spec.kind) {
  case Kind::Click:
    // The original shapes had x and y only: a grant without kinds keeps them exactly.
    fields = policy.legacy ? QList<QLatin1StringView>{QLatin1StringView("x"), QLatin1StringView("y")}
             : alias       ? QList<QLatin1StringView>{QLatin1StringView("x"), QLatin1StringView("y"),
                                                      QLatin1StringView("hold_keys")}
                           : QList<QLatin1StringView>{QLatin1StringView("x"), QLatin1StringView("y"),
                                                      QLatin1StringView("button"), QLatin1StringView("count"),
                                                      QLatin1StringView("hold_keys")};
    break;
  case Kind::Move:
    fields = {QLatin1StringView("x"), QLatin1StringView("y")};
    break;
  case Kind::Drag:
    fields = {QLatin1StringView("path"), QLatin1StringView("button"), QLatin1StringView("hold_keys")};
    break;
  case Kind::Scroll:
    fields = {QLatin1StringView("x"), QLatin1StringView("y"), QLatin1StringView("dx"),
              QLatin1StringView("dy"), QLatin1StringView("hold_keys")};
    break;
  case Kind::KeyChord:
    fields = {QLatin1StringView("keys")};
    break;
  case Kind::HoldKey:
    fields = {QLatin1StringView("keys"), QLatin1StringView("seconds")};
    break;
  case Kind::TypeText:
    fields = {QLatin1StringView("text")};
    break;
  case Kind::Wait:
    fields = {QLatin1StringView("seconds")};
    break;
  case Kind::Done:
  case Kind::Fail:
    break;
  }
  for (auto it = json.constBegin(); it != json.constEnd(); ++it) {
    const QString& key = it.key();
    const bool known = key == u"type" || std::any_of(fields.cbegin(), fields.cend(),
                                                     [&key](QLatin1StringView f) { return key == f; });
    if (!known)
      return invalid(QStringLiteral("%1: unknown field for %2").arg(key.left(40), typeText));
  }

  const bool hasPoint = spec.kind == Kind::Click || spec.kind == Kind::Move || spec.kind == Kind::Scroll;
  if (hasPoint) {
    const Outcome<int> x = coordinate(json, QLatin1StringView("x"));
    if (!x)
      return x.failure();
    const Outcome<int> y = coordinate(json, QLatin1StringView("y"));
    if (!y)
      return y.failure();
    spec.x = *x;
    spec.y = *y;
  }
  if (json.contains(QLatin1StringView("button"))) {
    const QJsonValue b = json.value(QLatin1StringView("button"));
    const auto found = std::find(kButtonNames.begin(), kButtonNames.end(), b.toString());
    if (!b.isString() || found == kButtonNames.end())
      return invalid(QStringLiteral("button: expected left, right, middle, back or forward"));
    spec.button = Button(found - kButtonNames.begin());
  }
  if (json.contains(QLatin1StringView("count"))) {
    const Outcome<int> count = integerField(json, QLatin1StringView("count"), 1, kMaxClickCount);
    if (!count)
      return count.failure();
    spec.count = *count;
  }
  if (json.contains(QLatin1StringView("hold_keys"))) {
    const Outcome<QStringList> hold =
        keyList(json, QLatin1StringView("hold_keys"), kMaxHoldKeys, false, policy.legacy);
    if (!hold)
      return hold.failure();
    spec.holdKeys = *hold;
  }
  switch (spec.kind) {
  case Kind::Drag: {
    const Outcome<QList<QPoint>> path = pathField(json);
    if (!path)
      return path.failure();
    spec.path = *path;
    break;
  }
  case Kind::Scroll: {
    const Outcome<int> dx =
        integerField(json, QLatin1StringView("dx"), -kMaxScrollNotches, kMaxScrollNotches);
    if (!dx)
      return dx.failure();
    const Outcome<int> dy =
        integerField(json, QLatin1StringView("dy"), -kMaxScrollNotches, kMaxScrollNotches);
    if (!dy)
      return dy.failure();
    if (*dx == 0 && *dy == 0)
      return invalid(QStringLiteral("dy: a scroll of no notches"));
    spec.dx = *dx;
    spec.dy = *dy;
    break;
  }
  case Kind::KeyChord:
  case Kind::HoldKey: {
    const bool chord = spec.kind == Kind::KeyChord;
    const Outcome<QStringList> keys =
        keyList(json, QLatin1StringView("keys"), chord ? kMaxChordKeys : kMaxHoldKeys, true, policy.legacy);
    if (!keys)
      return keys.failure();
    spec.keys = *keys;
    if (!chord) {
      const Outcome<int> ms = seconds(json, kMaxHoldMs, true);
      if (!ms)
        return ms.failure();
      spec.ms = *ms;
    }
    break;
  }
  case Kind::TypeText: {
    const Outcome<QString> text = textField(json);
    if (!text)
      return text.failure();
    spec.text = *text;
    break;
  }
  case Kind::Wait: {
    const Outcome<int> ms = seconds(json, kMaxWaitMs, false);
    if (!ms)
      return ms.failure();
    spec.ms = *ms;
    break;
  }
  case Kind::Click:
  case Kind::Move:
  case Kind::Done:
  case Kind::Fail:
    break;
  }
  if (Status admitted = policy.admits(spec); !admitted.ok())
    return admitted.failure();
  return spec;
}

QJsonObject ActionSpec::toJson() const {
  QJsonObject json{{QStringLiteral("type"), typeName()}};
  const bool alias = json.value(QStringLiteral("type")).toString() != kindName(kind);
  auto holdKeysField = [&] {
    if (!holdKeys.isEmpty())
      json.insert(QStringLiteral("hold_keys"), QJsonArray::fromStringList(holdKeys));
  };
  switch (kind) {
  case Kind::Click:
    json.insert(QStringLiteral("x"), x);
    json.insert(QStringLiteral("y"), y);
    if (!alias && button != Button::Left)
      json.insert(QStringLiteral("button"), buttonName(button));
    if (!alias && count != 1)
      json.insert(QStringLiteral("count"), count);
    holdKeysField();
    break;
  case Kind::Move:
    json.insert(QStringLiteral("x"), x);
    json.insert(QStringLiteral("y"), y);
    break;
  case Kind::Drag: {
    QJsonArray points;
    for (const QPoint& p : path)
      points.append(QJsonObject{{QStringLiteral("x"), p.x()}, {QStringLiteral("y"), p.y()}});
    json.insert(QStringLiteral("path"), points);
    if (button != Button::Left)
      json.insert(QStringLiteral("button"), buttonName(button));
    holdKeysField();
    break;
  }
  case Kind::Scroll:
    json.insert(QStringLiteral("x"), x);
    json.insert(QStringLiteral("y"), y);
    json.insert(QStringLiteral("dx"), dx);
    json.insert(QStringLiteral("dy"), dy);
    holdKeysField();
    break;
  case Kind::KeyChord:
    json.insert(QStringLiteral("keys"), QJsonArray::fromStringList(keys));
    break;
  case Kind::HoldKey:
    json.insert(QStringLiteral("keys"), QJsonArray::fromStringList(keys));
    json.insert(QStringLiteral("seconds"), ms / 1000.0);
    break;
  case Kind::TypeText:
    json.insert(QStringLiteral("text"), text);
    break;
  case Kind::Wait:
    json.insert(QStringLiteral("seconds"), ms / 1000.0);
    break;
  case Kind::Done:
  case Kind::Fail:
    break;
  }
  return json;
}

QJsonObject ActionSpec::redactedJson(QByteArrayView key) const {
  QJsonObject json = toJson();
  if (kind == Kind::TypeText) {
    json.remove(QStringLiteral("text"));
    json.insert(QStringLiteral("text_chars"), textChars());
    json.insert(QStringLiteral("text_hmac"),
                QString::fromLatin1(QMessageAuthenticationCode::hash(text.toUtf8(), key.toByteArray(),
                                                                     QCryptographicHash::Sha256)
                                        .toHex()));
  }
  return json;
}

QString ActionSpec::canonical() const {
  const QString name = typeName();
  const bool alias = name != kindName(kind);
  QStringList parts;
  switch (kind) {
  case Kind::Click:
    parts << QString::number(x) << QString::number(y);
    if (!alias && button != Button::Left)
      parts << QStringLiteral("button=") + buttonName(button);
    if (!alias && count != 1)
      parts << QStringLiteral("count=%1").arg(count);
    break;
  case Kind::Move:
    parts << QString::number(x) << QString::number(y);
    break;
  case Kind::Drag: {
    QStringList points;
    for (const QPoint& p : path)
      points << QStringLiteral("%1,%2").arg(p.x()).arg(p.y());
    parts << points.join(QStringLiteral("->"));
    if (button != Button::Left)
      parts << QStringLiteral("button=") + buttonName(button);
    break;
  }
  case Kind::Scroll:
    parts << QString::number(x) << QString::number(y) << QStringLiteral("dx=%1").arg(dx)
          << QStringLiteral("dy=%1").arg(dy);
    break;
  case Kind::KeyChord:
    parts << keys.join(u'+');
    break;
  case Kind::HoldKey:
    parts << keys.join(u'+') << QStringLiteral("%1ms").arg(ms);
    break;
  case Kind::TypeText:
    parts << QStringLiteral("%1 chars").arg(textChars());
    break;
  case Kind::Wait:
    parts << QStringLiteral("%1ms").arg(ms);
    break;
  case Kind::Done:
  case Kind::Fail:
    break;
  }
  if (!holdKeys.isEmpty())
    parts << QStringLiteral("hold=") + holdKeys.join(u'+');
  return QStringLiteral("%1(%2)").arg(name, parts.join(u','));
}

bool ActionPolicy::allows(ActionSpec::Kind kind) const {
  if (legacy)
    return kind == ActionSpec::Kind::Click || kind == ActionSpec::Kind::KeyChord;
  return (kinds >> quint32(kind)) & 1u;
}

Status ActionPolicy::admits(const ActionSpec& spec) const {
  if (!allows(spec.kind))
    return invalid(QStringLiteral("type: %1 is not one of the grant's action kinds").arg(spec.typeName()));
  if (legacy && !spec.isLegacyShape()) {
    const char* field = !spec.holdKeys.isEmpty()                                     ? "hold_keys"
                        : spec.kind == ActionSpec::Kind::KeyChord                    ? "keys"
                        : spec.count != 1 && spec.button == ActionSpec::Button::Left ? "count"
                                                                                     : "button";
    return invalid(QStringLiteral("%1: the grant allows the original click, double_click, right_click and "
                                  "key_chord only (no action.kinds)")
                       .arg(QLatin1StringView(field)));
  }
  switch (spec.kind) {
  case ActionSpec::Kind::TypeText:
    if (spec.textChars() > limits.textChars)
      return invalid(QStringLiteral("text: longer than the grant's %1 characters (action.limits.text_chars)")
                         .arg(limits.textChars));
    break;
  case ActionSpec::Kind::Drag:
    if (spec.path.size() > limits.dragPoints)
      return invalid(QStringLiteral("path: more than the grant's %1 points (action.limits.drag_points)")
                         .arg(limits.dragPoints));
    break;
  case ActionSpec::Kind::HoldKey:
    if (spec.ms > limits.holdMs)
      return invalid(QStringLiteral("seconds: longer than the grant's %1 s (action.limits.hold_seconds)")
                         .arg(limits.holdMs / 1000.0));
    break;
  case ActionSpec::Kind::Wait:
    if (spec.ms > limits.waitMs)
      return invalid(QStringLiteral("seconds: longer than the grant's %1 s (action.limits.wait_seconds)")
                         .arg(limits.waitMs / 1000.0));
    break;
  case ActionSpec::Kind::Scroll:
    if (std::abs(spec.dx) > limits.scrollNotches || std::abs(spec.dy) > limits.scrollNotches)
      return invalid(
          QStringLiteral("%1: more than the grant's %2 notches (action.limits.scroll_notches)")
              .arg(std::abs(spec.dy) > limits.scrollNotches ? QStringLiteral("dy") : QStringLiteral("dx"))
              .arg(limits.scrollNotches));
    break;
  default:
    break;
  }
  return success();
}

QJsonObject ActionPolicy::toJson() const {
  QJsonArray names;
  if (legacy) {
    names = {QStringLiteral("click"), QStringLiteral("double_click"), QStringLiteral("right_click"),
             QStringLiteral("key_chord")};
  } else {
    for (int i = 0; i < ActionSpec::kKindCount; ++i)
      if (allows(ActionSpec::Kind(i)))
        names.append(ActionSpec::kindName(ActionSpec::Kind(i)));
  }
  return {{QStringLiteral("kinds"), names},
          {QStringLiteral("limits"), QJsonObject{{QStringLiteral("text_chars"), limits.textChars},
                                                 {QStringLiteral("drag_points"), limits.dragPoints},
                                                 {QStringLiteral("hold_seconds"), limits.holdMs / 1000.0},
                                                 {QStringLiteral("wait_seconds"), limits.waitMs / 1000.0},
                                                 {QStringLiteral("scroll_notches"), limits.scrollNotches}}},
          {QStringLiteral("text_input"),
           textInput == TextInput::Scancodes ? QStringLiteral("scancodes") : QStringLiteral("unicode")}};
}

} // namespace gc
