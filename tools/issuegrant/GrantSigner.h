// GrantSigner: the issuer's side of the grant signature (docs/grant.md, "Signature"): an
// Ed25519 signature over the grant's exact bytes, detached, as base64. The verifying side
// is gc::GrantSignature.
//
// Thread: reentrant; use from any thread.
#pragma once

#include "common/Outcome.h"

#include <QByteArray>

namespace gc::tools {

class GrantSigner {
public:
  // `privateKeyPem`: an unencrypted PEM Ed25519 private key ("BEGIN PRIVATE KEY", as made by
  // `openssl genpkey -algorithm ed25519`). An encrypted key is refused: this tool never asks
  // for a passphrase. Returns the 64 raw signature bytes, or GRANT_SIGNATURE.
  static Outcome<QByteArray> sign(const QByteArray& message, const QByteArray& privateKeyPem);

  // The content of "<grant>.sig": base64 of the signature and a newline.
  static QByteArray detached(const QByteArray& signature);

  struct KeyPair {
    QByteArray privatePem; // "BEGIN PRIVATE KEY" (PKCS#8, unencrypted): for sign()
    QByteArray publicPem;  // "BEGIN PUBLIC KEY": the console's --issuer-key
  };
  // A fresh Ed25519 key pair from OpenSSL's CSPRNG (a key made for one run or demo).
  static Outcome<KeyPair> generate();
};

} // namespace gc::tools
