// OperatorScript: the scripted operator setup the demo plays through the panel when no
// person is at a viewer — a click into the guest's text page, a few typed keys, Enter — and
// what the test guest must report for it. Guest input is compared as readable tokens
// ("key 0x22 down", "left up 256,256") built from the guest's own input events, so the
// report shows exactly what reached the guest, in order.
//
// Thread: a value type; use from any thread.
#pragma once

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

namespace gc::tools {

class OperatorScript {
public:
  struct Step {
    bool isKey = false;
    quint16 scancode = 0; // RDP set-1
    bool down = false;
    quint16 x = 0, y = 0;
    quint8 buttons = 0; // panel mask: bit 0 left
  };

  // The setup for a desktop of this size (positions stay on the text page).
  static OperatorScript standard(int width, int height);

  const QList<Step>& steps() const { return m_steps; }
  QString summary() const { return m_summary; }
  // The guest input these steps must produce, in order.
  QStringList expectedGuestInput() const;

  // What a model's click at (x, y) sends (docs/mcp.md: move, left down, left up).
  static QStringList expectedForClick(int x, int y);
  // One of the guest's {"event":"input",…} lines as a token.
  static QString token(const QJsonObject& inputEvent);

private:
  QList<Step> m_steps;
  QString m_summary;
};

} // namespace gc::tools
