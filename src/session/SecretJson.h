// Reads the string members of a flat JSON object straight into locked memory, so a
// credentials line never becomes a QString/QJsonValue on the ordinary heap.
//
// Thread: reentrant; use from any thread.
#pragma once

#include "common/Outcome.h"
#include "privacy/SecureBuffer.h"

#include <QByteArrayView>
#include <QString>

#include <map>

namespace gc {

class SecretJson {
public:
  using Members = std::map<QString, SecureBuffer>;

  // `text` must be one JSON object whose members are all strings (keys ≤ 32 bytes); it is
  // structurally validated first (StrictJson::validate: UTF-8, no duplicate keys). Each value
  // is decoded (escapes included) into its own SecureBuffer. Anything else is
  // PROTOCOL_MALFORMED; messages never contain values.
  static Outcome<Members> parseFlatStrings(QByteArrayView text, qsizetype maxBytes);
};

} // namespace gc
