// GrantPolicy: what the operator configures about accepting grants.
//
// Thread: a value type; use from any thread.
#pragma once

#include <QByteArray>

#include <chrono>

namespace gc {

struct GrantPolicy {
  std::chrono::seconds maxLifetime{std::chrono::hours(8)};  // expires_at - issued_at
  std::chrono::seconds freshness{std::chrono::minutes(15)}; // now - issued_at
  std::chrono::seconds clockSkew{60};                       // tolerated for issued_at in the future
  // PEM ("BEGIN PUBLIC KEY") Ed25519 key of the issuer; empty = no signature required.
  QByteArray issuerPublicKeyPem;
};

} // namespace gc
