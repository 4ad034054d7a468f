// Asks for the guest credentials on the controlling terminal (standalone use:
// `guest-console open --credentials tty`): the password with echo off, straight into locked
// memory. Blocks the calling (main) thread while the operator types.
#pragma once

#include "common/Outcome.h"
#include "privacy/Credentials.h"

#include <QString>

namespace gc {

class TtyCredentialPrompt {
public:
  // AUTH_CANCELLED when there is no terminal or the operator ends input (Ctrl-D).
  static Outcome<Credentials> ask(const QString& defaultUser, const QString& defaultDomain, int attempt,
                                  const QString& ttyPath = QStringLiteral("/dev/tty"));
};

} // namespace gc
