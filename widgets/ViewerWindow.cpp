#include "widgets/ViewerWindow.h"

#include "widgets/ConsoleClient.h"
#include "widgets/ConsoleView.h"

#include <QCloseEvent>
#include <QMenuBar>

namespace gc {

ViewerWindow::ViewerWindow(ConsoleClient* client, QWidget* parent)
    : QMainWindow(parent), m_client(client), m_view(new ConsoleView(client, this)) {
  setCentralWidget(m_view);
  QMenu* view = menuBar()->addMenu(tr("View"));
  QAction* fit = view->addAction(tr("Fit to window"));
  fit->setCheckable(true);
  connect(fit, &QAction::toggled, m_view, &ConsoleView::setFitToWindow);
  QMenu* console = menuBar()->addMenu(tr("Console"));
  QAction* lock = console->addAction(tr("Lock input (end SETUP)"));
  connect(lock, &QAction::triggered, m_view, &ConsoleView::requestLock);
  console->addSeparator();
  connect(console->addAction(tr("Close console")), &QAction::triggered, client, &ConsoleClient::requestClose);
  connect(client, &ConsoleClient::phaseChanged, this, [this, lock](const QString& phase) {
    lock->setEnabled(phase == QLatin1String("SETUP"));
    updateTitle();
  });
  connect(client, &ConsoleClient::welcomed, this, &ViewerWindow::updateTitle);
  updateTitle();
}

void ViewerWindow::updateTitle() {
  const QString vm = m_client->isWelcomed() ? m_client->welcome().vm : tr("connecting");
  setWindowTitle(tr("%1 — %2 — Guest Console viewer").arg(vm, m_view->phaseLabel()));
}

void ViewerWindow::closeEvent(QCloseEvent* event) {
  m_client->requestClose();
  event->accept();
}

} // namespace gc
