// GrantLoader: turns untrusted grant bytes into a Grant, or refuses with a typed code.
// Order of checks: size (GRANT_SCHEMA) → signature (GRANT_ISSUER_KEY_MISSING when no key
// is configured, GRANT_SIGNATURE when the grant is unsigned or the signature does not
// verify; nothing unauthenticated is parsed) → strict JSON and schema (GRANT_SCHEMA; the
// libvirt URI LIBVIRT_URI_FORBIDDEN) → freshness (GRANT_NOT_YET_VALID, GRANT_EXPIRED,
// GRANT_LIFETIME, GRANT_STALE, in that order). policy.allowUnsigned (development only)
// lets an unsigned grant through; a present signature is still verified against a
// configured key. The single-use rule is GrantLedger's, not the loader's.
//
// Thread: reentrant; use from any thread.
#pragma once

#include "common/Outcome.h"
#include "grant/Grant.h"
#include "grant/GrantPolicy.h"

#include <QByteArray>
#include <QDateTime>
#include <QString>

namespace gc {

class GrantLoader {
public:
  static constexpr qsizetype kMaxGrantBytes = 64 * 1024;
  static constexpr qsizetype kMaxSignatureFileBytes = 1024;

  // `signature`: the raw 64-byte Ed25519 signature, or empty when there is none. It is
  // only looked at when the policy configures an issuer key.
  static Outcome<Grant> parse(const QByteArray& bytes, const GrantPolicy& policy, const QDateTime& nowUtc,
                              const QByteArray& signature = {});

  // Reads at most kMaxGrantBytes + 1 bytes from `path` (a regular file; FIFOs and devices are
  // GRANT_UNREADABLE) and, when the policy configures a key, the detached signature from
  // "<path>.sig" (base64, whitespace trimmed; absent = unsigned). Then parse().
  static Outcome<Grant> loadFile(const QString& path, const GrantPolicy& policy, const QDateTime& nowUtc);

  // The freshness rules alone, for a grant that was valid when loaded (e.g. re-checked later).
  static Status checkFreshness(const Grant& grant, const GrantPolicy& policy, const QDateTime& nowUtc);
};

} // namespace gc
