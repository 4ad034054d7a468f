// ZeroingAllocator: makes every heap block this process frees hold zeros, whichever library
// freed it. Explicit wipes cover the buffers the console owns; the copies Qt (QWebSocket and
// QLocalSocket write buffers, QJsonValue storage), FreeRDP (the transport's stream pool,
// codec buffers) and OpenSSL (TLS record buffers) free on their own are out of reach by
// pointer, and they held guest pixels after close (issue 16.5).
//
// How: glibc's M_PERTURB with a zero byte (freed bytes set to 0; a new block is filled with
// 0xff, which also makes reads of uninitialised memory visible). Limit: glibc's per-thread
// cache (tcache: blocks up to 1032 bytes, 7 per size) takes a block before the perturb step,
// so small blocks are not zeroed. Blocks above the mmap threshold are unmapped on free. In
// the sanitizer build ASan owns the heap: `__asan_default_options` asks it to zero freed
// blocks instead (free_fill_byte=0, no size limit; ASAN_OPTIONS may still override it).
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
