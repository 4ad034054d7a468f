// Keyboard, mouse and wheel capture on the console view while the console is in SETUP.
// It exists only then: the view creates it on SETUP and deletes it on any other phase, and
// its destructor removes the event filter, so in the read-only phases no code path from a
// Qt input event to the socket exists at all (ConsoleClient refuses input outside SETUP as
// a second line).
//
// Mapping: buttons as the protocol's mask (bit 0 left, 1 right, 2 middle), each press and
// release one pointer message with the new mask; the wheel in RDP units, 120 per notch, one
// message per notch (the console refuses |wheel| > 255); keys via ScancodeMap, held keys
// remembered so focus loss can let go of them.
//
// Thread: main thread (the view's).
#pragma once

#include <QObject>
#include <QPoint>
#include <QPointF>
#include <QSet>

#include <functional>

class QWidget;
class QKeyEvent;
class QMouseEvent;
class QWheelEvent;

namespace gc {

class ConsoleClient;

class InputCapture : public QObject {
  Q_OBJECT
public:
  // Widget position -> desktop pixel (clamped); supplied by the view (it knows the scale).
  using MapToDesktop = std::function<QPoint(QPointF)>;

  InputCapture(QWidget* surface, ConsoleClient* client, MapToDesktop map);
  ~InputCapture() override;

  // Lets go of every key and button the guest believes is down.
  void releaseAll();

  static constexpr int kWheelNotch = 120;

protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

private:
  void onKey(const QKeyEvent& event, bool down);
  void onMouse(const QMouseEvent& event);
  void onWheel(const QWheelEvent& event);

  QWidget* m_surface;
  ConsoleClient* m_client;
  MapToDesktop m_map;
  QSet<quint16> m_heldKeys;
  quint8 m_buttons = 0;
  QPoint m_last{-1, -1};
  int m_wheelRemainder = 0;
};

} // namespace gc
