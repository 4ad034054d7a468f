// GrantIssuer: renders a GrantDraft as the bytes of a version-1 grant (docs/grant.md), in
// the documented field order, and refuses to hand out bytes that the console's own
// GrantLoader would refuse on schema grounds. Freshness is deliberately not checked here:
// tests issue grants in the past or the future on purpose.
//
// Thread: reentrant; use from any thread.
#pragma once

#include "common/Outcome.h"
#include "tools/issuegrant/GrantDraft.h"

#include <QByteArray>
#include <QString>

namespace gc::tools {

class GrantIssuer {
public:
  // The grant's bytes (UTF-8 JSON, 2-space indent, final newline), or GRANT_SCHEMA with
  // the loader's message (e.g. "panel.bad-key: …") when the draft is not a valid grant.
  static Outcome<QByteArray> render(const GrantDraft& draft);

  // A fresh random (version 4) UUID in lowercase.
  static QString newUuid();
  // A fresh identifier such as "run-5f0c2a9e1b7d" (prefix + 12 random hex digits).
  static QString newId(const QString& prefix);
  // "64 hex digits, case and colons ignored" → lowercase hex; empty when it is not one.
  static QString normalizeCertSha256(const QString& text);
  // SHA-256 of the bytes, lowercase hex: the grant's digest as evidence names it.
  static QByteArray digestHex(const QByteArray& bytes);
};

} // namespace gc::tools
