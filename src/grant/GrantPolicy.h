// GrantPolicy: what the operator configures about accepting grants.
//
// Thread: a value type; use from any thread.
#pragma once

#include <QByteArray>

#include <chrono>

namespace gc {

struct GrantPolicy {
  // The machine-scoped issuer key, used when no --issuer-key is given; absent = no key.
  static constexpr const char* kMachineIssuerKeyPath = "/etc/guest-console/grant-issuer.pem";

  std::chrono::seconds maxLifetime{std::chrono::hours(8)};  // expires_at - issued_at
  std::chrono::seconds freshness{std::chrono::minutes(15)}; // now - issued_at
  std::chrono::seconds clockSkew{60};                       // tolerated for issued_at in the future
  // PEM ("BEGIN PUBLIC KEY") Ed25519 key of the issuer; empty = none configured, and then
  // every grant is refused (GRANT_ISSUER_KEY_MISSING) unless allowUnsigned.
  QByteArray issuerPublicKeyPem;
  // Development only (--allow-unsigned-grants): an unsigned grant is accepted. A signature
  // that is present is still verified when a key is configured.
  bool allowUnsigned = false;
};

} // namespace gc
