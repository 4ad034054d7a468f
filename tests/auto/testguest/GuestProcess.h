#pragma once
// Runs one gc-test-guest for a test: starts it, sends the credentials line, collects its
// stdout JSON events, and stops it (quit, then kill as a last resort).
//
// Thread: the test thread (signals are delivered while QTRY_* macros spin the event loop).

#include <QJsonObject>
#include <QList>
#include <QProcess>
#include <QStringList>

class GuestProcess {
public:
  GuestProcess();
  ~GuestProcess();

  // Starts the guest with `args` and the given credentials; true once the ready line came.
  bool start(const QStringList& args, const QString& user = QStringLiteral("tester"),
             const QString& password = QStringLiteral("throwaway-pw"));
  void command(const QByteArray& json);

  QJsonObject ready() const { return m_ready; }
  quint16 port() const { return static_cast<quint16>(m_ready.value(QStringLiteral("port")).toInt()); }
  QString sha256() const { return m_ready.value(QStringLiteral("cert_sha256")).toString(); }

  QList<QJsonObject> events(const QString& name) const;
  bool waitForEvent(const QString& name, int count = 1, int timeoutMs = 15000);
  // Reads whatever lines arrived, without waiting.
  void poll();
  QProcess& process() { return m_process; }

  static QString binary();

private:
  void readLines();

  QProcess m_process;
  QJsonObject m_ready;
  QList<QJsonObject> m_events;
};
