#include "action/ActionPlan.h"

#include <array>
#include <utility>

namespace gc {
namespace {

constexpr quint8 kLeft = 0x1;
constexpr quint8 kRight = 0x2;

// Set-1 make codes of a US layout (MS-RDPBCGR 2.2.8.1.1.3.1.1.1 carries these as-is).
constexpr std::array<std::pair<QStringView, quint16>, 36> kNamed{{
    {u"ctrl", 0x1D},   {u"alt", 0x38},   {u"shift", 0x2A},    {u"meta", 0xE05B},     {u"win", 0xE05B},
    {u"enter", 0x1C},  {u"tab", 0x0F},   {u"escape", 0x01},   {u"backspace", 0x0E},  {u"delete", 0xE053},
    {u"space", 0x39},  {u"up", 0xE048},  {u"down", 0xE050},   {u"left", 0xE04B},     {u"right", 0xE04D},
    {u"home", 0xE047}, {u"end", 0xE04F}, {u"pageup", 0xE049}, {u"pagedown", 0xE051}, {u"f1", 0x3B},
    {u"f2", 0x3C},     {u"f3", 0x3D},    {u"f4", 0x3E},       {u"f5", 0x3F},         {u"f6", 0x40},
    {u"f7", 0x41},     {u"f8", 0x42},    {u"f9", 0x43},       {u"f10", 0x44},        {u"f11", 0x57},
    {u"f12", 0x58},    {u"0", 0x0B},     {u"1", 0x02},        {u"2", 0x03},          {u"3", 0x04},
    {u"4", 0x05},
}};
constexpr std::array<quint16, 5> kDigits5to9{0x06, 0x07, 0x08, 0x09, 0x0A};
// a..z
constexpr std::array<quint16, 26> kLetters{0x1E, 0x30, 0x2E, 0x20, 0x12, 0x21, 0x22, 0x23, 0x17,
                                           0x24, 0x25, 0x26, 0x32, 0x31, 0x18, 0x19, 0x10, 0x13,
                                           0x1F, 0x14, 0x16, 0x2F, 0x11, 0x2D, 0x15, 0x2C};

void appendClick(QList<InputEvent>& events, quint16 x, quint16 y, quint8 button) {
  auto next = [&events] { return quint64(events.size() + 1); };
  events.append(InputEvent::pointer(next(), x, y, 0, 0));
  events.append(InputEvent::pointer(next(), x, y, button, 0));
  events.append(InputEvent::pointer(next(), x, y, 0, 0));
}

} // namespace

std::optional<quint16> ActionPlan::scancode(QStringView key) {
  for (const auto& [name, code] : kNamed) {
    if (name == key)
      return code;
  }
  if (key.size() == 1) {
    const char16_t c = key[0].unicode();
    if (c >= u'a' && c <= u'z')
      return kLetters[size_t(c - u'a')];
    if (c >= u'5' && c <= u'9')
      return kDigits5to9[size_t(c - u'5')];
  }
  return std::nullopt;
}

Outcome<QList<InputEvent>> ActionPlan::plan(const ActionSpec& action, QSize frame) {
  QList<InputEvent> events;
  if (action.type != ActionSpec::Type::KeyChord) {
    if (action.x < 0 || action.y < 0 || action.x >= frame.width() || action.y >= frame.height())
      return Failure{Refusal::ActionInvalid, QStringLiteral("(%1,%2) lies outside the %3x%4 desktop")
                                                 .arg(action.x)
                                                 .arg(action.y)
                                                 .arg(frame.width())
                                                 .arg(frame.height())};
    const auto x = quint16(action.x);
    const auto y = quint16(action.y);
    switch (action.type) {
    case ActionSpec::Type::Click:
      appendClick(events, x, y, kLeft);
      break;
    case ActionSpec::Type::DoubleClick:
      appendClick(events, x, y, kLeft);
      appendClick(events, x, y, kLeft);
      break;
    case ActionSpec::Type::RightClick:
      appendClick(events, x, y, kRight);
      break;
    case ActionSpec::Type::KeyChord:
      break;
    }
    return events;
  }

  if (action.keys.isEmpty())
    return Failure{Refusal::ActionInvalid, QStringLiteral("key_chord without keys")};
  QList<quint16> codes;
  for (const QString& key : action.keys) {
    const std::optional<quint16> code = scancode(key);
    if (!code)
      return Failure{Refusal::ActionInvalid, QStringLiteral("no scancode for key %1").arg(key.left(16))};
    codes.append(*code);
  }
  // ActionSpec keeps modifiers first, in press order, then at most one other key: press
  // everything in that order and release in reverse, so the modifiers wrap the key.
  for (quint16 code : codes)
    events.append(InputEvent::key(quint64(events.size() + 1), code, true));
  for (auto it = codes.crbegin(); it != codes.crend(); ++it)
    events.append(InputEvent::key(quint64(events.size() + 1), *it, false));
  return events;
}

} // namespace gc
