// {"osworld": {"action_type": ..., "parameters": {...}}}: OSWorld's computer_13 action space.
// x, y are in the capture's space (the image the model saw); a CLICK without them, SCROLL and DRAG_TO act at
// the pointer's position, which the console must know (it put the pointer there). SCROLL's dx / dy are
// pyautogui's hscroll / vscroll clicks: positive dy is up, so the canonical dy is -dy. Key names are
// pyautogui's. KEY_DOWN / KEY_UP / MOUSE_DOWN / MOUSE_UP leave something held after the one action: refused.
#include "action/dialects/Dialects.h"

namespace gc::dialects {

using namespace detail;

namespace {

const QString kType = QStringLiteral("type");
constexpr double kWaitSeconds = 2.0; // WAIT has no parameters

Outcome<QPoint> point(const QJsonObject& p, const Context& context, bool required) {
  if (p.contains(QStringLiteral("x")) || p.contains(QStringLiteral("y")) || required) {
    const Outcome<int> x = integer(p.value(QStringLiteral("x")), QStringLiteral("parameters.x"));
    if (!x)
      return x.failure();
    const Outcome<int> y = integer(p.value(QStringLiteral("y")), QStringLiteral("parameters.y"));
    if (!y)
      return y.failure();
    return QPoint(*x, *y);
  }
  if (context.pointer)
    return *context.pointer;
  return invalid(QStringLiteral("parameters.x: required (the pointer's position is not known)"));
}

Outcome<QJsonArray> pyKeys(const QJsonValue& v, const QString& field) {
  QStringList spelled;
  if (v.isString()) {
    spelled << v.toString();
  } else if (v.isArray()) {
    for (const QJsonValue& k : v.toArray()) {
      if (!k.isString())
        return invalid(field + QStringLiteral(": expected key names"));
      spelled << k.toString();
    }
  } else {
    return invalid(field + QStringLiteral(": expected key names"));
  }
  return keys(spelled, field);
}

} // namespace

Outcome<QJsonObject> osworld(const QJsonValue& input, const Context& context) {
  const QJsonObject in = input.toObject();
  if (!input.isObject())
    return invalid(QStringLiteral("expected {\"action_type\", \"parameters\"}"));
  if (Status s = fields(in, {QStringLiteral("action_type"), QStringLiteral("parameters")},
                        {QStringLiteral("action_type")});
      !s.ok())
    return s.failure();
  const QString type = in.value(QStringLiteral("action_type")).toString();
  if (in.contains(QStringLiteral("parameters")) && !in.value(QStringLiteral("parameters")).isObject())
    return invalid(QStringLiteral("parameters: expected an object"));
  const QJsonObject p = in.value(QStringLiteral("parameters")).toObject();
  const QStringList xy{QStringLiteral("x"), QStringLiteral("y")};

  if (type == u"CLICK" || type == u"RIGHT_CLICK" || type == u"DOUBLE_CLICK") {
    const bool plain = type == u"CLICK";
    if (Status s = fields(
            p, plain ? xy + QStringList{QStringLiteral("button"), QStringLiteral("num_clicks")} : xy, {});
        !s.ok())
      return s.failure();
    const Outcome<QPoint> q = point(p, context, false);
    if (!q)
      return q.failure();
    QString button = type == u"RIGHT_CLICK" ? QStringLiteral("right") : QStringLiteral("left");
    int count = type == u"DOUBLE_CLICK" ? 2 : 1;
    if (plain && p.contains(QStringLiteral("button"))) {
      button = p.value(QStringLiteral("button")).toString();
      if (button != u"left" && button != u"right" && button != u"middle")
        return invalid(QStringLiteral("parameters.button: expected left, right or middle"));
    }
    if (plain && p.contains(QStringLiteral("num_clicks"))) {
      const Outcome<int> n =
          integer(p.value(QStringLiteral("num_clicks")), QStringLiteral("parameters.num_clicks"));
      if (!n)
        return n.failure();
      count = *n;
    }
    return at(*q, {{kType, QStringLiteral("click")},
                   {QStringLiteral("button"), button},
                   {QStringLiteral("count"), count}});
  }
  if (type == u"MOVE_TO" || type == u"DRAG_TO") {
    if (Status s = fields(p, xy, xy); !s.ok())
      return s.failure();
    const Outcome<QPoint> q = point(p, context, true);
    if (!q)
      return q.failure();
    if (type == u"MOVE_TO")
      return at(*q, {{kType, QStringLiteral("move")}});
    if (!context.pointer)
      return invalid(QStringLiteral("DRAG_TO starts at the pointer, whose position is not known"));
    return QJsonObject{{kType, QStringLiteral("drag")},
                       {QStringLiteral("path"), QJsonArray{at(*context.pointer, {}), at(*q, {})}}};
  }
  if (type == u"SCROLL") {
    if (Status s = fields(p, {QStringLiteral("dx"), QStringLiteral("dy")}, {}); !s.ok())
      return s.failure();
    if (!context.pointer)
      return invalid(QStringLiteral("SCROLL acts at the pointer, whose position is not known"));
    const Outcome<int> dx =
        integer(p.value(QStringLiteral("dx")).isUndefined() ? QJsonValue(0) : p.value(QStringLiteral("dx")),
                QStringLiteral("parameters.dx"));
    if (!dx)
      return dx.failure();
    const Outcome<int> dy =
        integer(p.value(QStringLiteral("dy")).isUndefined() ? QJsonValue(0) : p.value(QStringLiteral("dy")),
                QStringLiteral("parameters.dy"));
    if (!dy)
      return dy.failure();
    return at(*context.pointer,
              {{kType, QStringLiteral("scroll")}, {QStringLiteral("dx"), *dx}, {QStringLiteral("dy"), -*dy}});
  }
  if (type == u"TYPING") {
    if (Status s = fields(p, {QStringLiteral("text")}, {QStringLiteral("text")}); !s.ok())
      return s.failure();
    return QJsonObject{{kType, QStringLiteral("type_text")},
                       {QStringLiteral("text"), p.value(QStringLiteral("text"))}};
  }
  if (type == u"PRESS" || type == u"HOTKEY") {
    const QString field = type == u"PRESS" ? QStringLiteral("key") : QStringLiteral("keys");
    if (Status s = fields(p, {field}, {field}); !s.ok())
      return s.failure();
    const Outcome<QJsonArray> k = pyKeys(p.value(field), QStringLiteral("parameters.") + field);
    if (!k)
      return k.failure();
    return QJsonObject{{kType, QStringLiteral("key_chord")}, {QStringLiteral("keys"), *k}};
  }
  if (type == u"WAIT" || type == u"DONE" || type == u"FAIL") {
    if (Status s = fields(p, {}, {}); !s.ok())
      return s.failure();
    if (type == u"WAIT")
      return QJsonObject{{kType, QStringLiteral("wait")}, {QStringLiteral("seconds"), kWaitSeconds}};
    return QJsonObject{{kType, type == u"DONE" ? QStringLiteral("done") : QStringLiteral("fail")}};
  }
  if (type == u"KEY_DOWN" || type == u"KEY_UP" || type == u"MOUSE_DOWN" || type == u"MOUSE_UP")
    return invalid(QStringLiteral("action_type: %1 would leave input held after the one action").arg(type));
  return invalid(QStringLiteral("action_type: not one of computer_13's actions"));
}

} // namespace gc::dialects
