// KeyboardLayout: a Windows keyboard layout identifier (KLID), the value the console sends in
// the Client Core Data (MS-RDPBCGR 2.2.1.3.2 keyboardLayout), and the keyboard type, subtype
// and function-key count that go with it. The grant writes a KLID as a string "0x" + 8 hex
// digits ("0x00000409" = US English), the form Windows itself uses in the registry.
//
// A KLID is a layout when its low word is a language (primary language 0x001..0x3fe, not the
// neutral, invariant or custom placeholders) and its high word is a layout variant
// (0x0000..0x00ff), a custom layout (0xa000..0xa0ff) or an IME (0xe000..0xe0ff). 0 is not a
// layout: servers fall back to a guess (xrdp logs "Cannot find keymap file km-00000000.ini").
//
// Thread: plain functions; use from any thread.
#pragma once

#include <QString>

#include <optional>

namespace gc {

class KeyboardLayout {
public:
  static constexpr quint32 kDefault = 0x00000409; // US English

  // The grant's form: "0x" (or "0X") and exactly 8 hex digits, any case; nullopt otherwise.
  static std::optional<quint32> parse(const QString& text);
  static bool isLayout(quint32 klid);
  // "0x00000409": lowercase, always 8 digits.
  static QString toString(quint32 klid);

  // MS-RDPBCGR keyboardType/SubType/FunctionKey for the layout's language: Japanese keyboards
  // are type 7 (subtype 2, the 106/109-key OEM layout), Korean type 8 (subtype 3), everything
  // else type 4 (IBM enhanced 101/102 keys, subtype 0); 12 function keys in every case.
  static quint32 keyboardType(quint32 klid);
  static quint32 keyboardSubType(quint32 klid);
  static quint32 functionKeys(quint32 klid);
};

} // namespace gc
