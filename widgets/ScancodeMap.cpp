#include "widgets/ScancodeMap.h"

#include <QGuiApplication>
#include <QHash>
#include <QKeyEvent>

namespace gc {
namespace {

constexpr quint16 E = 0xE000;

// Linux input-event-codes.h (KEY_*) beyond the range where evdev code == set-1 code.
// KEY_POWER, KEY_SLEEP and KEY_WAKEUP are left out: the console refuses the ACPI keys
// (SCANCODE_FORBIDDEN). Every value is on the protocol's keyboard table (tst_inputgate).
const QHash<quint32, quint16>& evdevTable() {
  static const QHash<quint32, quint16> table{
      {86, 0x56},      // KEY_102ND (ISO key left of Z)
      {87, 0x57},      // KEY_F11
      {88, 0x58},      // KEY_F12
      {89, 0x73},      // KEY_RO
      {92, 0x79},      // KEY_HENKAN
      {93, 0x70},      // KEY_KATAKANAHIRAGANA
      {94, 0x7B},      // KEY_MUHENKAN
      {96, E | 0x1C},  // KEY_KPENTER
      {97, E | 0x1D},  // KEY_RIGHTCTRL
      {98, E | 0x35},  // KEY_KPSLASH
      {99, E | 0x37},  // KEY_SYSRQ (Print Screen)
      {100, E | 0x38}, // KEY_RIGHTALT
      {102, E | 0x47}, // KEY_HOME
      {103, E | 0x48}, // KEY_UP
      {104, E | 0x49}, // KEY_PAGEUP
      {105, E | 0x4B}, // KEY_LEFT
      {106, E | 0x4D}, // KEY_RIGHT
      {107, E | 0x4F}, // KEY_END
      {108, E | 0x50}, // KEY_DOWN
      {109, E | 0x51}, // KEY_PAGEDOWN
      {110, E | 0x52}, // KEY_INSERT
      {111, E | 0x53}, // KEY_DELETE
      {113, E | 0x20}, // KEY_MUTE
      {114, E | 0x2E}, // KEY_VOLUMEDOWN
      {115, E | 0x30}, // KEY_VOLUMEUP
      {117, 0x59},     // KEY_KPEQUAL
      {121, 0x7E},     // KEY_KPCOMMA
      {124, 0x7D},     // KEY_YEN
      {125, E | 0x5B}, // KEY_LEFTMETA
      {126, E | 0x5C}, // KEY_RIGHTMETA
      {127, E | 0x5D}, // KEY_COMPOSE (context menu)
      {128, E | 0x68}, // KEY_STOP
      {140, E | 0x21}, // KEY_CALC
      {155, E | 0x6C}, // KEY_MAIL
      {156, E | 0x66}, // KEY_BOOKMARKS
      {157, E | 0x6B}, // KEY_COMPUTER
      {158, E | 0x6A}, // KEY_BACK
      {159, E | 0x69}, // KEY_FORWARD
      {163, E | 0x19}, // KEY_NEXTSONG
      {164, E | 0x22}, // KEY_PLAYPAUSE
      {165, E | 0x10}, // KEY_PREVIOUSSONG
      {166, E | 0x24}, // KEY_STOPCD
      {172, E | 0x32}, // KEY_HOMEPAGE
      {173, E | 0x67}, // KEY_REFRESH
      {183, 0x64},     // KEY_F13 .. KEY_F23
      {184, 0x65},     {185, 0x66}, {186, 0x67}, {187, 0x68}, {188, 0x69}, {189, 0x6A},
      {190, 0x6B},     {191, 0x6C}, {192, 0x6D}, {193, 0x6E}, {194, 0x76}, // KEY_F24
      {217, E | 0x65},                                                     // KEY_SEARCH
      {226, E | 0x6D},                                                     // KEY_MEDIA
  };
  return table;
}

// US QWERTY: the key that produces this Qt::Key (shifted symbols share their key).
const QHash<int, quint16>& qtKeyTable() {
  static const QHash<int, quint16> table{
      {Qt::Key_Escape, 0x01},
      {Qt::Key_1, 0x02},
      {Qt::Key_Exclam, 0x02},
      {Qt::Key_2, 0x03},
      {Qt::Key_At, 0x03},
      {Qt::Key_3, 0x04},
      {Qt::Key_NumberSign, 0x04},
      {Qt::Key_4, 0x05},
      {Qt::Key_Dollar, 0x05},
      {Qt::Key_5, 0x06},
      {Qt::Key_Percent, 0x06},
      {Qt::Key_6, 0x07},
      {Qt::Key_AsciiCircum, 0x07},
      {Qt::Key_7, 0x08},
      {Qt::Key_Ampersand, 0x08},
      {Qt::Key_8, 0x09},
      {Qt::Key_Asterisk, 0x09},
      {Qt::Key_9, 0x0A},
      {Qt::Key_ParenLeft, 0x0A},
      {Qt::Key_0, 0x0B},
      {Qt::Key_ParenRight, 0x0B},
      {Qt::Key_Minus, 0x0C},
      {Qt::Key_Underscore, 0x0C},
      {Qt::Key_Equal, 0x0D},
      {Qt::Key_Plus, 0x0D},
      {Qt::Key_Backspace, 0x0E},
      {Qt::Key_Tab, 0x0F},
      {Qt::Key_Backtab, 0x0F},
      {Qt::Key_Q, 0x10},
      {Qt::Key_W, 0x11},
      {Qt::Key_E, 0x12},
      {Qt::Key_R, 0x13},
      {Qt::Key_T, 0x14},
      {Qt::Key_Y, 0x15},
      {Qt::Key_U, 0x16},
      {Qt::Key_I, 0x17},
      {Qt::Key_O, 0x18},
      {Qt::Key_P, 0x19},
      {Qt::Key_BracketLeft, 0x1A},
      {Qt::Key_BraceLeft, 0x1A},
      {Qt::Key_BracketRight, 0x1B},
      {Qt::Key_BraceRight, 0x1B},
      {Qt::Key_Return, 0x1C},
      {Qt::Key_Control, 0x1D},
      {Qt::Key_A, 0x1E},
      {Qt::Key_S, 0x1F},
      {Qt::Key_D, 0x20},
      {Qt::Key_F, 0x21},
      {Qt::Key_G, 0x22},
      {Qt::Key_H, 0x23},
      {Qt::Key_J, 0x24},
      {Qt::Key_K, 0x25},
      {Qt::Key_L, 0x26},
      {Qt::Key_Semicolon, 0x27},
      {Qt::Key_Colon, 0x27},
      {Qt::Key_Apostrophe, 0x28},
      {Qt::Key_QuoteDbl, 0x28},
      {Qt::Key_QuoteLeft, 0x29},
      {Qt::Key_AsciiTilde, 0x29},
      {Qt::Key_Shift, 0x2A},
      {Qt::Key_Backslash, 0x2B},
      {Qt::Key_Bar, 0x2B},
      {Qt::Key_Z, 0x2C},
      {Qt::Key_X, 0x2D},
      {Qt::Key_C, 0x2E},
      {Qt::Key_V, 0x2F},
      {Qt::Key_B, 0x30},
      {Qt::Key_N, 0x31},
      {Qt::Key_M, 0x32},
      {Qt::Key_Comma, 0x33},
      {Qt::Key_Less, 0x33},
      {Qt::Key_Period, 0x34},
      {Qt::Key_Greater, 0x34},
      {Qt::Key_Slash, 0x35},
      {Qt::Key_Question, 0x35},
      {Qt::Key_Alt, 0x38},
      {Qt::Key_Space, 0x39},
      {Qt::Key_CapsLock, 0x3A},
      {Qt::Key_F1, 0x3B},
      {Qt::Key_F2, 0x3C},
      {Qt::Key_F3, 0x3D},
      {Qt::Key_F4, 0x3E},
      {Qt::Key_F5, 0x3F},
      {Qt::Key_F6, 0x40},
      {Qt::Key_F7, 0x41},
      {Qt::Key_F8, 0x42},
      {Qt::Key_F9, 0x43},
      {Qt::Key_F10, 0x44},
      {Qt::Key_NumLock, 0x45},
      {Qt::Key_ScrollLock, 0x46},
      {Qt::Key_F11, 0x57},
      {Qt::Key_F12, 0x58},
      {Qt::Key_F13, 0x64},
      {Qt::Key_F14, 0x65},
      {Qt::Key_F15, 0x66},
      {Qt::Key_F16, 0x67},
      {Qt::Key_F17, 0x68},
      {Qt::Key_F18, 0x69},
      {Qt::Key_F19, 0x6A},
      {Qt::Key_F20, 0x6B},
      {Qt::Key_F21, 0x6C},
      {Qt::Key_F22, 0x6D},
      {Qt::Key_F23, 0x6E},
      {Qt::Key_F24, 0x76},
      {Qt::Key_Enter, E | 0x1C},
      {Qt::Key_AltGr, E | 0x38},
      {Qt::Key_Print, E | 0x37},
      {Qt::Key_SysReq, E | 0x37},
      {Qt::Key_Home, E | 0x47},
      {Qt::Key_Up, E | 0x48},
      {Qt::Key_PageUp, E | 0x49},
      {Qt::Key_Left, E | 0x4B},
      {Qt::Key_Right, E | 0x4D},
      {Qt::Key_End, E | 0x4F},
      {Qt::Key_Down, E | 0x50},
      {Qt::Key_PageDown, E | 0x51},
      {Qt::Key_Insert, E | 0x52},
      {Qt::Key_Delete, E | 0x53},
      {Qt::Key_Meta, E | 0x5B},
      {Qt::Key_Super_L, E | 0x5B},
      {Qt::Key_Super_R, E | 0x5C},
      {Qt::Key_Menu, E | 0x5D},
  };
  return table;
}

// With Qt::KeypadModifier these come from the numeric keypad.
const QHash<int, quint16>& keypadTable() {
  static const QHash<int, quint16> table{
      {Qt::Key_7, 0x47},         {Qt::Key_8, 0x48},     {Qt::Key_9, 0x49},        {Qt::Key_Minus, 0x4A},
      {Qt::Key_4, 0x4B},         {Qt::Key_5, 0x4C},     {Qt::Key_6, 0x4D},        {Qt::Key_Plus, 0x4E},
      {Qt::Key_1, 0x4F},         {Qt::Key_2, 0x50},     {Qt::Key_3, 0x51},        {Qt::Key_0, 0x52},
      {Qt::Key_Period, 0x53},    {Qt::Key_Comma, 0x53}, {Qt::Key_Asterisk, 0x37}, {Qt::Key_Slash, E | 0x35},
      {Qt::Key_Enter, E | 0x1C}, {Qt::Key_Equal, 0x59},
  };
  return table;
}

bool nativeCodesAreXkb() {
  static const bool xkb = [] {
    const QString platform = QGuiApplication::platformName();
    return platform == QLatin1String("xcb") || platform.startsWith(QLatin1String("wayland"));
  }();
  return xkb;
}

} // namespace

quint16 ScancodeMap::fromEvdev(quint32 evdevCode) {
  if (evdevCode >= 1 && evdevCode <= 83) // Esc .. keypad '.': evdev numbering is set 1
    return quint16(evdevCode);
  return evdevTable().value(evdevCode, 0);
}

quint16 ScancodeMap::fromQtKey(int key, bool keypad) {
  if (keypad) {
    if (const quint16 code = keypadTable().value(key, 0))
      return code;
  }
  return qtKeyTable().value(key, 0);
}

quint16 ScancodeMap::forEvent(const QKeyEvent& event) {
  // XKB keycodes start at 8; synthetic events (QTest) carry no native code at all.
  if (nativeCodesAreXkb() && event.nativeScanCode() > 8) {
    if (const quint16 code = fromEvdev(event.nativeScanCode() - 8))
      return code;
  }
  return fromQtKey(event.key(), event.modifiers().testFlag(Qt::KeypadModifier));
}

} // namespace gc
