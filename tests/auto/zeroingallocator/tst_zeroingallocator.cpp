// The release build's ZeroingAllocator (issue 24.2): every freed block holds zeros, small ones
// too, and no allocation becomes resident because of the zeroing (glibc's M_PERTURB, used
// before, filled every new block). Plain C++ without sanitizers (see CMakeLists.txt): each
// check prints PASS/FAIL and the exit status is the number of failures.
#include "privacy/ZeroingAllocator.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/uio.h>
#include <unistd.h>

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  std::printf("%s %s\n", ok ? "PASS" : "FAIL", what);
  if (!ok)
    ++failures;
}

// Reads [at + from, at + to) back through the kernel (no use-after-free through a pointer) and
// says whether every byte is zero.
bool zeroThroughTheKernel(std::uintptr_t at, std::size_t from, std::size_t to) {
  std::array<char, 4096> seen{};
  for (std::size_t off = from; off < to;) {
    const std::size_t n = std::min(seen.size(), to - off);
    iovec local{seen.data(), n};
    iovec remote{reinterpret_cast<void*>(at + off), n};
    if (::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0) != ssize_t(n))
      return false;
    if (!std::all_of(seen.begin(), seen.begin() + std::ptrdiff_t(n), [](char c) { return c == 0; }))
      return false;
    off += n;
  }
  return true;
}

// RssAnon from /proc/self/status, in KiB (-1 when unreadable).
long rssAnonKiB() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f)
    return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "RssAnon: %ld kB", &kib) == 1)
      break;
  std::fclose(f);
  return kib;
}

// A freed block of `size` bytes filled with a sentinel holds zeros, past the words glibc's
// free lists write into it (tcache: 16 bytes; bins: up to 32 at the start).
bool freedBlockIsZero(std::size_t size) {
  char* block = static_cast<char*>(std::malloc(size));
  if (!block)
    return false;
  std::memset(block, 'Q', size);
  const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(block);
  std::free(block);
  return zeroThroughTheKernel(at, 32, size - 16);
}

} // namespace

int main() {
  check(gc::ZeroingAllocator::install() && gc::ZeroingAllocator::active(), "install() takes effect");
  check(gc::ZeroingAllocator::zeroesSmallBlocks(), "small blocks are zeroed too");

  check(freedBlockIsZero(64), "zeroesAFreedSmallBlock (64 bytes, glibc's per-thread cache)");
  check(freedBlockIsZero(1000), "zeroesAFreedSmallBlock (1000 bytes, glibc's per-thread cache)");
  check(freedBlockIsZero(16384), "zeroesAFreedBlock (16 KiB, a FreeRDP stream-pool buffer)");
  check(freedBlockIsZero(100000), "zeroesAFreedBlock (100 KB, below the mmap threshold)");

  // realloc that moves: the old block is freed through ours, so it holds zeros.
  {
    constexpr std::size_t kOld = 4000;
    char* block = static_cast<char*>(std::malloc(kOld));
    std::memset(block, 'R', kOld);
    const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(block);
    char* grown = static_cast<char*>(std::realloc(block, 400000));
    const bool kept = grown && std::all_of(grown, grown + kOld, [](char c) { return c == 'R'; });
    check(kept && reinterpret_cast<std::uintptr_t>(grown) != at, "realloc keeps the contents when it moves");
    check(zeroThroughTheKernel(at, 32, kOld - 16), "zeroesTheBlockReallocLeavesBehind");
    std::free(grown);
  }
  {
    char* block = static_cast<char*>(std::malloc(256));
    std::memset(block, 'S', 256);
    char* same = static_cast<char*>(std::realloc(block, 200));
    check(same == block && same[199] == 'S', "realloc that shrinks a little keeps the block");
    check(std::realloc(same, 0) == nullptr, "realloc to 0 frees");
    char* fresh = static_cast<char*>(std::realloc(nullptr, 32));
    check(fresh != nullptr, "realloc of nullptr allocates");
    std::free(fresh);
    std::free(nullptr);
  }

  // The amplification of issue 24: a 512 MiB block nobody writes stays (almost) non-resident,
  // allocated and freed.
  {
    const long before = rssAnonKiB();
    void* big = std::malloc(512u << 20);
    const long allocated = rssAnonKiB();
    std::free(big);
    const long freed = rssAnonKiB();
    std::printf("FIGURE RssAnon KiB: before %ld, with an untouched 512 MiB block %ld, after its free %ld\n",
                before, allocated, freed);
    check(big && before >= 0 && allocated - before < 8 * 1024,
          "an untouched allocation does not become resident");
    check(freed - before < 8 * 1024, "freeing an untouched allocation does not make it resident");
  }
  return failures;
}
