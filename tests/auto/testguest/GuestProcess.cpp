#include "GuestProcess.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QEventLoop>
#include <QJsonDocument>
#include <QTimer>

GuestProcess::GuestProcess() {
  // stdout is the event protocol; the guest's diagnostics (stderr) stay visible in the test log.
  m_process.setProcessChannelMode(QProcess::ForwardedErrorChannel);
  QObject::connect(&m_process, &QProcess::readyReadStandardOutput, [this] { readLines(); });
}

GuestProcess::~GuestProcess() {
  if (m_process.state() != QProcess::NotRunning) {
    m_process.write("{\"cmd\":\"quit\"}\n");
    m_process.closeWriteChannel();
    if (!m_process.waitForFinished(10000)) {
      m_process.kill();
      m_process.waitForFinished(5000);
    }
  }
}

QString GuestProcess::binary() {
  return qEnvironmentVariable("GC_TEST_FIXTURES") + QStringLiteral("/gc-test-guest");
}

bool GuestProcess::start(const QStringList& args, const QString& user, const QString& password) {
  m_process.start(binary(), args);
  if (!m_process.waitForStarted(10000)) {
    return false;
  }
  m_process.write(QJsonDocument(QJsonObject{{QStringLiteral("username"), user},
                                            {QStringLiteral("password"), password},
                                            {QStringLiteral("domain"), QString()}})
                      .toJson(QJsonDocument::Compact) +
                  '\n');
  return waitForEvent(QStringLiteral("ready"), 1, 30000);
}

void GuestProcess::command(const QByteArray& json) {
  m_process.write(json + '\n');
}

void GuestProcess::readLines() {
  while (m_process.canReadLine()) {
    const QJsonObject o = QJsonDocument::fromJson(m_process.readLine().trimmed()).object();
    if (o.value(QStringLiteral("event")).toString() == QStringLiteral("ready")) {
      m_ready = o;
    }
    m_events.append(o);
  }
}

QList<QJsonObject> GuestProcess::events(const QString& name) const {
  QList<QJsonObject> out;
  for (const QJsonObject& o : m_events) {
    if (o.value(QStringLiteral("event")).toString() == name) {
      out.append(o);
    }
  }
  return out;
}

void GuestProcess::poll() {
  m_process.waitForReadyRead(0);
  readLines();
}

bool GuestProcess::waitForEvent(const QString& name, int count, int timeoutMs) {
  QDeadlineTimer deadline(timeoutMs);
  while (events(name).size() < count) {
    if (deadline.hasExpired() || m_process.state() == QProcess::NotRunning) {
      readLines();
      return events(name).size() >= count;
    }
    // The event loop runs while it waits: a session under test hands its frames to this thread
    // and waits to have them back (a lease), and what the guest sends next can hang on that.
    QEventLoop loop;
    QTimer::singleShot(50, &loop, &QEventLoop::quit);
    QObject::connect(&m_process, &QProcess::readyReadStandardOutput, &loop, &QEventLoop::quit);
    loop.exec();
    readLines();
  }
  return true;
}
