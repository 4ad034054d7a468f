#include "grant/ActionSpec.h"

#include <QJsonArray>
#include <QSet>

#include <algorithm>
#include <array>
#include <cmath>

namespace gc {

namespace {

// Modifiers in the order a chord presses them.
constexpr std::array<QStringView, 4> kModifiers{u"ctrl", u"alt", u"shift", u"meta"};

constexpr std::array<QStringView, 14> kNamedKeys{u"enter", u"tab", u"escape", u"backspace", u"delete",
                                                 u"space", u"up",  u"down",   u"left",      u"right",
                                                 u"home",  u"end", u"pageup", u"pagedown"};

int modifierRank(QStringView key) {
  for (size_t i = 0; i < kModifiers.size(); ++i) {
    if (kModifiers[i] == key)
      return static_cast<int>(i);
  }
  return -1;
}

bool isFunctionKey(QStringView key) {
  if (key.size() < 2 || key.size() > 3 || key[0] != u'f')
    return false;
  bool ok = false;
  const int n = key.mid(1).toInt(&ok);
  // "f01" is not a key name.
  return ok && n >= 1 && n <= 12 && key[1] != u'0';
}

Failure invalid(const QString& message) {
  return Failure{Refusal::ActionInvalid, message};
}

Outcome<int> coordinate(const QJsonObject& json, QLatin1StringView name) {
  const QJsonValue v = json.value(name);
  if (v.isUndefined())
    return invalid(name + QStringLiteral(": required"));
  const double d = v.toDouble(-1.0);
  if (!v.isDouble() || !std::isfinite(d) || std::floor(d) != d)
    return invalid(name + QStringLiteral(": expected an integer"));
  if (d < 0 || d > ActionSpec::kMaxCoordinate)
    return invalid(name + QStringLiteral(": out of range 0..%1").arg(ActionSpec::kMaxCoordinate));
  return static_cast<int>(d);
}

} // namespace

bool ActionSpec::isModifierKey(QStringView key) {
  return modifierRank(key) >= 0 || key == u"win";
}

bool ActionSpec::isAllowedKey(QStringView key) {
  if (isModifierKey(key) || isFunctionKey(key))
    return true;
  if (key.size() == 1) {
    const char16_t c = key[0].unicode();
    return (c >= u'a' && c <= u'z') || (c >= u'0' && c <= u'9');
  }
  for (QStringView named : kNamedKeys) {
    if (named == key)
      return true;
  }
  return false;
}

QString ActionSpec::typeName(Type type) {
  switch (type) {
  case Type::Click:
    return QStringLiteral("click");
  case Type::DoubleClick:
    return QStringLiteral("double_click");
  case Type::RightClick:
    return QStringLiteral("right_click");
  case Type::KeyChord:
    return QStringLiteral("key_chord");
  }
  return QString();
}

Outcome<ActionSpec> ActionSpec::fromJson(const QJsonObject& json) {
  const QJsonValue typeValue = json.value(QLatin1StringView("type"));
  if (typeValue.isUndefined())
    return invalid(QStringLiteral("type: required"));
  if (!typeValue.isString())
    return invalid(QStringLiteral("type: expected a string"));
  const QString typeText = typeValue.toString();
  ActionSpec spec;
  if (typeText == u"click") {
    spec.type = Type::Click;
  } else if (typeText == u"double_click") {
    spec.type = Type::DoubleClick;
  } else if (typeText == u"right_click") {
    spec.type = Type::RightClick;
  } else if (typeText == u"key_chord") {
    spec.type = Type::KeyChord;
  } else {
    return invalid(QStringLiteral("type: expected click, double_click, right_click or key_chord"));
  }

  const bool pointer = spec.type != Type::KeyChord;
  for (auto it = json.constBegin(); it != json.constEnd(); ++it) {
    const QString& key = it.key();
    const bool known =
        key == u"type" || (pointer && (key == u"x" || key == u"y")) || (!pointer && key == u"keys");
    if (!known)
      return invalid(QStringLiteral("%1: unknown field for %2").arg(key.left(40), typeText));
  }

  if (pointer) {
    const Outcome<int> x = coordinate(json, QLatin1StringView("x"));
    if (!x)
      return x.failure();
    const Outcome<int> y = coordinate(json, QLatin1StringView("y"));
    if (!y)
      return y.failure();
    spec.x = *x;
    spec.y = *y;
    return spec;
  }

  const QJsonValue keysValue = json.value(QLatin1StringView("keys"));
  if (keysValue.isUndefined())
    return invalid(QStringLiteral("keys: required"));
  if (!keysValue.isArray())
    return invalid(QStringLiteral("keys: expected an array"));
  const QJsonArray keys = keysValue.toArray();
  if (keys.isEmpty() || keys.size() > kMaxChordKeys)
    return invalid(QStringLiteral("keys: expected 1..%1 keys").arg(kMaxChordKeys));
  QStringList modifiers;
  QString mainKey;
  for (qsizetype i = 0; i < keys.size(); ++i) {
    const QString where = QStringLiteral("keys[%1]").arg(i);
    if (!keys.at(i).isString())
      return invalid(where + QStringLiteral(": expected a string"));
    QString key = keys.at(i).toString();
    if (!isAllowedKey(key))
      return invalid(where + QStringLiteral(": not an allowed key"));
    if (key == u"win")
      key = QStringLiteral("meta");
    if (modifiers.contains(key) || key == mainKey)
      return invalid(where + QStringLiteral(": duplicate key"));
    if (isModifierKey(key)) {
      modifiers.append(key);
    } else if (!mainKey.isEmpty()) {
      return invalid(where + QStringLiteral(": at most one non-modifier key"));
    } else {
      mainKey = key;
    }
  }
  std::sort(modifiers.begin(), modifiers.end(),
            [](const QString& a, const QString& b) { return modifierRank(a) < modifierRank(b); });
  spec.keys = modifiers;
  if (!mainKey.isEmpty())
    spec.keys.append(mainKey);
  return spec;
}

QJsonObject ActionSpec::toJson() const {
  QJsonObject json{{QStringLiteral("type"), typeName(type)}};
  if (type == Type::KeyChord) {
    json.insert(QStringLiteral("keys"), QJsonArray::fromStringList(keys));
  } else {
    json.insert(QStringLiteral("x"), x);
    json.insert(QStringLiteral("y"), y);
  }
  return json;
}

QString ActionSpec::canonical() const {
  if (type == Type::KeyChord)
    return QStringLiteral("key_chord(%1)").arg(keys.join(u'+'));
  return QStringLiteral("%1(%2,%3)").arg(typeName(type)).arg(x).arg(y);
}

} // namespace gc
