// FreeRDP's SIMD primitives round the colour conversion differently from its C path; the
// decoder under test equals the C path. Selecting it must happen before FreeRDP first builds
// its primitives table, so it runs as a static initialiser of the test binary.
#include <freerdp/primitives.h>

namespace {

const bool kPureSoft = [] {
  primitives_set_hints(PRIMITIVES_PURE_SOFT);
  return true;
}();

} // namespace
