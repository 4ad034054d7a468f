// ActionSpecKeys: the one key-name table of the action vocabulary. Every key a key_chord,
// hold_key or hold_keys may name has ONE canonical name ("ctrl", "pagedown", "f5", "a",
// "minus") and its RDP set-1 make code on a US layout (extended keys as 0xE0xx, as the panel
// protocol spells them). The dialects' spellings — xdotool keysyms ("Return", "Page_Down",
// "super"), OpenAI's names ("ENTER", "ARROWUP", "CMD"), pyautogui's ("pgdn", "ctrlleft", "-")
// — normalise through normalise() into those names; nothing else is a key.
//
// Thread: pure functions over constant tables; any thread.
#pragma once

#include <QString>
#include <QStringList>
#include <QStringView>

#include <optional>

namespace gc {

class ActionSpecKeys {
public:
  // A canonical name, or nullopt. `legacy`: only the names the four original kinds allowed
  // (modifiers, the 14 named keys, a-z, 0-9, f1-f12).
  static bool isCanonical(QStringView name, bool legacyOnly = false);
  static bool isModifier(QStringView name); // ctrl, alt, shift, meta
  // Press order of modifiers: ctrl, alt, shift, meta; -1 for other keys.
  static int modifierRank(QStringView name);
  static std::optional<quint16> scancode(QStringView canonical);
  // A dialect's spelling (case-insensitive; "win"/"super"/"cmd" → "meta", "Return" → "enter",
  // "-" → "minus") to its canonical name; nullopt when the table has no such key.
  static std::optional<QString> normalise(QStringView spelled);
  // Every canonical name, in table order (for the MCP schema and docs).
  static QStringList canonicalNames(bool legacyOnly = false);
};

} // namespace gc
