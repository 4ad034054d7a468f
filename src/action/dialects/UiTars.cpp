// {"ui_tars": "click(start_box='(500,300)')"}: one call of UI-TARS' action grammar. Points
// are normalised to 0..1000 on both axes and mapped to the desktop exactly:
// pixel = round(v * size / 1000) (half up), at most size - 1; a box [x1, y1, x2, y2] means its
// centre, computed before the rounding. Boxes may be written (x,y), [x1, y1, x2, y2],
// <|box_start|>(x,y)<|box_end|> or <point>x y</point> (start_box / point, end_box / end_point).
// scroll carries no amount: kScrollNotches. wait() is UI-TARS' 5 s. More than one call is
// refused.
#include "action/dialects/Dialects.h"

#include <QMap>
#include <QRegularExpression>

namespace gc::dialects {

using namespace detail;

namespace {

const QString kType = QStringLiteral("type");
constexpr int kScrollNotches = 5;
constexpr double kWaitSeconds = 5.0;
constexpr qsizetype kMaxCall = 8192;

// name(arg='value', arg2="value"): the quoted values with \\, \', \", \n, \t unescaped.
struct Call {
  QString name;
  QMap<QString, QString> args;
};

Outcome<Call> parse(const QString& text) {
  if (text.size() > kMaxCall)
    return invalid(QStringLiteral("longer than %1 characters").arg(kMaxCall));
  const QString s = text.trimmed();
  qsizetype i = 0;
  Call call;
  while (i < s.size() && (s[i].isLower() || s[i] == u'_'))
    call.name.append(s[i++]);
  auto skip = [&] {
    while (i < s.size() && s[i].isSpace())
      ++i;
  };
  if (call.name.isEmpty() || i >= s.size() || s[i] != u'(')
    return invalid(QStringLiteral("expected one call such as click(start_box='(500,300)')"));
  ++i;
  skip();
  while (i < s.size() && s[i] != u')') {
    QString name;
    while (i < s.size() && (s[i].isLetterOrNumber() || s[i] == u'_'))
      name.append(s[i++]);
    skip();
    if (name.isEmpty() || i >= s.size() || s[i] != u'=')
      return invalid(QStringLiteral("expected name='value' arguments"));
    ++i;
    skip();
    if (i >= s.size() || (s[i] != u'\'' && s[i] != u'"'))
      return invalid(QStringLiteral("%1: expected a quoted value").arg(name));
    const QChar quote = s[i++];
    QString value;
    bool closed = false;
    while (i < s.size()) {
      const QChar c = s[i++];
      if (c == quote) {
        closed = true;
        break;
      }
      if (c == u'\\' && i < s.size()) {
        const QChar e = s[i++];
        value.append(e == u'n' ? QChar(u'\n') : e == u't' ? QChar(u'\t') : e);
      } else {
        value.append(c);
      }
    }
    if (!closed)
      return invalid(QStringLiteral("%1: an unterminated value").arg(name));
    if (call.args.contains(name))
      return invalid(QStringLiteral("%1: given twice").arg(name));
    call.args.insert(name, value);
    skip();
    if (i < s.size() && s[i] == u',') {
      ++i;
      skip();
    }
  }
  if (i >= s.size())
    return invalid(QStringLiteral("an unterminated call"));
  ++i;
  if (i != s.size())
    return invalid(QStringLiteral("more than one call: the console performs exactly one action"));
  return call;
}

int mapAxis(qint64 numerator, qint64 denominator, int size) {
  // round(numerator * size / denominator), half up, clamped to the last pixel.
  const qint64 px = (2 * numerator * size + denominator) / (2 * denominator);
  return int(std::clamp<qint64>(px, 0, size - 1));
}

Outcome<QPoint> box(const QString& value, const QString& field, QSize desktop) {
  QString v = value;
  for (const char* token : {"<|box_start|>", "<|box_end|>", "<point>", "</point>", "(", ")", "[", "]"})
    v.replace(QLatin1StringView(token), QStringLiteral(" "));
  static const QRegularExpression separators(QStringLiteral("[\\s,]+"));
  const QStringList parts = v.split(separators, Qt::SkipEmptyParts);
  if (parts.size() != 2 && parts.size() != 4)
    return invalid(field + QStringLiteral(": expected (x,y) or [x1, y1, x2, y2] in 0..1000"));
  QList<qint64> n;
  for (const QString& p : parts) {
    bool ok = false;
    const int x = p.toInt(&ok);
    if (!ok || x < 0 || x > 1000)
      return invalid(field + QStringLiteral(": coordinates are integers in 0..1000"));
    n.append(x);
  }
  if (desktop.isEmpty())
    return invalid(field + QStringLiteral(": no captured desktop to map onto"));
  if (n.size() == 2)
    return QPoint(mapAxis(n[0], 1000, desktop.width()), mapAxis(n[1], 1000, desktop.height()));
  return QPoint(mapAxis(n[0] + n[2], 2000, desktop.width()), mapAxis(n[1] + n[3], 2000, desktop.height()));
}

Outcome<QPoint> arg(const Call& c, const QString& boxName, const QString& pointName, QSize desktop) {
  if (c.args.contains(boxName))
    return box(c.args.value(boxName), boxName, desktop);
  if (c.args.contains(pointName))
    return box(c.args.value(pointName), pointName, desktop);
  return invalid(boxName + QStringLiteral(": required"));
}

Status only(const Call& c, const QStringList& allowed) {
  for (auto it = c.args.cbegin(); it != c.args.cend(); ++it)
    if (!allowed.contains(it.key()))
      return invalid(QStringLiteral("%1: not an argument of %2").arg(it.key().left(32), c.name));
  return success();
}

} // namespace

Outcome<QJsonObject> uiTars(const QJsonValue& input, const Context& context) {
  if (!input.isString())
    return invalid(QStringLiteral("expected the call as a string"));
  const Outcome<Call> parsed = parse(input.toString());
  if (!parsed)
    return parsed.failure();
  const Call& c = *parsed;
  const QStringList at1{QStringLiteral("start_box"), QStringLiteral("point")};

  struct Click {
    QStringView name;
    const char* button;
    int count;
  };
  static constexpr Click kClicks[] = {
      {u"click", "left", 1}, {u"left_double", "left", 2}, {u"right_single", "right", 1}};
  for (const Click& k : kClicks) {
    if (k.name != c.name)
      continue;
    if (Status s = only(c, at1); !s.ok())
      return s.failure();
    const Outcome<QPoint> p = arg(c, QStringLiteral("start_box"), QStringLiteral("point"), context.desktop);
    if (!p)
      return p.failure();
    return at(*p, {{kType, QStringLiteral("click")},
                   {QStringLiteral("button"), QLatin1StringView(k.button)},
                   {QStringLiteral("count"), k.count}});
  }
  if (c.name == u"drag") {
    if (Status s = only(c, {QStringLiteral("start_box"), QStringLiteral("end_box"),
                            QStringLiteral("start_point"), QStringLiteral("end_point")});
        !s.ok())
      return s.failure();
    const Outcome<QPoint> from =
        arg(c, QStringLiteral("start_box"), QStringLiteral("start_point"), context.desktop);
    if (!from)
      return from.failure();
    const Outcome<QPoint> to =
        arg(c, QStringLiteral("end_box"), QStringLiteral("end_point"), context.desktop);
    if (!to)
      return to.failure();
    return QJsonObject{{kType, QStringLiteral("drag")},
                       {QStringLiteral("path"), QJsonArray{at(*from, {}), at(*to, {})}}};
  }
  if (c.name == u"scroll") {
    if (Status s = only(c, at1 + QStringList{QStringLiteral("direction")}); !s.ok())
      return s.failure();
    const Outcome<QPoint> p = arg(c, QStringLiteral("start_box"), QStringLiteral("point"), context.desktop);
    if (!p)
      return p.failure();
    const QString d = c.args.value(QStringLiteral("direction")).trimmed();
    const int dx = d == u"right" ? kScrollNotches : d == u"left" ? -kScrollNotches : 0;
    const int dy = d == u"down" ? kScrollNotches : d == u"up" ? -kScrollNotches : 0;
    if (dx == 0 && dy == 0)
      return invalid(QStringLiteral("direction: expected up, down, left or right"));
    return at(*p,
              {{kType, QStringLiteral("scroll")}, {QStringLiteral("dx"), dx}, {QStringLiteral("dy"), dy}});
  }
  if (c.name == u"hotkey" || c.name == u"press") {
    if (Status s = only(c, {QStringLiteral("key")}); !s.ok())
      return s.failure();
    const Outcome<QJsonArray> k =
        keys(c.args.value(QStringLiteral("key")).split(u' ', Qt::SkipEmptyParts), QStringLiteral("key"));
    if (!k)
      return k.failure();
    return QJsonObject{{kType, QStringLiteral("key_chord")}, {QStringLiteral("keys"), *k}};
  }
  if (c.name == u"type") {
    if (Status s = only(c, {QStringLiteral("content")}); !s.ok())
      return s.failure();
    return QJsonObject{{kType, QStringLiteral("type_text")},
                       {QStringLiteral("text"), c.args.value(QStringLiteral("content"))}};
  }
  if (c.name == u"wait") {
    if (Status s = only(c, {}); !s.ok())
      return s.failure();
    return QJsonObject{{kType, QStringLiteral("wait")}, {QStringLiteral("seconds"), kWaitSeconds}};
  }
  if (c.name == u"finished" || c.name == u"call_user") {
    if (Status s = only(c, {QStringLiteral("content")}); !s.ok())
      return s.failure();
    return QJsonObject{{kType, c.name == u"finished" ? QStringLiteral("done") : QStringLiteral("fail")}};
  }
  return invalid(QStringLiteral("%1: not one of UI-TARS' actions").arg(c.name.left(32)));
}

} // namespace gc::dialects
