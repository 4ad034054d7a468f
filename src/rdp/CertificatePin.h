// The guest certificate pin: SHA-256 over the leaf certificate's DER encoding.
// Pure functions; any thread.
#pragma once

#include <QByteArray>
#include <QByteArrayView>

#include <optional>

namespace gc {

class CertificatePin {
public:
  // SHA-256 (32 raw bytes) of the first certificate in a PEM blob (FreeRDP hands the chain
  // leaf first). nullopt when no certificate can be parsed.
  static std::optional<QByteArray> leafSha256FromPem(QByteArrayView pem);
  // Constant-time comparison; false unless both are exactly 32 bytes and equal.
  static bool matches(QByteArrayView actual, QByteArrayView pin);
};

} // namespace gc
