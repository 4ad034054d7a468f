#include "privacy/CredentialNeedles.h"

#include "privacy/SecureZero.h"

#include <QChar>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdint>
#include <cstring>
#include <string.h>

namespace gc {

namespace {

constexpr std::size_t kDigest = 16;

std::uint32_t rotl(std::uint32_t x, int s) {
  return (x << s) | (x >> (32 - s));
}

// One 64-byte MD4 block (RFC 1320 section 3.4) into `h`.
void md4Block(std::uint32_t h[4], const unsigned char* block) {
  std::uint32_t x[16];
  for (int i = 0; i < 16; ++i)
    x[i] = std::uint32_t(block[i * 4]) | std::uint32_t(block[i * 4 + 1]) << 8 |
           std::uint32_t(block[i * 4 + 2]) << 16 | std::uint32_t(block[i * 4 + 3]) << 24;
  std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
  const auto f = [](std::uint32_t x1, std::uint32_t y, std::uint32_t z) { return (x1 & y) | (~x1 & z); };
  const auto g = [](std::uint32_t x1, std::uint32_t y, std::uint32_t z) {
    return (x1 & y) | (x1 & z) | (y & z);
  };
  const auto k = [](std::uint32_t x1, std::uint32_t y, std::uint32_t z) { return x1 ^ y ^ z; };
  static constexpr int s1[4] = {3, 7, 11, 19}, s2[4] = {3, 5, 9, 13}, s3[4] = {3, 9, 11, 15};
  for (int i = 0; i < 16; ++i) {
    const std::uint32_t t = rotl(a + f(b, c, d) + x[i], s1[i % 4]);
    a = d, d = c, c = b, b = t;
  }
  for (int i = 0; i < 16; ++i) {
    const int at = (i % 4) * 4 + i / 4; // 0,4,8,12,1,5,...
    const std::uint32_t t = rotl(a + g(b, c, d) + x[at] + 0x5a827999u, s2[i % 4]);
    a = d, d = c, c = b, b = t;
  }
  static constexpr int order3[16] = {0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15};
  for (int i = 0; i < 16; ++i) {
    const std::uint32_t t = rotl(a + k(b, c, d) + x[order3[i]] + 0x6ed9eba1u, s3[i % 4]);
    a = d, d = c, c = b, b = t;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d;
  secureZero(x, sizeof x);
  a = b = c = d = 0;
}

// UTF-16LE of UTF-8 `utf8`, upper-cased per UTF-16 unit like winpr's CharUpperBuffW.
Outcome<SecureBuffer> upperUtf16leOf(QByteArrayView utf8) {
  auto out = ResidueScrubber::utf16leOf(utf8);
  if (!out.ok())
    return out;
  char* p = out.value().data();
  for (std::size_t i = 0; i + 1 < out.value().size(); i += 2) {
    const char16_t unit = char16_t(quint8(p[i]) | quint8(p[i + 1]) << 8);
    if (unit >= 0xd800 && unit <= 0xdfff)
      continue; // surrogates stay as they are
    const char16_t upper = char16_t(QChar::toUpper(char32_t(unit)));
    p[i] = char(upper & 0xff);
    p[i + 1] = char(upper >> 8);
  }
  return out;
}

} // namespace

Outcome<SecureBuffer> CredentialNeedles::ntHashOf(QByteArrayView passwordUtf16le) {
  auto out = SecureBuffer::allocate(kDigest);
  auto block = SecureBuffer::allocate(128); // the last one or two padded blocks
  if (!out.ok() || !block.ok())
    return Failure{Refusal::PrivacyViolation, QStringLiteral("cannot hold the NT hash in locked memory")};
  std::uint32_t h[4] = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u};
  const auto* data = reinterpret_cast<const unsigned char*>(passwordUtf16le.data());
  const std::size_t n = std::size_t(passwordUtf16le.size());
  std::size_t done = 0;
  for (; n - done >= 64; done += 64)
    md4Block(h, data + done);
  auto* tail = reinterpret_cast<unsigned char*>(block.value().data());
  const std::size_t rest = n - done;
  if (rest > 0)
    std::memcpy(tail, data + done, rest);
  tail[rest] = 0x80;
  const std::size_t padded = rest + 1 + 8 <= 64 ? 64 : 128;
  const std::uint64_t bits = std::uint64_t(n) * 8;
  for (int i = 0; i < 8; ++i)
    tail[padded - 8 + std::size_t(i)] = static_cast<unsigned char>(bits >> (8 * i));
  md4Block(h, tail);
  if (padded == 128)
    md4Block(h, tail + 64);
  block.value().clear();
  char digest[kDigest];
  for (int i = 0; i < 16; ++i)
    digest[i] = char(h[i / 4] >> (8 * (i % 4)));
  const bool appended = out.value().append(QByteArrayView(digest, kDigest));
  secureZero(digest, sizeof digest);
  secureZero(h, sizeof h);
  if (!appended)
    return Failure{Refusal::Internal, QStringLiteral("secure buffer too small")};
  return out;
}

Outcome<SecureBuffer> CredentialNeedles::ntowfv2Of(const SecureBuffer& ntHash, QByteArrayView userUtf8,
                                                   QByteArrayView domainUtf8) {
  auto user = upperUtf16leOf(userUtf8);
  if (!user.ok())
    return user;
  auto domain = ResidueScrubber::utf16leOf(domainUtf8);
  if (!domain.ok())
    return domain;
  auto message = SecureBuffer::allocate(user.value().size() + domain.value().size() + 1);
  auto out = SecureBuffer::allocate(EVP_MAX_MD_SIZE);
  if (!message.ok() || !out.ok())
    return Failure{Refusal::PrivacyViolation, QStringLiteral("cannot hold NTOWFv2 in locked memory")};
  if (!message.value().append(user.value().view()) || !message.value().append(domain.value().view()))
    return Failure{Refusal::Internal, QStringLiteral("secure buffer too small")};
  // OpenSSL cleanses its HMAC state (key pads, digest context) when it frees it.
  unsigned int length = 0;
  if (HMAC(EVP_md5(), ntHash.constData(), int(ntHash.size()),
           reinterpret_cast<const unsigned char*>(message.value().constData()), message.value().size(),
           reinterpret_cast<unsigned char*>(out.value().data()), &length) == nullptr ||
      length != kDigest || !out.value().resize(kDigest))
    return Failure{Refusal::Internal, QStringLiteral("HMAC-MD5 failed")};
  return out;
}

Outcome<CredentialNeedles> CredentialNeedles::of(const Credentials& credentials) {
  CredentialNeedles needles;
  if (credentials.password.isEmpty())
    return needles;
  auto utf8 = SecureBuffer::copyOf(credentials.password.view());
  if (!utf8.ok())
    return utf8.failure();
  auto utf16 = ResidueScrubber::utf16leOf(credentials.password.view());
  if (!utf16.ok())
    return utf16.failure();
  auto ntHash = ntHashOf(utf16.value().view());
  if (!ntHash.ok())
    return ntHash.failure();
  auto ntowfv2 = ntowfv2Of(ntHash.value(), credentials.username.view(), credentials.domain.view());
  if (!ntowfv2.ok())
    return ntowfv2.failure();
  needles.m_forms[PasswordUtf8] = std::move(utf8.value());
  needles.m_forms[PasswordUtf16le] = std::move(utf16.value());
  needles.m_forms[NtHash] = std::move(ntHash.value());
  needles.m_forms[Ntowfv2] = std::move(ntowfv2.value());
  return needles;
}

ScrubReport CredentialNeedles::scrubAndWipe() {
  std::array<const SecureBuffer*, FormCount> needles{};
  for (int f = 0; f < FormCount; ++f)
    needles[std::size_t(f)] = &m_forms[std::size_t(f)];
  ScrubReport report = ResidueScrubber::scrub(needles);
  wipe();
  return report;
}

void CredentialNeedles::wipe() {
  for (SecureBuffer& form : m_forms)
    form.clear();
}

} // namespace gc
