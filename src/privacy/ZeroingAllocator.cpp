#include "privacy/ZeroingAllocator.h"

#include "privacy/SecureZero.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <malloc.h>

#if defined(__SANITIZE_ADDRESS__)
// Read by the ASan runtime before main(); ASAN_OPTIONS from the environment is applied on top.
extern "C" const char* __asan_default_options() {
  return "max_free_fill_size=2147483647:free_fill_byte=0";
}
#endif

namespace gc {

namespace {
std::atomic<bool> s_active{false};
} // namespace

} // namespace gc

#if !defined(__SANITIZE_ADDRESS__)
// free() and realloc() of this executable, in front of glibc's: the dynamic linker binds every
// library's free (Qt, FreeRDP, OpenSSL, libpng) to these, and they forward to glibc's own entry
// points, which glibc exports for exactly this use.
extern "C" {
void __libc_free(void* block);
void* __libc_malloc(std::size_t size);
void* __libc_realloc(void* block, std::size_t size);
}

namespace {

// glibc keeps a chunk's size word just before the block; its bit 1 (IS_MMAPPED) marks a block
// that free() unmaps. The kernel zeroes those pages before anyone maps them again, and writing
// them first would only make untouched pages resident (what M_PERTURB did to every block).
constexpr std::size_t kIsMmapped = 0x2;
bool isMmapped(const void* block) {
  std::size_t word = 0;
  std::memcpy(&word, static_cast<const char*>(block) - sizeof word, sizeof word);
  return (word & kIsMmapped) != 0;
}

void zeroBlock(void* block) {
  if (isMmapped(block))
    return;
  // secureZero: a store the compiler must not drop although the block dies right after.
  gc::secureZero(block, malloc_usable_size(block));
}

} // namespace

extern "C" void free(void* block) noexcept {
  if (block && gc::s_active.load(std::memory_order_relaxed))
    zeroBlock(block);
  __libc_free(block);
}

extern "C" void* realloc(void* block, std::size_t size) noexcept {
  // Unmapped blocks move with mremap (no copy stays behind); without the zeroing, glibc's.
  if (!block || !gc::s_active.load(std::memory_order_relaxed) || isMmapped(block))
    return __libc_realloc(block, size);
  if (size == 0) {
    free(block);
    return nullptr;
  }
  // glibc would grow in place or copy and free the old block internally, unzeroed: copy here
  // and free through ours. A block that shrinks by at most half stays where it is.
  const std::size_t have = malloc_usable_size(block);
  if (size <= have && size >= have / 2)
    return block;
  void* moved = __libc_malloc(size);
  if (!moved)
    return nullptr; // the old block stays valid, as realloc promises
  std::memcpy(moved, block, std::min(have, size));
  free(block);
  return moved;
}
#endif

namespace gc {

bool ZeroingAllocator::install() {
  s_active = true;
  return true;
}

bool ZeroingAllocator::active() {
  return s_active;
}

bool ZeroingAllocator::zeroesSmallBlocks() {
  // Both ways run before glibc's per-thread cache and ASan's quarantine take the block.
  return s_active;
}

} // namespace gc
