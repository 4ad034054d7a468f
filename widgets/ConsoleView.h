// The console as the operator sees it in VS Code, as a widget: the guest's desktop (native
// 1:1 or fitted to the widget, keeping the aspect ratio), and above it a status band with
// the phase, the guest's identity (VM name, short grant digest, certificate fingerprint
// prefix, from welcome.identity) and the input counters.
//
// Input exists only in SETUP (an InputCapture, created and destroyed with the phase). In
// every later phase the desktop is framed by a read-only overlay and no input path exists;
// on CLOSED the picture is dropped and the reason shown.
//
// Thread: main thread.
#pragma once

#include <QImage>
#include <QWidget>

namespace gc {

class ConsoleClient;
class InputCapture;

class ConsoleView : public QWidget {
  Q_OBJECT
public:
  static constexpr int kBandHeight = 40;

  explicit ConsoleView(ConsoleClient* client, QWidget* parent = nullptr);
  ~ConsoleView() override;

  void setFitToWindow(bool fit);
  bool fitToWindow() const { return m_fit; }

  // Where the desktop is painted, in widget coordinates.
  QRect frameRect() const;
  // Widget position -> desktop pixel, clamped to the desktop.
  QPoint mapToDesktop(QPointF position) const;

  bool isInputAttached() const { return m_input != nullptr; }
  bool isReadOnlyOverlayShown() const;
  QString phaseLabel() const;
  QString identityText() const { return m_identity; }
  QString bannerText() const { return m_banner; }
  QSize desktopSize() const { return m_desktop; }

  // The operator's lock: lets go of held keys and buttons while input is still accepted,
  // removes input capture for good, then asks the console.
  void requestLock();

  QSize sizeHint() const override;

protected:
  void paintEvent(QPaintEvent* event) override;
  bool focusNextPrevChild(bool next) override;

private:
  void onPhase(const QString& phase, const QString& reason);
  void onFrame(const QImage& frame);
  void attachInput();
  void detachInput();
  void paintBand(class QPainter& painter);

  ConsoleClient* m_client;
  InputCapture* m_input = nullptr; // exists only in SETUP; owned
  QImage m_frame;                  // the last presented frame (an immutable share)
  QSize m_desktop;
  bool m_fit = false;
  QString m_phase; // "" while connecting
  QString m_identity;
  QString m_banner;
};

} // namespace gc
