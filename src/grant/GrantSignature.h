// GrantSignature: Ed25519 verification of a grant's detached signature over its exact
// bytes. The only code in gc_grant that talks to OpenSSL.
//
// Thread: reentrant; use from any thread.
#pragma once

#include "common/Outcome.h"

#include <QByteArray>

namespace gc {

class GrantSignature {
public:
  static constexpr qsizetype kSignatureBytes = 64;

  // GrantSignature failures: the key is not an Ed25519 public key in PEM, the signature is
  // empty or not 64 bytes, or it does not verify.
  static Status verify(const QByteArray& message, const QByteArray& signature,
                       const QByteArray& publicKeyPem);

  // The detached-signature file's content: base64 of the 64 raw bytes, surrounding
  // whitespace ignored. Refuses anything else with GrantSignature.
  static Outcome<QByteArray> decodeDetached(const QByteArray& fileContent);
};

} // namespace gc
