// ZeroingAllocator: makes every heap block this process frees hold zeros, whichever library
// freed it. Explicit wipes cover the buffers the console owns; the copies Qt (QWebSocket and
// QLocalSocket write buffers, QJsonValue storage), FreeRDP (the transport's stream pool,
// codec buffers) and OpenSSL (TLS record buffers) free on their own are out of reach by
// pointer, and they held guest pixels after close.
//
// How: the executable defines free() and realloc() in front of glibc's (the dynamic linker
// binds every library's calls to them): a freed block is zeroed, then handed to glibc
// (`__libc_free`), before its per-thread cache can take it; realloc moves through the same
// free. Blocks glibc unmaps on free are left alone (the kernel zeroes those pages), so the
// zeroing never makes memory resident that was not (glibc's M_PERTURB, used before, filled
// every new block too: a guest-sized allocation became resident at once). In the
// sanitizer build ASan owns the heap: `__asan_default_options` asks it to zero freed blocks
// instead (free_fill_byte=0, no size limit; ASAN_OPTIONS may still override it).
// Until install() the two only forward to glibc.
//
// Thread affinity: call install() once, first thing in main(), before other threads exist.
#pragma once

namespace gc {

class ZeroingAllocator {
public:
  // Configures the allocator; false when glibc refused (then freed blocks keep their bytes).
  static bool install();
  // Whether install() took effect (the sanitizer build: whether ASan was asked to).
  static bool active();
  // Whether small blocks are zeroed too (ASan: yes; glibc: not those its tcache takes).
  static bool zeroesSmallBlocks();
};

} // namespace gc
