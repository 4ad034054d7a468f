// {"openai": <one action of OpenAI's computer-use tool>}: "type" names the kind; x, y are in
// the capture's space; scroll_x / scroll_y are pixels (positive: right / down, as a DOM
// wheel's delta), turned into wheel notches of kPixelsPerNotch, rounded half away from zero,
// at least one notch for any non-zero amount. A list of several actions is refused, never
// split: the console performs one.
#include "action/dialects/Dialects.h"

#include <cmath>
#include <cstdlib>

namespace gc::dialects {

using namespace detail;

namespace {

const QString kType = QStringLiteral("type");
constexpr int kPixelsPerNotch = 100; // one wheel tick in Chromium (the samples drive Playwright)
constexpr double kWaitSeconds = 2.0; // "wait" carries no duration; the samples wait 2 s

struct Button {
  QStringView openai;
  const char* canonical;
};
constexpr Button kButtons[] = {
    {u"left", "left"}, {u"right", "right"}, {u"wheel", "middle"}, {u"back", "back"}, {u"forward", "forward"}};

Outcome<QPoint> xy(const QJsonObject& in) {
  const Outcome<int> x = integer(in.value(QStringLiteral("x")), QStringLiteral("x"));
  if (!x)
    return x.failure();
  const Outcome<int> y = integer(in.value(QStringLiteral("y")), QStringLiteral("y"));
  if (!y)
    return y.failure();
  return QPoint(*x, *y);
}

int notches(int pixels) {
  if (pixels == 0)
    return 0;
  const int n = std::max(1, int(std::lround(std::abs(pixels) / double(kPixelsPerNotch))));
  return pixels > 0 ? n : -n;
}

} // namespace

Outcome<QJsonObject> openai(const QJsonValue& input, const Context&) {
  if (input.isArray())
    return invalid(
        QStringLiteral("a batch of %1 actions: the console performs exactly one, it does not split them")
            .arg(input.toArray().size()));
  if (!input.isObject())
    return invalid(QStringLiteral("expected one computer-use action object"));
  const QJsonObject in = input.toObject();
  const QString type = in.value(kType).toString();
  const QStringList point{kType, QStringLiteral("x"), QStringLiteral("y")};

  if (type == u"click") {
    if (Status s = fields(in, point + QStringList{QStringLiteral("button")}, point); !s.ok())
      return s.failure();
    const Outcome<QPoint> p = xy(in);
    if (!p)
      return p.failure();
    const QString button = in.value(QStringLiteral("button")).toString(QStringLiteral("left"));
    for (const Button& b : kButtons)
      if (b.openai == button)
        return at(*p, {{kType, QStringLiteral("click")},
                       {QStringLiteral("button"), QLatin1StringView(b.canonical)}});
    return invalid(QStringLiteral("button: expected left, right, wheel, back or forward"));
  }
  if (type == u"double_click" || type == u"move") {
    if (Status s = fields(in, point, point); !s.ok())
      return s.failure();
    const Outcome<QPoint> p = xy(in);
    if (!p)
      return p.failure();
    return type == u"move" ? at(*p, {{kType, QStringLiteral("move")}})
                           : at(*p, {{kType, QStringLiteral("click")}, {QStringLiteral("count"), 2}});
  }
  if (type == u"drag") {
    if (Status s = fields(in, {kType, QStringLiteral("path")}, {QStringLiteral("path")}); !s.ok())
      return s.failure();
    QJsonArray path;
    const QJsonArray given = in.value(QStringLiteral("path")).toArray();
    for (qsizetype i = 0; i < given.size(); ++i) {
      const QJsonObject p = given.at(i).toObject();
      const QString where = QStringLiteral("path[%1]").arg(i);
      if (!given.at(i).isObject() || p.size() != 2)
        return invalid(where + QStringLiteral(": expected {x, y}"));
      const Outcome<QPoint> q = xy(p);
      if (!q)
        return invalid(where + QStringLiteral(".") + q.failure().message);
      path.append(at(*q, {}));
    }
    return QJsonObject{{kType, QStringLiteral("drag")}, {QStringLiteral("path"), path}};
  }
  if (type == u"scroll") {
    const QStringList all = point + QStringList{QStringLiteral("scroll_x"), QStringLiteral("scroll_y")};
    if (Status s = fields(in, all, all); !s.ok())
      return s.failure();
    const Outcome<QPoint> p = xy(in);
    if (!p)
      return p.failure();
    const Outcome<int> sx = integer(in.value(QStringLiteral("scroll_x")), QStringLiteral("scroll_x"));
    if (!sx)
      return sx.failure();
    const Outcome<int> sy = integer(in.value(QStringLiteral("scroll_y")), QStringLiteral("scroll_y"));
    if (!sy)
      return sy.failure();
    return at(*p, {{kType, QStringLiteral("scroll")},
                   {QStringLiteral("dx"), notches(*sx)},
                   {QStringLiteral("dy"), notches(*sy)}});
  }
  if (type == u"keypress") {
    if (Status s = fields(in, {kType, QStringLiteral("keys")}, {QStringLiteral("keys")}); !s.ok())
      return s.failure();
    QStringList spelled;
    for (const QJsonValue& k : in.value(QStringLiteral("keys")).toArray()) {
      if (!k.isString())
        return invalid(QStringLiteral("keys: expected strings"));
      spelled << k.toString();
    }
    const Outcome<QJsonArray> k = keys(spelled, QStringLiteral("keys"));
    if (!k)
      return k.failure();
    return QJsonObject{{kType, QStringLiteral("key_chord")}, {QStringLiteral("keys"), *k}};
  }
  if (type == u"type") {
    if (Status s = fields(in, {kType, QStringLiteral("text")}, {QStringLiteral("text")}); !s.ok())
      return s.failure();
    return QJsonObject{{kType, QStringLiteral("type_text")},
                       {QStringLiteral("text"), in.value(QStringLiteral("text"))}};
  }
  if (type == u"wait") {
    if (Status s = fields(in, {kType}, {}); !s.ok())
      return s.failure();
    return QJsonObject{{kType, QStringLiteral("wait")}, {QStringLiteral("seconds"), kWaitSeconds}};
  }
  if (type == u"screenshot")
    return invalid(QStringLiteral("type: screenshot is capture_desktop, not an action"));
  return invalid(
      QStringLiteral("type: expected click, double_click, drag, keypress, move, scroll, type or wait"));
}

} // namespace gc::dialects
