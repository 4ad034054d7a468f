#include "privacy/ZeroingAllocator.h"

#include <atomic>
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

bool ZeroingAllocator::install() {
#if defined(__SANITIZE_ADDRESS__)
  s_active = true;
#else
  // M_PERTURB's low byte is what freed bytes are set to; the value must be non-zero to enable.
  s_active = mallopt(M_PERTURB, 0x100) == 1;
#endif
  return s_active;
}

bool ZeroingAllocator::active() {
  return s_active;
}

bool ZeroingAllocator::zeroesSmallBlocks() {
#if defined(__SANITIZE_ADDRESS__)
  return s_active;
#else
  return false;
#endif
}

} // namespace gc
