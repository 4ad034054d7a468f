#include "tools/demo/OperatorScript.h"

namespace gc::tools {

namespace {

// RDP pointer flags (MS-RDPBCGR 2.2.8.1.1.3.1.1.3), as the guest reports them raw.
constexpr int kPtrWheel = 0x0200;
constexpr int kPtrMove = 0x0800;
constexpr int kPtrButton1 = 0x1000;
constexpr int kPtrButton2 = 0x2000;
constexpr int kPtrButton3 = 0x4000;
constexpr int kPtrDown = 0x8000;
constexpr int kKbdRelease = 0x8000;

QString keyToken(int code, bool down) {
  return QStringLiteral("key 0x%1 %2").arg(code, 2, 16, QLatin1Char('0')).arg(down ? "down" : "up");
}

QString at(int x, int y) {
  return QStringLiteral(" %1,%2").arg(x).arg(y);
}

} // namespace

OperatorScript OperatorScript::standard(int width, int height) {
  OperatorScript script;
  const quint16 x = quint16(std::max(20, width / 4));
  const quint16 y = quint16(std::max(70, height / 3));
  // Click into the text page: move there, press, release (the panel's click model).
  script.m_steps.append({false, 0, false, x, y, 0});
  script.m_steps.append({false, 0, false, x, y, 1});
  script.m_steps.append({false, 0, false, x, y, 0});
  // Type "gc demo" and Enter.
  for (quint16 scancode : {0x22, 0x2E, 0x39, 0x20, 0x12, 0x32, 0x18, 0x1C}) {
    script.m_steps.append({true, scancode, true, 0, 0, 0});
    script.m_steps.append({true, scancode, false, 0, 0, 0});
  }
  script.m_summary = QStringLiteral("click at (%1,%2), type \"gc demo\", Enter").arg(x).arg(y);
  return script;
}

QStringList OperatorScript::expectedGuestInput() const {
  QStringList out;
  quint8 buttons = 0;
  int lastX = -1, lastY = -1;
  for (const Step& s : m_steps) {
    if (s.isKey) {
      out.append(keyToken(s.scancode, s.down));
      continue;
    }
    // PointerEncoder: a move when the position changed (or nothing else would carry it),
    // then one press/release per changed button.
    const bool moved = s.x != lastX || s.y != lastY;
    if (moved || s.buttons == buttons)
      out.append(QStringLiteral("move") + at(s.x, s.y));
    if ((s.buttons ^ buttons) & 1)
      out.append(QStringLiteral("left %1").arg((s.buttons & 1) ? "down" : "up") + at(s.x, s.y));
    buttons = s.buttons;
    lastX = s.x;
    lastY = s.y;
  }
  return out;
}

QStringList OperatorScript::expectedForClick(int x, int y) {
  return {QStringLiteral("move") + at(x, y), QStringLiteral("left down") + at(x, y),
          QStringLiteral("left up") + at(x, y)};
}

QString OperatorScript::token(const QJsonObject& e) {
  const QString kind = e.value(QStringLiteral("kind")).toString();
  const int code = e.value(QStringLiteral("code")).toInt();
  const int flags = e.value(QStringLiteral("flags")).toInt();
  const int x = e.value(QStringLiteral("x")).toInt();
  const int y = e.value(QStringLiteral("y")).toInt();
  if (kind == QLatin1String("key"))
    return keyToken(code, (flags & kKbdRelease) == 0);
  if (kind == QLatin1String("pointer")) {
    const char* state = (flags & kPtrDown) ? "down" : "up";
    if (flags & kPtrMove)
      return QStringLiteral("move") + at(x, y);
    if (flags & kPtrButton1)
      return QStringLiteral("left %1").arg(state) + at(x, y);
    if (flags & kPtrButton2)
      return QStringLiteral("right %1").arg(state) + at(x, y);
    if (flags & kPtrButton3)
      return QStringLiteral("middle %1").arg(state) + at(x, y);
    if (flags & kPtrWheel)
      return QStringLiteral("wheel 0x%1").arg(flags & 0x1ff, 0, 16) + at(x, y);
  }
  return QStringLiteral("%1 code=0x%2 flags=0x%3").arg(kind).arg(code, 0, 16).arg(flags, 0, 16) + at(x, y);
}

} // namespace gc::tools
