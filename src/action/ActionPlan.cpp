#include "action/ActionPlan.h"

#include "grant/ActionSpecKeys.h"

#include <cmath>
#include <cstdlib>
#include <functional>

namespace gc {
namespace {

constexpr quint16 kShift = 0x2A, kEnter = 0x1C, kTab = 0x0F;

quint8 buttonBit(ActionSpec::Button button) {
  switch (button) {
  case ActionSpec::Button::Left:
    return 0x1;
  case ActionSpec::Button::Right:
    return 0x2;
  case ActionSpec::Button::Middle:
    return 0x4;
  case ActionSpec::Button::Back:
    return kButtonBack;
  case ActionSpec::Button::Forward:
    return kButtonForward;
  }
  return 0x1;
}

class Builder {
public:
  QList<InputEvent> events;

  quint64 next() const { return quint64(events.size() + 1); }
  void key(quint16 code, bool down) { events.append(InputEvent::key(next(), code, down)); }
  void pointer(int x, int y, quint8 buttons, qint16 wheel = 0, bool horizontal = false) {
    InputEvent e = InputEvent::pointer(next(), quint16(x), quint16(y), buttons, wheel);
    e.horizontal = horizontal;
    events.append(e);
  }
  void unicode(quint16 unit) {
    events.append(InputEvent::unicode(next(), unit, true));
    events.append(InputEvent::unicode(next(), unit, false));
  }
  void tap(quint16 code) {
    key(code, true);
    key(code, false);
  }
  void pause(int ms) { events.append(InputEvent::pause(next(), quint32(ms))); }
};

Outcome<QList<quint16>> codesOf(const QStringList& keys) {
  QList<quint16> codes;
  for (const QString& key : keys) {
    const std::optional<quint16> code = ActionPlan::scancode(key);
    if (!code)
      return Failure{Refusal::ActionInvalid, QStringLiteral("no scancode for key %1").arg(key.left(16))};
    codes.append(*code);
  }
  return codes;
}

Status inside(QPoint p, QSize frame) {
  if (p.x() < 0 || p.y() < 0 || p.x() >= frame.width() || p.y() >= frame.height())
    return Failure{Refusal::ActionInvalid, QStringLiteral("(%1,%2) lies outside the %3x%4 desktop")
                                               .arg(p.x())
                                               .arg(p.y())
                                               .arg(frame.width())
                                               .arg(frame.height())};
  return success();
}

Failure unsupported(const QString& what) {
  return Failure{Refusal::ActionUnsupported, what};
}

// US layout (KLID 0x00000409), printable ASCII: unshifted and shifted characters per make code.
struct UsKey {
  char16_t plain;
  char16_t shifted;
  quint16 code;
};
constexpr UsKey kUs[] = {
    {u'1', u'!', 0x02}, {u'2', u'@', 0x03},  {u'3', u'#', 0x04}, {u'4', u'$', 0x05}, {u'5', u'%', 0x06},
    {u'6', u'^', 0x07}, {u'7', u'&', 0x08},  {u'8', u'*', 0x09}, {u'9', u'(', 0x0A}, {u'0', u')', 0x0B},
    {u'-', u'_', 0x0C}, {u'=', u'+', 0x0D},  {u'q', u'Q', 0x10}, {u'w', u'W', 0x11}, {u'e', u'E', 0x12},
    {u'r', u'R', 0x13}, {u't', u'T', 0x14},  {u'y', u'Y', 0x15}, {u'u', u'U', 0x16}, {u'i', u'I', 0x17},
    {u'o', u'O', 0x18}, {u'p', u'P', 0x19},  {u'[', u'{', 0x1A}, {u']', u'}', 0x1B}, {u'a', u'A', 0x1E},
    {u's', u'S', 0x1F}, {u'd', u'D', 0x20},  {u'f', u'F', 0x21}, {u'g', u'G', 0x22}, {u'h', u'H', 0x23},
    {u'j', u'J', 0x24}, {u'k', u'K', 0x25},  {u'l', u'L', 0x26}, {u';', u':', 0x27}, {u'\'', u'"', 0x28},
    {u'`', u'~', 0x29}, {u'\\', u'|', 0x2B}, {u'z', u'Z', 0x2C}, {u'x', u'X', 0x2D}, {u'c', u'C', 0x2E},
    {u'v', u'V', 0x2F}, {u'b', u'B', 0x30},  {u'n', u'N', 0x31}, {u'm', u'M', 0x32}, {u',', u'<', 0x33},
    {u'.', u'>', 0x34}, {u'/', u'?', 0x35},  {u' ', u' ', 0x39},
};

void withHeld(Builder& b, const QList<quint16>& held, const std::function<void()>& body) {
  for (quint16 code : held)
    b.key(code, true);
  body();
  for (auto it = held.crbegin(); it != held.crend(); ++it)
    b.key(*it, false);
}

} // namespace

std::optional<quint16> ActionPlan::scancode(QStringView key) {
  if (key == u"win")
    return ActionSpecKeys::scancode(u"meta");
  return ActionSpecKeys::scancode(key);
}

std::optional<ActionPlan::Typed> ActionPlan::usScancode(char16_t c) {
  for (const UsKey& k : kUs) {
    if (k.plain == c)
      return Typed{k.code, false};
    if (k.shifted == c)
      return Typed{k.code, true};
  }
  return std::nullopt;
}

Outcome<QList<InputEvent>> ActionPlan::plan(const ActionSpec& action, QSize frame, const Context& context) {
  Builder b;
  const Outcome<QList<quint16>> held = codesOf(action.holdKeys);
  if (!held)
    return held.failure();
  using K = ActionSpec::Kind;
  switch (action.kind) {
  case K::Click:
  case K::Move:
  case K::Scroll: {
    if (Status s = inside(QPoint(action.x, action.y), frame); !s.ok())
      return s.failure();
    break;
  }
  case K::Drag:
    for (const QPoint& p : action.path)
      if (Status s = inside(p, frame); !s.ok())
        return s.failure();
    break;
  default:
    break;
  }
  const quint8 button = buttonBit(action.button);
  const bool needsX =
      (action.kind == K::Click || action.kind == K::Drag) &&
      (action.button == ActionSpec::Button::Back || action.button == ActionSpec::Button::Forward);
  if (needsX && !context.caps.extendedButtons)
    return unsupported(QStringLiteral(
        "the guest's RDP server does not advertise the extended mouse buttons (back, forward)"));

  switch (action.kind) {
  case K::Click:
    withHeld(b, *held, [&] {
      for (int i = 0; i < action.count; ++i) {
        b.pointer(action.x, action.y, 0);
        b.pointer(action.x, action.y, button);
        b.pointer(action.x, action.y, 0);
      }
    });
    break;
  case K::Move:
    b.pointer(action.x, action.y, 0);
    break;
  case K::Drag:
    withHeld(b, *held, [&] {
      const QPoint first = action.path.first();
      b.pointer(first.x(), first.y(), 0);
      b.pointer(first.x(), first.y(), button);
      for (qsizetype i = 1; i < action.path.size(); ++i) {
        const QPoint from = action.path[i - 1], to = action.path[i];
        const double dist = std::hypot(double(to.x() - from.x()), double(to.y() - from.y()));
        const int steps = std::max(1, int(std::ceil(dist / kDragStep)));
        for (int s = 1; s <= steps; ++s) {
          const int x = from.x() + int(std::lround(double(to.x() - from.x()) * s / steps));
          const int y = from.y() + int(std::lround(double(to.y() - from.y()) * s / steps));
          b.pointer(x, y, button);
        }
      }
      const QPoint last = action.path.last();
      b.pointer(last.x(), last.y(), 0);
    });
    break;
  case K::Scroll:
    if (action.dx != 0 && !context.caps.horizontalWheel)
      return unsupported(QStringLiteral("the guest's RDP server does not advertise the horizontal wheel"));
    withHeld(b, *held, [&] {
      b.pointer(action.x, action.y, 0);
      // RDP's positive rotation is away from the user: the view scrolls up.
      for (int i = 0; i < std::abs(action.dy); ++i)
        b.pointer(action.x, action.y, 0, action.dy > 0 ? qint16(-kNotch) : kNotch);
      for (int i = 0; i < std::abs(action.dx); ++i)
        b.pointer(action.x, action.y, 0, action.dx > 0 ? kNotch : qint16(-kNotch), true);
    });
    break;
  case K::KeyChord:
  case K::HoldKey: {
    if (action.keys.isEmpty())
      return Failure{Refusal::ActionInvalid, QStringLiteral("%1 without keys").arg(action.typeName())};
    const Outcome<QList<quint16>> codes = codesOf(action.keys);
    if (!codes)
      return codes.failure();
    // Modifiers first, in press order, then the key: press in that order, release in
    // reverse, so the modifiers wrap the key.
    withHeld(b, *codes, [&] {
      if (action.kind == K::HoldKey)
        b.pause(action.ms);
    });
    break;
  }
  case K::TypeText: {
    const QString& text = action.text;
    // text_input "scancodes" types with scancodes even where the server advertises Unicode
    // input: a server may advertise it and drop every Unicode event (FreeRDP 3.10's X11
    // shadow server: x11_shadow_input_unicode_keyboard_event is a stub, server/shadow/X11/
    // x11_shadow.c), and the console cannot see that; the grant's author can choose.
    const bool unicode = context.caps.unicode && context.textInput != ActionPolicy::TextInput::Scancodes;
    if (!unicode) {
      if (context.textInput != ActionPolicy::TextInput::Scancodes)
        return unsupported(QStringLiteral("the guest's RDP server does not advertise Unicode keyboard input "
                                          "(the grant's text_input is \"unicode\")"));
      if (context.keyboardLayout != 0x00000409)
        return unsupported(QStringLiteral("the grant types text as keys (text_input), and that knows the US "
                                          "layout (0x00000409) only"));
      for (qsizetype i = 0; i < text.size(); ++i) {
        const char16_t c = text[i].unicode();
        if (c != u'\n' && c != u'\r' && c != u'\t' && !usScancode(c))
          return unsupported(QStringLiteral("the grant types text as keys (text_input), and character %1 of "
                                            "the text has no key on the grant's layout")
                                 .arg(i));
      }
    }
    for (qsizetype i = 0; i < text.size(); ++i) {
      const char16_t c = text[i].unicode();
      if (c == u'\r' || c == u'\n') {
        if (c == u'\r' && i + 1 < text.size() && text[i + 1] == u'\n')
          ++i;
        b.tap(kEnter);
      } else if (c == u'\t') {
        b.tap(kTab);
      } else if (unicode) {
        b.unicode(c);
      } else {
        const Typed t = *usScancode(c);
        if (t.shift)
          b.key(kShift, true);
        b.tap(t.scancode);
        if (t.shift)
          b.key(kShift, false);
      }
    }
    break;
  }
  case K::Wait:
    b.pause(action.ms);
    break;
  case K::Done:
  case K::Fail:
    break;
  }
  return b.events;
}

} // namespace gc
