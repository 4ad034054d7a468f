// ActionSpec: the one synthetic action a grant may offer the model and the MCP
// perform_action tool may run. Deliberately small: a click of some kind at a point, or one
// key chord from an allowlist. Anything else (text typing, drags, macros) does not exist.
//
// Thread: a value type; use from any thread.
#pragma once

#include "common/Outcome.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

namespace gc {

struct ActionSpec {
  enum class Type { Click, DoubleClick, RightClick, KeyChord };

  static constexpr int kMaxCoordinate = 16384;
  static constexpr int kMaxChordKeys = 4;

  Type type = Type::Click;
  int x = 0; // pointer types only
  int y = 0;
  // KeyChord only, in canonical order: modifiers first (ctrl, alt, shift, meta), then at
  // most one other key. "win" is stored as its synonym "meta".
  QStringList keys;

  // Strict: {"type":"click"|"double_click"|"right_click","x":int,"y":int} or
  // {"type":"key_chord","keys":["ctrl","s"]}. Unknown or misplaced fields, out-of-range
  // coordinates, keys outside the allowlist, duplicate keys, more than one non-modifier
  // → ActionInvalid. Messages name the field ("x: expected an integer").
  static Outcome<ActionSpec> fromJson(const QJsonObject& json);

  QJsonObject toJson() const;
  // A stable one-line form for logs, receipts and comparisons: "click(120,340)",
  // "double_click(5,6)", "key_chord(ctrl+shift+s)".
  QString canonical() const;

  static QString typeName(Type type);
  static bool isAllowedKey(QStringView key);
  static bool isModifierKey(QStringView key);

  friend bool operator==(const ActionSpec&, const ActionSpec&) = default;
};

} // namespace gc
