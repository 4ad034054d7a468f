// The standalone viewer's window: the ConsoleView plus a menu (View: fit to window; Console:
// lock, close). The menu has no keyboard shortcuts on purpose: every key belongs to the guest.
//
// Thread: main thread.
#pragma once

#include <QMainWindow>

namespace gc {

class ConsoleClient;
class ConsoleView;

class ViewerWindow : public QMainWindow {
  Q_OBJECT
public:
  explicit ViewerWindow(ConsoleClient* client, QWidget* parent = nullptr);

  ConsoleView* view() const { return m_view; }

protected:
  void closeEvent(QCloseEvent* event) override;

private:
  void updateTitle();

  ConsoleClient* m_client;
  ConsoleView* m_view;
};

} // namespace gc
