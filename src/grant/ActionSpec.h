// ActionSpec: the one synthetic action a grant may offer the model and the MCP perform_action
// tool may run. One canonical vocabulary, each kind exactly once; a kind is ONE
// vocabulary-level action that may expand into many input PDUs (ActionPlan):
//   click {x, y, button, count 1-3, hold_keys}   (aliases double_click, right_click)
//   move {x, y}
//   drag {path [{x,y}...] 2-64 points, button, hold_keys}
//   scroll {x, y, dx, dy, hold_keys}             wheel notches; dy > 0 down, dx > 0 right
//   key_chord {keys}                             modifiers + at most one other key
//   hold_key {keys, seconds}
//   type_text {text}
//   wait {seconds}, done {}, fail {}             no input, but a receipt
// Key names are ActionSpecKeys' canonical names. Dialects (src/action/dialects) translate
// into this vocabulary; nothing else reaches the plan.
//
// ActionPolicy is what the grant allows of it (action.kinds, action.limits, text_input):
// absent kinds mean the four original kinds in their original shapes, so a grant written
// before the vocabulary grew means exactly what it meant.
//
// Thread: value types; use from any thread.
#pragma once

#include "common/Outcome.h"

#include <QByteArrayView>
#include <QJsonObject>
#include <QList>
#include <QPoint>
#include <QString>
#include <QStringList>

#include <optional>

namespace gc {

struct ActionPolicy;

struct ActionSpec {
  enum class Kind : quint8 { Click, Move, Drag, Scroll, KeyChord, HoldKey, TypeText, Wait, Done, Fail };
  static constexpr int kKindCount = 10;
  enum class Button : quint8 { Left, Right, Middle, Back, Forward };

  // Absolute bounds; a grant's limits may only be tighter (ActionLimits).
  static constexpr int kMaxCoordinate = 16384;
  static constexpr int kMaxChordKeys = 4;
  static constexpr int kMaxHoldKeys = 4;
  static constexpr int kMaxClickCount = 3;
  static constexpr int kMinDragPoints = 2;
  static constexpr int kMaxDragPoints = 64;
  static constexpr int kMaxScrollNotches = 50; // per axis
  static constexpr int kMaxTextChars = 4096;   // Unicode code points
  static constexpr int kMaxHoldMs = 30000;
  static constexpr int kMaxWaitMs = 60000;

  Kind kind = Kind::Click;
  int x = 0; // click, move, scroll
  int y = 0;
  Button button = Button::Left; // click, drag
  int count = 1;                // click
  QStringList holdKeys;         // click, drag, scroll: canonical, modifiers first in press order
  QList<QPoint> path;           // drag
  int dx = 0, dy = 0;           // scroll, in notches
  // key_chord: modifiers first (ctrl, alt, shift, meta), then at most one other key;
  // hold_key: the same order, any keys. "win" is stored as "meta".
  QStringList keys;
  int ms = 0;   // hold_key, wait: milliseconds
  QString text; // type_text; never written to the evidence (redactedJson)

  // Strict, with the policy's kinds, shapes and limits: unknown or misplaced fields,
  // out-of-range values, keys outside the table, a kind or bound the grant does not allow
  // → ACTION_INVALID naming the field ("x: expected an integer"). The default policy is the
  // four original kinds: {"type":"click"|"double_click"|"right_click","x","y"} and
  // {"type":"key_chord","keys":[...]}.
  static Outcome<ActionSpec> fromJson(const QJsonObject& json);
  static Outcome<ActionSpec> fromJson(const QJsonObject& json, const ActionPolicy& policy);

  // The canonical JSON (aliases where the click is one: {"type":"double_click",...}); a
  // round trip through fromJson gives the same action.
  QJsonObject toJson() const;
  // toJson() without the text: "text" becomes "text_chars" and "text_hmac" (HMAC-SHA256 under
  // `key`, hex), for the evidence and the receipt.
  QJsonObject redactedJson(QByteArrayView key) const;
  // A stable one-line form for logs, receipts and comparisons: "click(120,340)",
  // "double_click(5,6)", "key_chord(ctrl+shift+s)", "scroll(10,20,dx=0,dy=3)",
  // "type_text(12 chars)". Never the text.
  QString canonical() const;

  // "click", "double_click", "right_click" for the aliases' shapes; the kind name otherwise.
  QString typeName() const;
  static QString kindName(Kind kind);
  static std::optional<Kind> kindFromName(QStringView name);
  static QString buttonName(Button button);
  // True when this is one of the four original shapes (the default policy's).
  bool isLegacyShape() const;
  // Code points of `text` (a surrogate pair is one).
  int textChars() const;

  // Kept for the MCP schema: a canonical key of the original allowlist ("win" included).
  static bool isAllowedKey(QStringView key);
  static bool isModifierKey(QStringView key);

  friend bool operator==(const ActionSpec&, const ActionSpec&) = default;
};

// action.limits: each at most the absolute bound of ActionSpec.
struct ActionLimits {
  int textChars = 256;
  int dragPoints = ActionSpec::kMaxDragPoints;
  int holdMs = 5000;
  int waitMs = 10000;
  int scrollNotches = 10;
  friend bool operator==(const ActionLimits&, const ActionLimits&) = default;
};

struct ActionPolicy {
  // action.text_input: how type_text reaches a server without Unicode keyboard input.
  enum class TextInput : quint8 { Unicode, Scancodes };

  bool legacy = true; // action.kinds absent: the four original shapes only
  quint32 kinds = 0;  // bit (1 << Kind) per allowed kind, when !legacy
  ActionLimits limits;
  TextInput textInput = TextInput::Unicode;

  bool allows(ActionSpec::Kind kind) const;
  // ACTION_INVALID naming the field when the action is outside the kinds or limits.
  Status admits(const ActionSpec& spec) const;
  // {"kinds":[...], "limits":{...}, "text_input":...} as status reports it.
  QJsonObject toJson() const;
  friend bool operator==(const ActionPolicy&, const ActionPolicy&) = default;
};

} // namespace gc
