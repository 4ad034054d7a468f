// GrantLoader::parse: untrusted grant bytes (no issuer key, unsigned allowed, so the schema and freshness
// paths run). An accepted grant must carry the digest of exactly these bytes.
#include "grant/GrantLoader.h"

#include <QCryptographicHash>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const QByteArray bytes(reinterpret_cast<const char*>(data), qsizetype(size));
  // The seed corpus is issued for 2030-01-01T12:00Z; a fixed "now" keeps runs reproducible.
  static const QDateTime now(QDate(2030, 1, 1), QTime(12, 10, 0), Qt::UTC);
  static const gc::GrantPolicy policy = [] {
    gc::GrantPolicy p;
    p.allowUnsigned = true; // unsigned bytes: reach the schema, not just the signature refusal
    return p;
  }();
  const auto grant = gc::GrantLoader::parse(bytes, policy, now);
  if (grant.ok()) {
    if (grant->digestHex != QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex())
      std::abort();
    if (grant->version != 1 || grant->rdp.host != QStringLiteral("127.0.0.1") ||
        (grant->rdp.unpinned == !grant->rdp.certSha256.isEmpty()) ||
        !(grant->rdp.certSha256.isEmpty() || grant->rdp.certSha256.size() == 32))
      std::abort();
  }
  return 0;
}
