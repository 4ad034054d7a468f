// The benchmark dialects perform_action accepts beside the canonical vocabulary:
// {"anthropic": <computer tool input>}, {"openai": <one computer-use action>},
// {"osworld": {"action_type", "parameters"}} (computer_13), {"ui_tars": "click(start_box=...)"}.
// Each is ONE small table in its own file that turns the dialect's action into a canonical
// ActionSpec JSON object; ActionSpec::fromJson then checks it against the grant like any
// other. Anything a dialect cannot express as one canonical action (a screenshot, a held
// mouse button, a batch of several actions, a position the console does not know) is
// ACTION_INVALID; nothing is sent. docs/mcp.md has each table.
//
// Thread: pure functions; any thread.
#pragma once

#include "common/Outcome.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QPoint>
#include <QSize>
#include <QStringList>

#include <optional>

namespace gc::dialects {

struct Context {
  // The pixels the dialect's coordinates are in: the capture's space (the scaled image the model
  // saw); for UI-TARS the desktop itself, onto which it maps its normalised values.
  QSize desktop;
  std::optional<QPoint> pointer; // where the console last put the pointer, in the same pixels
};

QStringList names(); // "anthropic", "openai", "osworld", "ui_tars"
Outcome<QJsonObject> translate(const QString& dialect, const QJsonValue& input, const Context& context);

Outcome<QJsonObject> anthropic(const QJsonValue& input, const Context& context);
Outcome<QJsonObject> openai(const QJsonValue& input, const Context& context);
Outcome<QJsonObject> osworld(const QJsonValue& input, const Context& context);
Outcome<QJsonObject> uiTars(const QJsonValue& input, const Context& context);

// Shared by the tables.
namespace detail {
Failure invalid(const QString& message);
// "ctrl+s" (xdotool), ["CTRL", "L"] (OpenAI), "ctrl c" (UI-TARS) → canonical key names.
Outcome<QJsonArray> keys(const QStringList& spelled, const QString& field);
// Only these fields (and `required` present).
Status fields(const QJsonObject& o, const QStringList& allowed, const QStringList& required);
// An integer coordinate pair [x, y] / a number field.
Outcome<QPoint> pair(const QJsonValue& v, const QString& field);
Outcome<int> integer(const QJsonValue& v, const QString& field);
QJsonObject at(QPoint p, QJsonObject o); // o + {"x","y"}
} // namespace detail

} // namespace gc::dialects
