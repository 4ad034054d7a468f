#include "grant/GrantSignature.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <memory>

namespace gc {

namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

// OpenSSL reports why a key or signature failed on a thread-local queue; we return our
// own message, so leave nothing behind for unrelated code to trip over.
struct ErrorQueueGuard {
  ~ErrorQueueGuard() { ERR_clear_error(); }
};

Failure signatureFailure(const QString& message) {
  return Failure{Refusal::GrantSignature, message};
}

} // namespace

Status GrantSignature::verify(const QByteArray& message, const QByteArray& signature,
                              const QByteArray& publicKeyPem) {
  const ErrorQueueGuard clearErrors;
  std::unique_ptr<BIO, BioFree> bio(
      BIO_new_mem_buf(publicKeyPem.constData(), static_cast<int>(publicKeyPem.size())));
  if (!bio)
    return signatureFailure(QStringLiteral("issuer key: out of memory"));
  std::unique_ptr<EVP_PKEY, PkeyFree> key(PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr));
  if (!key)
    return signatureFailure(QStringLiteral("issuer key: not a PEM public key (expected BEGIN PUBLIC KEY)"));
  if (EVP_PKEY_id(key.get()) != EVP_PKEY_ED25519)
    return signatureFailure(QStringLiteral("issuer key: not an Ed25519 key"));
  if (signature.isEmpty())
    return signatureFailure(QStringLiteral("signature: missing, but an issuer key is configured"));
  if (signature.size() != kSignatureBytes)
    return signatureFailure(
        QStringLiteral("signature: expected %1 bytes, got %2").arg(kSignatureBytes).arg(signature.size()));

  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  // Ed25519 is a one-shot scheme: no digest (NULL) and EVP_DigestVerify, not Update/Final.
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) != 1)
    return signatureFailure(QStringLiteral("signature: verifier could not be set up"));
  const int verdict = EVP_DigestVerify(
      ctx.get(), reinterpret_cast<const unsigned char*>(signature.constData()),
      static_cast<size_t>(signature.size()), reinterpret_cast<const unsigned char*>(message.constData()),
      static_cast<size_t>(message.size()));
  if (verdict != 1)
    return signatureFailure(QStringLiteral("signature: does not verify against the issuer key"));
  return success();
}

Outcome<QByteArray> GrantSignature::decodeDetached(const QByteArray& fileContent) {
  const QByteArray text = fileContent.trimmed();
  const QByteArray::FromBase64Result decoded = QByteArray::fromBase64Encoding(
      text, QByteArray::Base64Encoding | QByteArray::AbortOnBase64DecodingErrors);
  if (text.isEmpty() || !decoded)
    return signatureFailure(QStringLiteral("signature file: not base64"));
  if (decoded.decoded.size() != kSignatureBytes)
    return signatureFailure(QStringLiteral("signature file: expected %1 bytes, got %2")
                                .arg(kSignatureBytes)
                                .arg(decoded.decoded.size()));
  return decoded.decoded;
}

} // namespace gc
