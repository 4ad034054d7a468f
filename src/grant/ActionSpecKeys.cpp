#include "grant/ActionSpecKeys.h"

#include <array>

namespace gc {
namespace {

struct Key {
  QStringView name;
  quint16 scancode;
  bool legacy; // allowed by the four original kinds
};

// Set-1 make codes of a US layout (MS-RDPBCGR 2.2.8.1.1.3.1.1.1 carries them as-is).
constexpr std::array<Key, 31> kNamed{{
    {u"ctrl", 0x1D, true},         {u"alt", 0x38, true},           {u"shift", 0x2A, true},
    {u"meta", 0xE05B, true},       {u"enter", 0x1C, true},         {u"tab", 0x0F, true},
    {u"escape", 0x01, true},       {u"backspace", 0x0E, true},     {u"delete", 0xE053, true},
    {u"space", 0x39, true},        {u"up", 0xE048, true},          {u"down", 0xE050, true},
    {u"left", 0xE04B, true},       {u"right", 0xE04D, true},       {u"home", 0xE047, true},
    {u"end", 0xE04F, true},        {u"pageup", 0xE049, true},      {u"pagedown", 0xE051, true},
    {u"insert", 0xE052, false},    {u"minus", 0x0C, false},        {u"equal", 0x0D, false},
    {u"bracketleft", 0x1A, false}, {u"bracketright", 0x1B, false}, {u"backslash", 0x2B, false},
    {u"semicolon", 0x27, false},   {u"quote", 0x28, false},        {u"backquote", 0x29, false},
    {u"comma", 0x33, false},       {u"period", 0x34, false},       {u"slash", 0x35, false},
    {u"capslock", 0x3A, false},
}};
constexpr std::array<quint16, 12> kFunction{0x3B, 0x3C, 0x3D, 0x3E, 0x3F, 0x40,
                                            0x41, 0x42, 0x43, 0x44, 0x57, 0x58};
constexpr std::array<quint16, 10> kDigits{0x0B, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A};
constexpr std::array<quint16, 26> kLetters{0x1E, 0x30, 0x2E, 0x20, 0x12, 0x21, 0x22, 0x23, 0x17,
                                           0x24, 0x25, 0x26, 0x32, 0x31, 0x18, 0x19, 0x10, 0x13,
                                           0x1F, 0x14, 0x16, 0x2F, 0x11, 0x2D, 0x15, 0x2C};

// Dialect spellings, lowercased, → canonical. xdotool keysyms (X11 keysymdef names), OpenAI
// computer-use key names, pyautogui KEYBOARD_KEYS; names equal to a canonical one are not
// repeated.
constexpr std::array<std::pair<QStringView, QStringView>, 62> kAliases{{
    {u"control", u"ctrl"},      {u"control_l", u"ctrl"},
    {u"control_r", u"ctrl"},    {u"ctrlleft", u"ctrl"},
    {u"ctrlright", u"ctrl"},    {u"alt_l", u"alt"},
    {u"alt_r", u"alt"},         {u"altleft", u"alt"},
    {u"altright", u"alt"},      {u"option", u"alt"},
    {u"shift_l", u"shift"},     {u"shift_r", u"shift"},
    {u"shiftleft", u"shift"},   {u"shiftright", u"shift"},
    {u"win", u"meta"},          {u"winleft", u"meta"},
    {u"winright", u"meta"},     {u"super", u"meta"},
    {u"super_l", u"meta"},      {u"super_r", u"meta"},
    {u"meta_l", u"meta"},       {u"meta_r", u"meta"},
    {u"cmd", u"meta"},          {u"command", u"meta"},
    {u"return", u"enter"},      {u"kp_enter", u"enter"},
    {u"esc", u"escape"},        {u"del", u"delete"},
    {u"arrowup", u"up"},        {u"arrowdown", u"down"},
    {u"arrowleft", u"left"},    {u"arrowright", u"right"},
    {u"page_up", u"pageup"},    {u"prior", u"pageup"},
    {u"pgup", u"pageup"},       {u"page_down", u"pagedown"},
    {u"next", u"pagedown"},     {u"pgdn", u"pagedown"},
    {u"ins", u"insert"},        {u"caps_lock", u"capslock"},
    {u"-", u"minus"},           {u"=", u"equal"},
    {u"[", u"bracketleft"},     {u"]", u"bracketright"},
    {u"\\", u"backslash"},      {u";", u"semicolon"},
    {u"'", u"quote"},           {u"apostrophe", u"quote"},
    {u"`", u"backquote"},       {u"grave", u"backquote"},
    {u",", u"comma"},           {u".", u"period"},
    {u"/", u"slash"},           {u" ", u"space"},
    {u"spacebar", u"space"},    {u"back_space", u"backspace"},
    {u"\n", u"enter"},          {u"\t", u"tab"},
    {u"\r", u"enter"},          {u"left_arrow", u"left"},
    {u"right_arrow", u"right"}, {u"up_arrow", u"up"},
}};

std::optional<int> functionNumber(QStringView key) {
  if (key.size() < 2 || key.size() > 3 || key[0] != u'f' || key[1] == u'0')
    return std::nullopt; // "f01" is not a key name
  bool ok = false;
  const int n = key.mid(1).toInt(&ok);
  if (!ok || n < 1 || n > 12)
    return std::nullopt;
  return n;
}

} // namespace

bool ActionSpecKeys::isCanonical(QStringView name, bool legacyOnly) {
  if (name.size() == 1) {
    const char16_t c = name[0].unicode();
    return (c >= u'a' && c <= u'z') || (c >= u'0' && c <= u'9');
  }
  if (functionNumber(name))
    return true;
  for (const Key& k : kNamed)
    if (k.name == name)
      return k.legacy || !legacyOnly;
  return false;
}

int ActionSpecKeys::modifierRank(QStringView name) {
  for (int i = 0; i < 4; ++i)
    if (kNamed[size_t(i)].name == name)
      return i;
  return -1;
}

bool ActionSpecKeys::isModifier(QStringView name) {
  return modifierRank(name) >= 0;
}

std::optional<quint16> ActionSpecKeys::scancode(QStringView canonical) {
  if (canonical.size() == 1) {
    const char16_t c = canonical[0].unicode();
    if (c >= u'a' && c <= u'z')
      return kLetters[size_t(c - u'a')];
    if (c >= u'0' && c <= u'9')
      return kDigits[size_t(c - u'0')];
    return std::nullopt;
  }
  if (const auto f = functionNumber(canonical))
    return kFunction[size_t(*f - 1)];
  for (const Key& k : kNamed)
    if (k.name == canonical)
      return k.scancode;
  return std::nullopt;
}

std::optional<QString> ActionSpecKeys::normalise(QStringView spelled) {
  if (spelled.isEmpty() || spelled.size() > 32)
    return std::nullopt;
  // Case only matters for single characters in none of the dialects ("A" is the a key).
  const QString lower = spelled.toString().toLower();
  if (isCanonical(lower))
    return lower;
  for (const auto& [alias, canonical] : kAliases)
    if (alias == lower)
      return canonical.toString();
  return std::nullopt;
}

QStringList ActionSpecKeys::canonicalNames(bool legacyOnly) {
  QStringList names;
  for (const Key& k : kNamed)
    if (k.legacy || !legacyOnly)
      names.append(k.name.toString());
  for (char16_t c = u'a'; c <= u'z'; ++c)
    names.append(QString(QChar(c)));
  for (char16_t c = u'0'; c <= u'9'; ++c)
    names.append(QString(QChar(c)));
  for (int f = 1; f <= 12; ++f)
    names.append(QStringLiteral("f%1").arg(f));
  return names;
}

} // namespace gc
