#include "widgets/InputCapture.h"

#include "widgets/ConsoleClient.h"
#include "widgets/ScancodeMap.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QWheelEvent>
#include <QWidget>

namespace gc {
namespace {

quint8 protocolButtons(Qt::MouseButtons buttons) {
  quint8 mask = 0;
  if (buttons.testFlag(Qt::LeftButton))
    mask |= 1;
  if (buttons.testFlag(Qt::RightButton))
    mask |= 2;
  if (buttons.testFlag(Qt::MiddleButton))
    mask |= 4;
  return mask;
}

} // namespace

InputCapture::InputCapture(QWidget* surface, ConsoleClient* client, MapToDesktop map)
    : QObject(surface), m_surface(surface), m_client(client), m_map(std::move(map)) {
  m_surface->installEventFilter(this);
}

InputCapture::~InputCapture() {
  m_surface->removeEventFilter(this);
}

void InputCapture::releaseAll() {
  for (const quint16 scancode : std::as_const(m_heldKeys))
    m_client->sendKey(scancode, false);
  m_heldKeys.clear();
  if (m_buttons != 0) {
    m_buttons = 0;
    m_client->sendPointer(m_last.x() < 0 ? QPoint(0, 0) : m_last, 0);
  }
  m_wheelRemainder = 0;
}

bool InputCapture::eventFilter(QObject* watched, QEvent* event) {
  if (watched != m_surface)
    return false;
  switch (event->type()) {
  case QEvent::ShortcutOverride:
    // Keys go to the guest, not to the viewer's own shortcuts.
    event->accept();
    return true;
  case QEvent::KeyPress:
    onKey(static_cast<const QKeyEvent&>(*event), true);
    return true;
  case QEvent::KeyRelease:
    onKey(static_cast<const QKeyEvent&>(*event), false);
    return true;
  case QEvent::MouseButtonPress:
  case QEvent::MouseButtonDblClick:
  case QEvent::MouseButtonRelease:
  case QEvent::MouseMove:
    onMouse(static_cast<const QMouseEvent&>(*event));
    return true;
  case QEvent::Wheel:
    onWheel(static_cast<const QWheelEvent&>(*event));
    return true;
  case QEvent::ContextMenu:
    return true;
  case QEvent::FocusOut:
    releaseAll();
    return false;
  default:
    return false;
  }
}

void InputCapture::onKey(const QKeyEvent& event, bool down) {
  const quint16 scancode = ScancodeMap::forEvent(event);
  if (scancode == 0)
    return;
  if (down) {
    // An auto-repeated press is a typematic repeat: another "down" for a key already held.
    m_heldKeys.insert(scancode);
  } else {
    if (event.isAutoRepeat())
      return; // X11 interleaves synthetic releases with repeats; the key is still held
    if (!m_heldKeys.remove(scancode))
      return; // a release whose press was never sent
  }
  m_client->sendKey(scancode, down);
}

void InputCapture::onMouse(const QMouseEvent& event) {
  const QPoint point = m_map(event.position());
  const quint8 buttons = protocolButtons(event.buttons());
  if (event.type() == QEvent::MouseButtonPress || event.type() == QEvent::MouseButtonDblClick)
    m_surface->setFocus(Qt::MouseFocusReason);
  if (buttons == m_buttons && point == m_last)
    return; // nothing new for the guest
  m_buttons = buttons;
  m_last = point;
  m_client->sendPointer(point, buttons);
}

void InputCapture::onWheel(const QWheelEvent& event) {
  // Qt: positive y = away from the user = wheel up; RDP: positive = up as well.
  m_wheelRemainder += event.angleDelta().y();
  const QPoint point = m_map(event.position());
  m_last = point;
  while (m_wheelRemainder >= kWheelNotch || m_wheelRemainder <= -kWheelNotch) {
    const int notch = m_wheelRemainder > 0 ? kWheelNotch : -kWheelNotch;
    m_wheelRemainder -= notch;
    m_client->sendPointer(point, m_buttons, qint16(notch));
  }
}

} // namespace gc
