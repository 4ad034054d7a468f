// ChildProcess: one helper program the demo runs (the test guest, the console, the MCP
// relay, the viewer, `evidence verify`). No shell, argv without secrets; secrets go through
// stdin only. stdout is read as JSON lines (every program here speaks them) or kept as text;
// stderr is kept (bounded) for the report when something fails, and forwarded live with
// --verbose.
//
// Teardown ends exactly the process this object started, by its PID, never by name: first
// stdin EOF (every one of our children ends itself on it), then SIGTERM, then SIGKILL.
//
// Thread: the main thread.
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QProcess>
#include <QString>

namespace gc::tools {

class ChildProcess : public QObject {
  Q_OBJECT
public:
  explicit ChildProcess(QString label, QObject* parent = nullptr);
  ~ChildProcess() override; // stop()

  static void setForwardStderr(bool forward);

  // Starts `program` and waits until it runs. false (with errorString()) if it did not start.
  bool start(const QString& program, const QStringList& arguments);

  const QString& label() const { return m_label; }
  // The PID it was started with; kept after it exits so the report can prove it is gone.
  qint64 pid() const { return m_pid; }
  bool isRunning() const { return m_process.state() != QProcess::NotRunning; }
  bool hasExited() const { return m_exited; }
  // Valid once hasExited(): the exit status, or -1 when it died of a signal.
  int exitCode() const { return m_exitCode; }
  QString errorString() const { return m_process.errorString(); }

  // One line to its stdin ('\n' appended). The caller's copy of a secret line is its own
  // to wipe; QProcess's write buffer is released once written.
  void writeLine(const QByteArray& line);
  void closeInput();

  // Every stdout line that parsed as a JSON object, in order, and the other lines as text.
  const QList<QJsonObject>& jsonLines() const { return m_json; }
  const QList<QByteArray>& textLines() const { return m_text; }
  QList<QJsonObject> events(const QString& key, const QString& value) const;
  QByteArray stderrTail() const { return m_stderr; }

  bool waitForExit(int timeoutMs);
  // Ends it as described above; returns how: "exited 0", "exited N", "terminated", "killed",
  // or "not started".
  QString stop(int graceMs = 5000);
  QString howEnded() const { return m_howEnded; }

signals:
  void jsonLine(const QJsonObject& line);
  void finished(int exitCode);

private:
  void readStdout();
  void readStderr();

  QString m_label;
  QProcess m_process;
  qint64 m_pid = 0;
  bool m_exited = false;
  int m_exitCode = -1;
  QString m_howEnded = QStringLiteral("not started");
  QByteArray m_pending;
  QList<QJsonObject> m_json;
  QList<QByteArray> m_text;
  QByteArray m_stderr;
};

} // namespace gc::tools
