// GuestReadyLine: reads the test guest's certificate fingerprint from its stdout
// (tests/fixtures/testguest/README.md): the first line that is a JSON object with
// "event":"ready" gives "cert_sha256". Other lines (later events) are skipped.
//
// Thread: reentrant; use from any thread.
#pragma once

#include "common/Outcome.h"

#include <QByteArray>
#include <QString>

namespace gc::tools {

class GuestReadyLine {
public:
  static constexpr qsizetype kMaxLineBytes = 4096;

  // The fingerprint as 64 lowercase hex digits, or PROTOCOL_MALFORMED when no ready line
  // with a valid cert_sha256 is found.
  static Outcome<QString> certSha256(const QByteArray& text);
};

} // namespace gc::tools
