// SecureBuffer: secrets live in locked, dump-excluded memory, are bounded, and are wiped.
#include "privacy/SecureBuffer.h"
#include "privacy/ZeroingAllocator.h"

#include <QTest>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <sys/uio.h>
#include <unistd.h>
#include <vector>

using gc::SecureBuffer;

namespace {
std::vector<char> s_lastUnmapped;
void recordUnmapped(const char* bytes, std::size_t length) {
  s_lastUnmapped.assign(bytes, bytes + length);
}
} // namespace

class tst_SecureBuffer : public QObject {
  Q_OBJECT

private slots:
  // The console's allocator (glibc M_PERTURB / ASan free fill): a freed block holds zeros, so
  // what a library frees on its own (a socket's write buffer, FreeRDP's stream pool) keeps
  // nothing. Read back through the kernel: no use-after-free through a pointer.
  void zeroingAllocatorZeroesFreedBlocks() {
    QVERIFY(gc::ZeroingAllocator::install());
    QVERIFY(gc::ZeroingAllocator::active());
    constexpr std::size_t kSize = 16384; // a stream-pool buffer; above glibc's tcache sizes
    char* block = static_cast<char*>(std::malloc(kSize));
    QVERIFY(block);
    std::memset(block, 'Q', kSize);
    const quintptr at = quintptr(block);
    std::free(block);
    std::array<char, 4096> seen{};
    bool zero = true;
    for (std::size_t off = 64; off + seen.size() <= kSize - 64 && zero; off += seen.size()) {
      iovec local{seen.data(), seen.size()};
      iovec remote{reinterpret_cast<void*>(at + off), seen.size()};
      QCOMPARE(::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0), ssize_t(seen.size()));
      zero = std::all_of(seen.begin(), seen.end(), [](char c) { return c == 0; });
    }
    QVERIFY(zero);
  }

  void mappingIsLockedAndExcludedFromCoreDumps() {
    auto buffer = SecureBuffer::allocate(64);
    QVERIFY(buffer.ok());
    QVERIFY(buffer->isLockedAndUndumpable());
  }

  void refusesToGrowBeyondCapacity_data() {
    QTest::addColumn<int>("capacity");
    QTest::addColumn<int>("first");
    QTest::addColumn<int>("second");
    QTest::addColumn<bool>("secondFits");
    QTest::newRow("exact fit") << 8 << 4 << 4 << true;
    QTest::newRow("one over") << 8 << 4 << 5 << false;
    QTest::newRow("page sized capacity does not leak the page slack") << 10 << 10 << 1 << false;
    QTest::newRow("zero capacity") << 0 << 0 << 1 << false;
  }
  void refusesToGrowBeyondCapacity() {
    QFETCH(int, capacity);
    QFETCH(int, first);
    QFETCH(int, second);
    QFETCH(bool, secondFits);
    auto buffer = SecureBuffer::allocate(std::size_t(capacity));
    QVERIFY(buffer.ok());
    const QByteArray a(first, 'a'), b(second, 'b');
    QVERIFY(buffer.value().append(a));
    const char* before = buffer->constData();
    QCOMPARE(buffer.value().append(b), secondFits);
    QCOMPARE(buffer->size(), std::size_t(secondFits ? first + second : first));
    QCOMPARE(buffer->constData(), before); // never reallocated
    QVERIFY(!buffer.value().resize(std::size_t(capacity) + 1));
  }

  void clearWipesEveryByte() {
    auto buffer = SecureBuffer::allocate(32);
    QVERIFY(buffer.ok());
    QVERIFY(buffer.value().append(QByteArrayView("hunter2-sentinel")));
    const char* p = buffer->constData();
    buffer.value().clear();
    QVERIFY(buffer->isEmpty());
    QVERIFY(std::all_of(p, p + buffer->capacity(), [](char c) { return c == 0; }));
  }

  void destructionWipesBeforeUnmapping() {
    SecureBuffer::setUnmapHookForTesting(&recordUnmapped);
    s_lastUnmapped.clear();
    {
      auto buffer = SecureBuffer::copyOf("hunter2-sentinel");
      QVERIFY(buffer.ok());
      QCOMPARE(buffer->view(), QByteArrayView("hunter2-sentinel"));
    }
    SecureBuffer::setUnmapHookForTesting(nullptr);
    QVERIFY(!s_lastUnmapped.empty());
    QVERIFY(std::all_of(s_lastUnmapped.begin(), s_lastUnmapped.end(), [](char c) { return c == 0; }));
  }

  void moveTransfersOwnershipWithoutCopy() {
    auto buffer = SecureBuffer::copyOf("secret");
    QVERIFY(buffer.ok());
    const char* p = buffer->constData();
    SecureBuffer moved = std::move(buffer).value();
    QCOMPARE(moved.constData(), p);
    QCOMPARE(moved.view(), QByteArrayView("secret"));
    SecureBuffer assigned;
    assigned = std::move(moved);
    QCOMPARE(assigned.constData(), p);
    QCOMPARE(moved.constData(), nullptr); // NOLINT(bugprone-use-after-move): proves the move
    QVERIFY(moved.isEmpty());
    static_assert(!std::is_copy_constructible_v<SecureBuffer>);
    static_assert(!std::is_copy_assignable_v<SecureBuffer>);
  }
};

QTEST_GUILESS_MAIN(tst_SecureBuffer)
#include "tst_securebuffer.moc"
