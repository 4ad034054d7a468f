// guest-console-viewer: the console view as a Qt window, for debugging; just another panel
// of a running `guest-console open` (same protocol, same enforcement). The capability comes
// from stdin or --capability-fd, never from argv or the environment.
#include "common/Log.h"
#include "widgets/CapabilityReader.h"
#include "widgets/ConsoleClient.h"
#include "widgets/ConsoleView.h"
#include "widgets/ViewerWindow.h"

#include <QApplication>
#include <QCommandLineParser>

#include <cstdio>
#include <unistd.h>

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("guest-console-viewer"));
  QApplication::setApplicationVersion(QStringLiteral(GC_VERSION));
  gc::Log::install();

  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("Guest Console viewer: connects to a console's panel port. Reads the panel capability "
                     "(one line, 64 hex digits) from stdin or from --capability-fd."));
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption port(QStringLiteral("port"), QStringLiteral("The console's panel port."),
                                QStringLiteral("N"));
  const QCommandLineOption run(QStringLiteral("run"), QStringLiteral("Run id."), QStringLiteral("R"));
  const QCommandLineOption task(QStringLiteral("task"), QStringLiteral("Task id."), QStringLiteral("T"));
  const QCommandLineOption capabilityFd(QStringLiteral("capability-fd"),
                                        QStringLiteral("Read the capability from this descriptor."),
                                        QStringLiteral("N"));
  const QCommandLineOption fit(QStringLiteral("fit"), QStringLiteral("Fit the desktop to the window."));
  const QCommandLineOption exitOnClose(QStringLiteral("exit-on-close"),
                                       QStringLiteral("Quit when the console closes (for scripts)."));
  parser.addOptions({port, run, task, capabilityFd, fit, exitOnClose});
  parser.process(app);

  bool portOk = false;
  const uint portValue = parser.value(port).toUInt(&portOk);
  bool fdOk = true;
  const int fd = parser.isSet(capabilityFd) ? parser.value(capabilityFd).toInt(&fdOk) : STDIN_FILENO;
  if (!portOk || portValue == 0 || portValue > 65535 || !parser.isSet(run) || !parser.isSet(task) || !fdOk ||
      fd < 0) {
    std::fputs("guest-console-viewer: --port N, --run R and --task T are required\n", stderr);
    return 2;
  }
  gc::Outcome<QByteArray> capability = gc::CapabilityReader::read(fd);
  if (fd != STDIN_FILENO)
    ::close(fd);
  if (!capability.ok()) {
    std::fprintf(stderr, "guest-console-viewer: %s\n", qPrintable(capability.failure().toString()));
    return 2;
  }

  gc::ConsoleClient client;
  gc::ViewerWindow window(&client);
  window.view()->setFitToWindow(parser.isSet(fit));
  QObject::connect(&client, &gc::ConsoleClient::closed, &app, [&](const QString& reason) {
    std::fprintf(stderr, "guest-console-viewer: closed: %s\n", qPrintable(reason));
    if (parser.isSet(exitOnClose))
      QCoreApplication::exit(0);
  });
  window.show();
  gc::ConsoleClient::Options options;
  options.port = quint16(portValue);
  options.run = parser.value(run);
  options.task = parser.value(task);
  options.capabilityHex = std::move(capability).value();
  options.clientVersion = QApplication::applicationVersion();
  client.open(std::move(options));
  return app.exec();
}
