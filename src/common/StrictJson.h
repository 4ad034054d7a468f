// StrictJson: the one gate every untrusted JSON text passes before Qt sees it (grant files,
// panel protocol messages, control lines on stdin). QJsonDocument alone is too lenient for
// a security boundary: it silently keeps the last of duplicate keys, accepts any top level
// and replaces invalid UTF-8. A small iterative scanner checks structure, duplicate keys and
// UTF-8 first; only then does QJsonDocument build the values.
//
// Thread: reentrant (no shared state); call from any thread.
#pragma once

#include "common/Outcome.h"

#include <QByteArray>
#include <QJsonObject>

#include <optional>

namespace gc {

class StrictJson {
public:
  // Parses `bytes` as exactly one JSON object (RFC 8259, UTF-8, no BOM) and nothing else
  // besides JSON whitespace. Refuses with ProtocolOversize when bytes.size() > maxBytes
  // (checked before anything is scanned), and with ProtocolMalformed for: invalid UTF-8
  // (overlong forms, encoded surrogates, code points above U+10FFFF), lone surrogate
  // escapes, unescaped control characters, duplicate keys in any object at any depth,
  // trailing bytes, a top level that is not an object, NaN/Infinity or any other
  // non-JSON number, and nesting deeper than maxDepth (the top-level object is depth 1).
  // Messages give a byte offset and never echo more than a short, sanitised key.
  // Callers remap the code to their own vocabulary (e.g. GRANT_SCHEMA).
  static Outcome<QJsonObject> parseObject(const QByteArray& bytes, qsizetype maxBytes, int maxDepth = 16);

  // The character a one-letter JSON escape (\" \\ \/ \b \f \n \r \t) stands for; nullopt
  // for 'u' (four hex digits follow) and for anything that is not an escape.
  static std::optional<char> simpleEscape(char letter);
  // The value of one hex digit of a \u escape; -1 for anything else.
  static int hexDigit(unsigned char c);

  // The structural check alone (no values are built); parseObject runs it first.
  static Status validate(const QByteArray& bytes, qsizetype maxBytes, int maxDepth = 16);
};

} // namespace gc
