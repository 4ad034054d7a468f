// {"anthropic": <input of Anthropic's computer tool>} (computer_20250124): the "action" names
// the kind; "coordinate" is [x, y] in the capture's space (the image capture_desktop returned); "text"
// carries the typed text, the xdotool key combination of key / hold_key, or the modifiers held during a click
// or scroll; "duration" is seconds; "scroll_amount" is wheel notches.
#include "action/dialects/Dialects.h"

#include <QJsonArray>

namespace gc::dialects {

using namespace detail;

namespace {

const QString kType = QStringLiteral("type");

struct Click {
  QStringView action;
  const char* button;
  int count;
};
constexpr Click kClicks[] = {{u"left_click", "left", 1},
                             {u"right_click", "right", 1},
                             {u"middle_click", "middle", 1},
                             {u"double_click", "left", 2},
                             {u"triple_click", "left", 3}};
// What the tool offers that is not one action of the console.
constexpr QStringView kRefused[] = {u"screenshot", u"cursor_position", u"left_mouse_down", u"left_mouse_up"};

Outcome<QPoint> where(const QJsonObject& in, const Context& context) {
  if (in.contains(QStringLiteral("coordinate")))
    return pair(in.value(QStringLiteral("coordinate")), QStringLiteral("coordinate"));
  if (context.pointer)
    return *context.pointer;
  return invalid(QStringLiteral("coordinate: required (the pointer's position is not known)"));
}

Outcome<QJsonArray> combo(const QJsonObject& in) {
  const QJsonValue text = in.value(QStringLiteral("text"));
  if (!text.isString() || text.toString().isEmpty() || text.toString().contains(u' '))
    return invalid(QStringLiteral("text: expected one xdotool key combination such as \"ctrl+s\""));
  return keys(text.toString().split(u'+'), QStringLiteral("text"));
}

// A click's or scroll's `text`: the keys held around it, as the canonical hold_keys.
Status holdKeys(const QJsonObject& in, QJsonObject& out) {
  if (!in.contains(QStringLiteral("text")))
    return success();
  const Outcome<QJsonArray> held = combo(in);
  if (!held)
    return Status(held.failure());
  out.insert(QStringLiteral("hold_keys"), *held);
  return success();
}

Outcome<QJsonValue> seconds(const QJsonObject& in) {
  const QJsonValue d = in.value(QStringLiteral("duration"));
  if (!d.isDouble())
    return invalid(QStringLiteral("duration: expected seconds"));
  return d;
}

} // namespace

Outcome<QJsonObject> anthropic(const QJsonValue& input, const Context& context) {
  if (!input.isObject())
    return invalid(QStringLiteral("expected the computer tool's input object"));
  const QJsonObject in = input.toObject();
  const QString action = in.value(QStringLiteral("action")).toString();
  // An observation, not an action: zoom_desktop serves it without using the action up.
  if (action == u"zoom")
    return invalid(QStringLiteral("action: zoom is an observation, not an action: call zoom_desktop "
                                  "{\"region\": [x0, y0, x1, y1]}"));
  for (QStringView refused : kRefused)
    if (refused == action)
      return invalid(QStringLiteral("action: %1 is not an action the console performs").arg(action));

  for (const Click& c : kClicks) {
    if (c.action != action)
      continue;
    if (Status s =
            fields(in, {QStringLiteral("action"), QStringLiteral("coordinate"), QStringLiteral("text")}, {});
        !s.ok())
      return s.failure();
    const Outcome<QPoint> p = where(in, context);
    if (!p)
      return p.failure();
    QJsonObject out{{kType, QStringLiteral("click")},
                    {QStringLiteral("button"), QLatin1StringView(c.button)},
                    {QStringLiteral("count"), c.count}};
    if (Status s = holdKeys(in, out); !s.ok())
      return s.failure();
    return at(*p, out);
  }
  if (action == u"mouse_move") {
    if (Status s = fields(in, {QStringLiteral("action"), QStringLiteral("coordinate")},
                          {QStringLiteral("coordinate")});
        !s.ok())
      return s.failure();
    const Outcome<QPoint> p = where(in, context);
    if (!p)
      return p.failure();
    return at(*p, {{kType, QStringLiteral("move")}});
  }
  if (action == u"left_click_drag") {
    if (Status s = fields(
            in, {QStringLiteral("action"), QStringLiteral("start_coordinate"), QStringLiteral("coordinate")},
            {QStringLiteral("coordinate")});
        !s.ok())
      return s.failure();
    const Outcome<QPoint> start =
        in.contains(QStringLiteral("start_coordinate"))
            ? pair(in.value(QStringLiteral("start_coordinate")), QStringLiteral("start_coordinate"))
            : (context.pointer
                   ? Outcome<QPoint>(*context.pointer)
                   : Outcome<QPoint>(invalid(QStringLiteral("start_coordinate: required (the pointer's "
                                                            "position is not known)"))));
    if (!start)
      return start.failure();
    const Outcome<QPoint> end = pair(in.value(QStringLiteral("coordinate")), QStringLiteral("coordinate"));
    if (!end)
      return end.failure();
    return QJsonObject{{kType, QStringLiteral("drag")},
                       {QStringLiteral("path"), QJsonArray{at(*start, {}), at(*end, {})}}};
  }
  if (action == u"scroll") {
    if (Status s = fields(in,
                          {QStringLiteral("action"), QStringLiteral("coordinate"),
                           QStringLiteral("scroll_direction"), QStringLiteral("scroll_amount"),
                           QStringLiteral("text")},
                          {QStringLiteral("scroll_direction"), QStringLiteral("scroll_amount")});
        !s.ok())
      return s.failure();
    const Outcome<QPoint> p = where(in, context);
    if (!p)
      return p.failure();
    const Outcome<int> amount =
        integer(in.value(QStringLiteral("scroll_amount")), QStringLiteral("scroll_amount"));
    if (!amount)
      return amount.failure();
    if (*amount < 1)
      return invalid(QStringLiteral("scroll_amount: at least 1"));
    const QString direction = in.value(QStringLiteral("scroll_direction")).toString();
    int dx = 0, dy = 0;
    if (direction == u"down")
      dy = *amount;
    else if (direction == u"up")
      dy = -*amount;
    else if (direction == u"right")
      dx = *amount;
    else if (direction == u"left")
      dx = -*amount;
    else
      return invalid(QStringLiteral("scroll_direction: expected up, down, left or right"));
    QJsonObject out{
        {kType, QStringLiteral("scroll")}, {QStringLiteral("dx"), dx}, {QStringLiteral("dy"), dy}};
    if (Status s = holdKeys(in, out); !s.ok())
      return s.failure();
    return at(*p, out);
  }
  if (action == u"key" || action == u"hold_key") {
    const bool hold = action == u"hold_key";
    QStringList allowed{QStringLiteral("action"), QStringLiteral("text")};
    if (hold)
      allowed << QStringLiteral("duration");
    if (Status s = fields(in, allowed, allowed); !s.ok())
      return s.failure();
    const Outcome<QJsonArray> k = combo(in);
    if (!k)
      return k.failure();
    QJsonObject out{{kType, hold ? QStringLiteral("hold_key") : QStringLiteral("key_chord")},
                    {QStringLiteral("keys"), *k}};
    if (hold) {
      const Outcome<QJsonValue> d = seconds(in);
      if (!d)
        return d.failure();
      out.insert(QStringLiteral("seconds"), *d);
    }
    return out;
  }
  if (action == u"type") {
    if (Status s = fields(in, {QStringLiteral("action"), QStringLiteral("text")}, {QStringLiteral("text")});
        !s.ok())
      return s.failure();
    return QJsonObject{{kType, QStringLiteral("type_text")},
                       {QStringLiteral("text"), in.value(QStringLiteral("text"))}};
  }
  if (action == u"wait") {
    if (Status s =
            fields(in, {QStringLiteral("action"), QStringLiteral("duration")}, {QStringLiteral("duration")});
        !s.ok())
      return s.failure();
    const Outcome<QJsonValue> d = seconds(in);
    if (!d)
      return d.failure();
    return QJsonObject{{kType, QStringLiteral("wait")}, {QStringLiteral("seconds"), *d}};
  }
  return invalid(QStringLiteral("action: expected one of the computer tool's actions"));
}

} // namespace gc::dialects
