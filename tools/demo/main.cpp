// guest-console-demo: the main job end to end on the embedded default (libvirt's test
// driver + the local test guest), with no VM and no VS Code. See DemoRun.h; scripts/demo
// builds everything and runs it.
#include "tools/demo/ChildProcess.h"
#include "tools/demo/DemoRun.h"
#include "tools/demo/InterruptWatcher.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

#include <cstdio>

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  QCoreApplication::setApplicationName(QStringLiteral("guest-console-demo"));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral(
      "Runs the main job end to end on the embedded demo: a libvirt test-driver VM served by gc-test-guest,\n"
      "a fresh grant, guest-console open, a scripted operator setup (or, with --viewer, yours), the lock,\n"
      "Capture Desktop and one action through the MCP server, then proves the cleanup. Exit 0 = all checks "
      "passed."));
  parser.addHelpOption();
  const QCommandLineOption viewer(
      QStringLiteral("viewer"),
      QStringLiteral("Open guest-console-viewer: do the setup by hand and press Lock."));
  const QCommandLineOption viewerTimeout(
      QStringLiteral("viewer-timeout"),
      QStringLiteral("Seconds to wait for the operator's lock (default 1800)."), QStringLiteral("s"),
      QStringLiteral("1800"));
  const QCommandLineOption jsonReport(QStringLiteral("json-report"),
                                      QStringLiteral("Also write the report as JSON to this file."),
                                      QStringLiteral("file"));
  const QCommandLineOption binDir(
      QStringLiteral("bin-dir"),
      QStringLiteral("Where guest-console and guest-console-viewer are (default: next to "
                     "this program)."),
      QStringLiteral("dir"));
  const QCommandLineOption guest(
      QStringLiteral("guest"),
      QStringLiteral("The test guest (default: <bin-dir>/../tests/fixtures/gc-test-guest)."),
      QStringLiteral("file"));
  const QCommandLineOption verbose(QStringLiteral("verbose"),
                                   QStringLiteral("Show the children's diagnostics (stderr) as they come."));
  parser.addOptions({viewer, viewerTimeout, jsonReport, binDir, guest, verbose});
  parser.process(app);
  if (!parser.positionalArguments().isEmpty()) {
    std::fprintf(stderr, "guest-console-demo: unexpected argument %s\n",
                 qPrintable(parser.positionalArguments().first()));
    return 2;
  }

  gc::tools::DemoRun::Options options;
  options.binDir = parser.isSet(binDir) ? parser.value(binDir) : QCoreApplication::applicationDirPath();
  options.guestBinary =
      parser.isSet(guest) ? parser.value(guest)
                          : QDir(options.binDir).filePath(QStringLiteral("../tests/fixtures/gc-test-guest"));
  options.viewer = parser.isSet(viewer);
  options.viewerTimeoutSeconds = std::max(1, parser.value(viewerTimeout).toInt());
  options.jsonReportPath = parser.value(jsonReport);
  for (const QString& program :
       {QDir(options.binDir).filePath(QStringLiteral("guest-console")), options.guestBinary}) {
    if (!QFileInfo(program).isExecutable()) {
      std::fprintf(stderr, "guest-console-demo: %s is missing; build it first (scripts/demo does)\n",
                   qPrintable(QDir::cleanPath(program)));
      return 2;
    }
  }
  gc::tools::ChildProcess::setForwardStderr(parser.isSet(verbose));

  gc::tools::InterruptWatcher interrupts;
  gc::tools::DemoRun demo(options);
  return demo.run();
}
