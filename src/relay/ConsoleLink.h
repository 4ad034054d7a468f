// ConsoleLink: how the relay's McpServer reaches the console, one call at a time. The real
// one is RelayConnection (the run's Unix socket); tests substitute their own.
#pragma once

#include "common/Refusal.h"

#include <QJsonObject>
#include <QString>

namespace gc {

class ConsoleLink {
public:
  struct Reply {
    bool ok = false;
    QJsonObject result;  // ok
    Failure failure;     // !ok
    QJsonObject receipt; // !ok after a failed action: the receipt that was still issued
  };

  virtual ~ConsoleLink() = default;
  // Sends one operation (relay/RelayProtocol.h names) and waits for its reply. A broken
  // link answers RUN_NOT_FOUND ("the console has closed").
  virtual Reply call(const QString& op, const QJsonObject& arguments) = 0;
};

} // namespace gc
