// ResidueScrubber: every copy of a secret in private writable memory is overwritten by value,
// wherever it lies (heap, freed heap, anonymous mappings, static data, across a chunk seam),
// while the needle itself and anything that is not the secret stay untouched.
#include "privacy/CredentialNeedles.h"
#include "privacy/ResidueScrubber.h"

#include <QTest>

#include <array>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

using gc::CredentialNeedles;
using gc::ResidueScrubber;
using gc::SecureBuffer;

namespace {

// Built at run time so the sentinel is never a literal in read-only data.
SecureBuffer sentinel(const char* tail) {
  auto buffer = SecureBuffer::allocate(64);
  if (!buffer.ok())
    qFatal("no secure buffer");
  for (const char* part : {"Gc-", "resid", "ue-", tail})
    if (!buffer.value().append(QByteArrayView(part)))
      qFatal("sentinel too long");
  return std::move(buffer.value());
}

// Reads through the kernel, so a freed block can be inspected without a use-after-free.
bool holdsAt(const void* address, const SecureBuffer& needle) {
  std::array<char, 64> copy{};
  iovec local{copy.data(), needle.size()};
  iovec remote{const_cast<void*>(address), needle.size()};
  if (::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0) != ssize_t(needle.size()))
    return false;
  const bool same = std::memcmp(copy.data(), needle.constData(), needle.size()) == 0;
  explicit_bzero(copy.data(), copy.size());
  return same;
}

// Whether [address, address + length) reads as zeros (through the kernel, like holdsAt).
bool zerosAt(quintptr address, std::size_t length) {
  std::array<char, 64> copy{};
  iovec local{copy.data(), length};
  iovec remote{reinterpret_cast<void*>(address), length};
  if (length > copy.size() || ::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0) != ssize_t(length))
    return false;
  return std::all_of(copy.begin(), copy.begin() + qsizetype(length), [](char c) { return c == 0; });
}

char s_staticData[128]; // .bss: a private, file-backed writable mapping

// Copies the needle into a heap block at +40 and frees the block; only the address comes back
// (glibc keeps its own pointers in a freed block's first bytes; the copy at +40 survives).
[[gnu::noinline]] quintptr plantInAFreedBlock(const SecureBuffer& needle) {
  char* block = static_cast<char*>(std::malloc(96));
  std::memset(block, 'y', 96);
  std::memcpy(block + 40, needle.constData(), needle.size());
  const quintptr address = quintptr(block + 40);
  std::free(block);
  return address;
}

} // namespace

class tst_ResidueScrubber : public QObject {
  Q_OBJECT

private slots:
  void wipesEveryCopyAndKeepsTheNeedle() {
    const SecureBuffer needle = sentinel("pw!7");
    const SecureBuffer* needles[] = {&needle};
    const std::size_t n = needle.size();

    char* heap = static_cast<char*>(std::malloc(n));
    std::memcpy(heap, needle.constData(), n);
    char* embedded = static_cast<char*>(std::malloc(200));
    std::memset(embedded, 'x', 200);
    std::memcpy(embedded + 41, needle.constData(), n);
    void* mapped = ::mmap(nullptr, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    QVERIFY(mapped != MAP_FAILED);
    std::memcpy(static_cast<char*>(mapped) + 5000, needle.constData(), n);
    std::memcpy(s_staticData + 3, needle.constData(), n);
    const quintptr freedCopy = plantInAFreedBlock(needle);

    const gc::ScrubReport report = ResidueScrubber::scrub(needles);

    QVERIFY(report.ok);
    QCOMPARE(report.needles, 1);
    QVERIFY2(report.copiesWiped >= 4, qPrintable(QString::number(report.copiesWiped)));
    QCOMPARE(report.copiesUnwritable, 0);
    QVERIFY(report.regions > 0 && report.bytesScanned > 0);
    QVERIFY(!holdsAt(heap, needle));
    QVERIFY(!holdsAt(embedded + 41, needle));
    QVERIFY(!holdsAt(static_cast<char*>(mapped) + 5000, needle));
    QVERIFY(!holdsAt(s_staticData + 3, needle));
    QVERIFY(!holdsAt(reinterpret_cast<const void*>(freedCopy), needle));
    // Only the secret's bytes changed.
    QCOMPARE(embedded[40], 'x');
    QCOMPARE(embedded[41 + int(n)], 'x');
    QVERIFY(std::all_of(heap, heap + n, [](char c) { return c == 0; }));
    // The needle itself is excluded.
    QVERIFY(std::memcmp(needle.constData(), "Gc-residue-pw!7", n) == 0);

    std::free(heap);
    std::free(embedded);
    ::munmap(mapped, 1 << 16);
  }

  void findsCopiesAcrossEveryChunkSeam() {
    // Chunk seams fall on page boundaries of the mapping; a copy straddles every one of them.
    const SecureBuffer needle = sentinel("seam-0123456789");
    const SecureBuffer* needles[] = {&needle};
    const std::size_t length = 1 << 20;
    const long page = ::sysconf(_SC_PAGESIZE);
    auto* region = static_cast<char*>(
        ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    QVERIFY(region != MAP_FAILED);
    int planted = 0;
    for (std::size_t at = std::size_t(page); at < length; at += std::size_t(page), ++planted)
      std::memcpy(region + at - 5, needle.constData(), needle.size());

    const gc::ScrubReport report = ResidueScrubber::scrub(needles);

    QVERIFY(report.copiesWiped >= planted);
    for (std::size_t at = std::size_t(page); at < length; at += std::size_t(page))
      QVERIFY2(!holdsAt(region + at - 5, needle), qPrintable(QString::number(at)));
    ::munmap(region, length);
  }

  void leavesNeedlesTooShortToMatchSafely() {
    auto shortNeedle = SecureBuffer::copyOf(QByteArrayView("a1b2c", 5));
    QVERIFY(shortNeedle.ok());
    const SecureBuffer* needles[] = {&shortNeedle.value()};
    char* heap = static_cast<char*>(std::malloc(8));
    std::memcpy(heap, shortNeedle->constData(), 5);

    const gc::ScrubReport report = ResidueScrubber::scrub(needles);

    QVERIFY(report.ok);
    QCOMPARE(report.needles, 0);
    QCOMPARE(report.needlesTooShort, 1);
    QCOMPARE(report.copiesWiped, 0);
    QVERIFY(std::memcmp(heap, "a1b2c", 5) == 0);
    std::free(heap);
  }

  // MD4 as RFC 1320 appendix A.5 lists it (ntHashOf hashes raw bytes), and the NT hash of
  // "Password" from MS-NLMP 4.2.2.1.2.
  void computesTheNtHash_data() {
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QByteArray>("md4");
    QTest::newRow("empty") << QByteArray() << QByteArray("31d6cfe0d16ae931b73c59d7e0c089c0");
    QTest::newRow("abc") << QByteArray("abc") << QByteArray("a448017aaf21d8525fc10ae87aa6729d");
    QTest::newRow("message digest") << QByteArray("message digest")
                                    << QByteArray("d9130a8164549fe818874806e1c7014b");
    QTest::newRow("62 bytes: two padded blocks")
        << QByteArray("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        << QByteArray("043f8582f241db351ce627e153e7f0e4");
    QTest::newRow("80 bytes: a full block, then the tail")
        << QByteArray("12345678901234567890123456789012345678901234567890123456789012345678901234567890")
        << QByteArray("e33b4ddc9c38f2199c3e7b164fcc0536");
    QTest::newRow("NT hash of Password (UTF-16LE)")
        << QByteArray("P\0a\0s\0s\0w\0o\0r\0d\0", 16) << QByteArray("a4f49c406510bdcab6824ee7c30fd852");
  }
  void computesTheNtHash() {
    QFETCH(QByteArray, input);
    QFETCH(QByteArray, md4);
    const auto hash = CredentialNeedles::ntHashOf(input);
    QVERIFY(hash.ok());
    QVERIFY(hash->isLockedAndUndumpable());
    QCOMPARE(hash->view().toByteArray().toHex(), md4);
  }

  // MS-NLMP 4.2.4.1.1: NTOWFv2("Password", "User", "Domain"); the user is upper-cased, the
  // domain is not.
  void computesNtowfv2AsWinprDoes() {
    const auto hash = CredentialNeedles::ntHashOf(QByteArrayView("P\0a\0s\0s\0w\0o\0r\0d\0", 16));
    QVERIFY(hash.ok());
    const auto v2 = CredentialNeedles::ntowfv2Of(hash.value(), "User", "Domain");
    QVERIFY(v2.ok());
    QVERIFY(v2->isLockedAndUndumpable());
    QCOMPARE(v2->view().toByteArray().toHex(), QByteArray("0c868a403bfd7a93a3001ef22ef02e3f"));
    const auto lower = CredentialNeedles::ntowfv2Of(hash.value(), "user", "Domain");
    QVERIFY(lower.ok());
    QCOMPARE(lower->view().toByteArray(), v2->view().toByteArray());
    const auto otherDomain = CredentialNeedles::ntowfv2Of(hash.value(), "User", "DOMAIN");
    QVERIFY(otherDomain.ok());
    QVERIFY(otherDomain->view().toByteArray() != v2->view().toByteArray());
  }

  // What winpr leaves after NLA (the NT hash in a dead stack frame, NTOWFv2 in a freed
  // NTLM context) is found by value and overwritten; the report counts each form.
  void scrubsTheDerivedFormsByValue() {
    gc::Credentials credentials;
    const SecureBuffer password = sentinel("ntlm-pw");
    credentials.password = SecureBuffer::copyOf(password.view()).value();
    credentials.username = SecureBuffer::copyOf(QByteArrayView("operator")).value();
    auto needles = CredentialNeedles::of(credentials);
    QVERIFY(needles.ok());
    const SecureBuffer& ntHash = needles->form(CredentialNeedles::NtHash);
    const SecureBuffer& ntowfv2 = needles->form(CredentialNeedles::Ntowfv2);
    QCOMPARE(ntHash.size(), std::size_t(16));
    QCOMPARE(ntowfv2.size(), std::size_t(16));
    // Independent derivation through the NTLM formula, from the UTF-16LE password.
    const auto expectedHash =
        CredentialNeedles::ntHashOf(needles->form(CredentialNeedles::PasswordUtf16le).view());
    QCOMPARE(ntHash.view().toByteArray(), expectedHash->view().toByteArray());

    char* live = static_cast<char*>(std::malloc(64));
    std::memset(live, 'z', 64);
    std::memcpy(live + 8, ntowfv2.constData(), 16);
    const quintptr freedHash = plantInAFreedBlock(ntHash);
    const quintptr freedKey = plantInAFreedBlock(ntowfv2);

    const gc::ScrubReport report = needles.value().scrubAndWipe();

    QVERIFY(report.ok);
    QCOMPARE(report.needles, 4);
    QVERIFY2(report.copiesByNeedle[CredentialNeedles::NtHash] >= 1,
             qPrintable(QString::number(report.copiesByNeedle[CredentialNeedles::NtHash])));
    QVERIFY2(report.copiesByNeedle[CredentialNeedles::Ntowfv2] >= 2,
             qPrintable(QString::number(report.copiesByNeedle[CredentialNeedles::Ntowfv2])));
    // (expectedHash is a copy too: the scrub zeroed it as well.)
    QVERIFY(zerosAt(freedHash, 16));
    QVERIFY(zerosAt(freedKey, 16));
    QVERIFY(std::all_of(live + 8, live + 24, [](char c) { return c == 0; }));
    QCOMPARE(live[7], 'z');
    QCOMPARE(live[24], 'z');
    for (int f = 0; f < CredentialNeedles::FormCount; ++f)
      QVERIFY(needles->form(CredentialNeedles::Form(f)).isEmpty());
    std::free(live);
  }

  void convertsToUtf16le_data() {
    QTest::addColumn<QByteArray>("utf8");
    QTest::addColumn<QByteArray>("utf16le");
    QTest::newRow("ascii") << QByteArray("Ab1") << QByteArray("A\0b\0001\0", 6);
    QTest::newRow("two bytes") << QByteArray("\xc3\xa9") << QByteArray("\xe9\0", 2);
    QTest::newRow("three bytes") << QByteArray("\xe2\x82\xac") << QByteArray("\xac\x20", 2);
    QTest::newRow("four bytes: a surrogate pair")
        << QByteArray("\xf0\x9f\x94\x91") << QByteArray("\x3d\xd8\x11\xdd", 4);
    QTest::newRow("empty") << QByteArray() << QByteArray();
  }
  void convertsToUtf16le() {
    QFETCH(QByteArray, utf8);
    QFETCH(QByteArray, utf16le);
    const auto converted = ResidueScrubber::utf16leOf(utf8);
    QVERIFY(converted.ok());
    QCOMPARE(converted->view().toByteArray(), utf16le);
    // The same as Qt's conversion (the reference, not used in the product: it copies to the heap).
    const QString reference = QString::fromUtf8(utf8);
    QCOMPARE(converted->view().toByteArray(),
             QByteArray(reinterpret_cast<const char*>(reference.utf16()), reference.size() * 2));
  }

  void refusesInvalidUtf8_data() {
    QTest::addColumn<QByteArray>("utf8");
    QTest::newRow("lone continuation") << QByteArray("\x80");
    QTest::newRow("truncated") << QByteArray("a\xe2\x82");
    QTest::newRow("overlong") << QByteArray("\xc0\xaf");
    QTest::newRow("surrogate") << QByteArray("\xed\xa0\x80");
    QTest::newRow("beyond U+10FFFF") << QByteArray("\xf4\x90\x80\x80");
    QTest::newRow("bad continuation") << QByteArray("\xc3\x28");
  }
  void refusesInvalidUtf8() {
    QFETCH(QByteArray, utf8);
    QVERIFY(!ResidueScrubber::utf16leOf(utf8).ok());
  }
};

QTEST_GUILESS_MAIN(tst_ResidueScrubber)
#include "tst_residuescrubber.moc"
