// ResidueScrubber: every copy of a secret in private writable memory is overwritten by value,
// wherever it lies (heap, freed heap, anonymous mappings, static data, across a chunk seam),
// while the needle itself and anything that is not the secret stay untouched.
#include "privacy/ResidueScrubber.h"

#include <QTest>

#include <array>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

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
