// RelayConnection: the relay's end of the run's socket. Blocking, single-threaded: the relay
// handles one MCP message at a time, so a call simply waits for its reply.
//
// open() checks, in order: the run directory is ours and private, the socket is a socket
// of ours (missing → RUN_NOT_FOUND), the console's SO_PEERCRED uid is ours, the console's
// hello names a tool we implement (else MCP_NOT_AUTHORIZED), and the console accepts our
// bind. Only then are calls made. Expiry is a rule on this side too: a call made once the
// wall clock has reached the grant's expires_at (the console's hello says when) is refused
// EXPIRED without reaching the console, also when the console was stopped and has not yet
// noticed.
#pragma once

#include "common/Outcome.h"
#include "relay/ConsoleLink.h"
#include "relay/RelayWire.h"

#include <QDateTime>
#include <QStringList>

#include <chrono>
#include <sys/types.h>

namespace gc {

class RelayConnection : public ConsoleLink {
public:
  struct Hello {
    QString run;
    QString server;
    QString tool;
    QStringList candidateIds; // empty: the grant lets the model choose a free action
    QDateTime expiresAt;      // the grant's; from then on every call is refused EXPIRED here
  };

  RelayConnection() = default;
  ~RelayConnection() override;
  RelayConnection(const RelayConnection&) = delete;
  RelayConnection& operator=(const RelayConnection&) = delete;

  // The directory and socket file must belong to our effective uid; the process at the
  // other end must run as `expectedPeerUid` (our euid in production; a test seam).
  Status open(const QString& socketPath, uid_t expectedPeerUid, std::chrono::milliseconds timeout);
  const Hello& hello() const { return m_hello; }
  bool isOpen() const { return m_fd >= 0; }
  void setCallTimeout(std::chrono::milliseconds timeout) { m_callTimeout = timeout; }

  Reply call(const QString& op, const QJsonObject& arguments) override;

private:
  Status writeLine(const QJsonObject& message);
  Outcome<QJsonObject> readLine(std::chrono::milliseconds timeout);
  Outcome<relay::ToRelay> readMessage(std::chrono::milliseconds timeout); // readLine, decoded
  void closeFd();

  int m_fd = -1;
  qint64 m_nextId = 1;
  QByteArray m_buffer;
  Hello m_hello;
  std::chrono::milliseconds m_callTimeout{60000};
};

} // namespace gc
