#include "tools/demo/ChildProcess.h"

#include "tools/demo/EventWait.h"

#include <QJsonDocument>

#include <cstdio>
#include <unistd.h>

namespace gc::tools {

namespace {
constexpr qsizetype kMaxStdoutLine = 4 * 1024 * 1024; // a capture result is a few hundred KiB
constexpr qsizetype kStderrKept = 64 * 1024;
bool g_forwardStderr = false;
} // namespace

ChildProcess::ChildProcess(QString label, QObject* parent) : QObject(parent), m_label(std::move(label)) {
  connect(&m_process, &QProcess::readyReadStandardOutput, this, &ChildProcess::readStdout);
  connect(&m_process, &QProcess::readyReadStandardError, this, &ChildProcess::readStderr);
  connect(&m_process, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
    readStdout();
    readStderr();
    m_exited = true;
    m_exitCode = status == QProcess::NormalExit ? code : -1;
    if (m_howEnded.isEmpty() || m_howEnded == QLatin1String("running"))
      m_howEnded = m_exitCode >= 0 ? QStringLiteral("exited %1").arg(code) : QStringLiteral("crashed");
    emit finished(m_exitCode);
  });
}

ChildProcess::~ChildProcess() {
  stop(2000);
}

void ChildProcess::setForwardStderr(bool forward) {
  g_forwardStderr = forward;
}

bool ChildProcess::start(const QString& program, const QStringList& arguments) {
  // Its own process group: a Ctrl-C at the terminal reaches the demo only, which then ends
  // the children in order (stdin EOF first) instead of having them all die mid-step. Were
  // the demo killed outright, they still end on stdin EOF.
  m_process.setChildProcessModifier([] { ::setpgid(0, 0); });
  m_process.start(program, arguments, QIODevice::ReadWrite);
  if (!m_process.waitForStarted(10000))
    return false;
  m_pid = m_process.processId();
  m_howEnded = QStringLiteral("running");
  return true;
}

void ChildProcess::writeLine(const QByteArray& line) {
  if (!isRunning())
    return;
  m_process.write(line);
  m_process.write("\n", 1);
}

void ChildProcess::closeInput() {
  if (isRunning())
    m_process.closeWriteChannel();
}

QList<QJsonObject> ChildProcess::events(const QString& key, const QString& value) const {
  QList<QJsonObject> out;
  for (const QJsonObject& o : m_json)
    if (o.value(key).toString() == value)
      out.append(o);
  return out;
}

void ChildProcess::readStdout() {
  m_pending += m_process.readAllStandardOutput();
  for (qsizetype nl; (nl = m_pending.indexOf('\n')) >= 0;) {
    const QByteArray line = m_pending.left(nl);
    m_pending.remove(0, nl + 1);
    QJsonParseError error{};
    const QJsonDocument doc = QJsonDocument::fromJson(line, &error);
    if (error.error == QJsonParseError::NoError && doc.isObject()) {
      m_json.append(doc.object());
      emit jsonLine(doc.object());
    } else {
      m_text.append(line);
    }
  }
  if (m_pending.size() > kMaxStdoutLine) // a runaway line: keep the demo's memory bounded
    m_pending.clear();
}

void ChildProcess::readStderr() {
  const QByteArray chunk = m_process.readAllStandardError();
  if (g_forwardStderr && !chunk.isEmpty()) {
    std::fwrite(chunk.constData(), 1, size_t(chunk.size()), stderr);
    std::fflush(stderr);
  }
  m_stderr += chunk;
  if (m_stderr.size() > kStderrKept)
    m_stderr = m_stderr.right(kStderrKept);
}

bool ChildProcess::waitForExit(int timeoutMs) {
  if (m_pid == 0)
    return true;
  return EventWait::until([this] { return m_exited; }, timeoutMs) || m_exited;
}

QString ChildProcess::stop(int graceMs) {
  if (m_pid == 0 || m_exited)
    return m_howEnded;
  closeInput();
  if (m_process.waitForFinished(graceMs))
    return m_howEnded;
  // QProcess signals exactly the PID it started (and still owns: it has not been reaped).
  m_howEnded = QStringLiteral("terminated");
  m_process.terminate();
  if (m_process.waitForFinished(graceMs))
    return m_howEnded;
  m_howEnded = QStringLiteral("killed");
  m_process.kill();
  m_process.waitForFinished(5000);
  return m_howEnded;
}

} // namespace gc::tools
