#include "tools/issuegrant/GrantSigner.h"

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <memory>

namespace gc::tools {

namespace {

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};

// Refuses every passphrase prompt: OpenSSL's default callback would read the terminal.
int noPassphrase(char*, int, int, void*) {
  return -1;
}

Failure refused(const QString& message) {
  return Failure{Refusal::GrantSignature, message};
}

} // namespace

Outcome<QByteArray> GrantSigner::sign(const QByteArray& message, const QByteArray& privateKeyPem) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(privateKeyPem.constData(), int(privateKeyPem.size())));
  if (!bio)
    return refused(QStringLiteral("out of memory"));
  std::unique_ptr<EVP_PKEY, PkeyFree> key(PEM_read_bio_PrivateKey(bio.get(), nullptr, noPassphrase, nullptr));
  if (!key)
    return refused(QStringLiteral("the signing key is not an unencrypted PEM private key"));
  if (EVP_PKEY_get_id(key.get()) != EVP_PKEY_ED25519)
    return refused(QStringLiteral("the signing key is not an Ed25519 key"));

  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  QByteArray signature(64, '\0');
  size_t length = size_t(signature.size());
  // Ed25519 is a one-shot scheme: no digest is named, the whole message is signed at once.
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &length,
                     reinterpret_cast<const unsigned char*>(message.constData()),
                     size_t(message.size())) != 1 ||
      length != 64)
    return refused(QStringLiteral("signing failed"));
  return signature;
}

QByteArray GrantSigner::detached(const QByteArray& signature) {
  return signature.toBase64() + '\n';
}

Outcome<GrantSigner::KeyPair> GrantSigner::generate() {
  std::unique_ptr<EVP_PKEY, PkeyFree> key(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
  if (!key)
    return refused(QStringLiteral("cannot generate an Ed25519 key"));
  const auto pem = [&key](bool isPrivate) -> QByteArray {
    std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
    if (!bio)
      return {};
    const int ok = isPrivate
                       ? PEM_write_bio_PrivateKey(bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr)
                       : PEM_write_bio_PUBKEY(bio.get(), key.get());
    if (ok != 1)
      return {};
    char* data = nullptr;
    const long size = BIO_get_mem_data(bio.get(), &data);
    QByteArray out(data, qsizetype(size));
    OPENSSL_cleanse(data, size_t(size)); // the memory BIO's copy of the private key
    return out;
  };
  KeyPair pair{pem(true), pem(false)};
  if (pair.privatePem.isEmpty() || pair.publicPem.isEmpty())
    return refused(QStringLiteral("cannot encode the Ed25519 key"));
  return pair;
}

} // namespace gc::tools
