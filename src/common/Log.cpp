#include "common/Log.h"

#include <QCoreApplication>
#include <QMutex>
#include <QRegularExpression>

#include <cstdio>

namespace gc {

Q_LOGGING_CATEGORY(lcApp, "gc.app")

namespace {

QMutex g_logMutex;
const char* g_program = "guest-console"; // set once by install(), before any other thread

void handler(QtMsgType type, const QMessageLogContext& context, const QString& message) {
  const char* level = "debug";
  switch (type) {
  case QtDebugMsg:
    level = "debug";
    break;
  case QtInfoMsg:
    level = "info";
    break;
  case QtWarningMsg:
    level = "warning";
    break;
  case QtCriticalMsg:
    level = "critical";
    break;
  case QtFatalMsg:
    level = "fatal";
    break;
  }
  const QString line =
      QStringLiteral("%1[%2] %3 %4: %5\n")
          .arg(QString::fromLatin1(g_program), QString::number(QCoreApplication::applicationPid()),
               QString::fromLatin1(level),
               QString::fromLatin1(context.category ? context.category : "default"), Log::redact(message));
  const QByteArray bytes = line.toUtf8();
  QMutexLocker lock(&g_logMutex);
  std::fwrite(bytes.constData(), 1, static_cast<std::size_t>(bytes.size()), stderr);
  std::fflush(stderr);
}

} // namespace

void Log::install(const char* program) {
  g_program = program;
  qInstallMessageHandler(handler);
}

QString Log::redact(const QString& line) {
  static const QRegularExpression hexRun(QStringLiteral("[0-9A-Fa-f]{32,}"));
  static const QRegularExpression jsonSecret(
      QStringLiteral("(\"(?:password|capability|secret|token|key)\"\\s*:\\s*)\"(?:[^\"\\\\]|\\\\.)*\""),
      QRegularExpression::CaseInsensitiveOption);
  static const QRegularExpression assignSecret(QStringLiteral("((?:password|passwd|pwd)\\s*[=:]\\s*)\\S+"),
                                               QRegularExpression::CaseInsensitiveOption);
  QString out = line;
  out.replace(jsonSecret, QStringLiteral("\\1\"<redacted>\""));
  out.replace(assignSecret, QStringLiteral("\\1<redacted>"));
  out.replace(hexRun, QStringLiteral("<hex-redacted>"));
  return out;
}

} // namespace gc
