// gc-bench-panel --port P --run R --task T: a decoding panel for tests/bench/run.
// stdin line 1: {"capability":"<hex64>"}; then commands (tests/bench/README.md).
#include "tests/bench/panel/BenchPanel.h"

#include <QCommandLineParser>
#include <QGuiApplication>

int main(int argc, char** argv) {
  // Decoding and painting need no display; the offscreen platform keeps QPainter happy.
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QGuiApplication app(argc, argv);
  QCommandLineParser parser;
  const QCommandLineOption port(QStringLiteral("port"), QStringLiteral("panel port"), QStringLiteral("P"));
  const QCommandLineOption run(QStringLiteral("run"), QStringLiteral("run id"), QStringLiteral("R"));
  const QCommandLineOption task(QStringLiteral("task"), QStringLiteral("task id"), QStringLiteral("T"));
  parser.addOptions({port, run, task});
  parser.addHelpOption();
  parser.process(app);
  gc::bench::BenchPanel panel(quint16(parser.value(port).toUInt()), parser.value(run), parser.value(task));
  panel.start();
  return app.exec();
}
