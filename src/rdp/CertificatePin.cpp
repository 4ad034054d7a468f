#include "rdp/CertificatePin.h"

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>

namespace gc {

std::optional<QByteArray> CertificatePin::leafSha256FromPem(QByteArrayView pem) {
  if (pem.isEmpty())
    return std::nullopt;
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), int(pem.size())), &BIO_free);
  if (!bio)
    return std::nullopt;
  std::unique_ptr<X509, decltype(&X509_free)> cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr),
                                                   &X509_free);
  if (!cert)
    return std::nullopt;
  unsigned char* der = nullptr;
  const int derLength = i2d_X509(cert.get(), &der);
  if (derLength <= 0)
    return std::nullopt;
  QByteArray digest(32, Qt::Uninitialized);
  unsigned int digestLength = 0;
  const bool ok = EVP_Digest(der, std::size_t(derLength), reinterpret_cast<unsigned char*>(digest.data()),
                             &digestLength, EVP_sha256(), nullptr) == 1;
  OPENSSL_free(der);
  if (!ok || digestLength != 32)
    return std::nullopt;
  return digest;
}

bool CertificatePin::matches(QByteArrayView actual, QByteArrayView pin) {
  if (actual.size() != 32 || pin.size() != 32)
    return false;
  return CRYPTO_memcmp(actual.data(), pin.data(), 32) == 0;
}

} // namespace gc
