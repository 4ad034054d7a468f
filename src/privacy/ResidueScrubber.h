// ResidueScrubber: finds stale copies of a secret anywhere in this process's private writable
// memory and overwrites them with zeros.
//
// Why: FreeRDP 3.10 copies the password into allocations the console cannot reach by pointer
// (the settings backup freerdp_connect keeps, the SSPI identities, CredSSP buffers) and frees
// some of them without zeroing (upstream FreeRDP#12531). Once the login is over none of them
// is needed again, so the session scrubs them by value: it reads its own mappings through
// process_vm_readv and writes zeros through process_vm_writev. Both are system calls on our
// own address space, so a mapping that disappears while we scan yields EFAULT instead of a
// crash, and freed memory is overwritten without touching it through a (sanitized) pointer.
// Only pages this process can have written are read (/proc/self/pagemap: present or swapped,
// not a file page), so never-touched memory and untouched library data are not faulted in.
//
// What it does not do: partial copies (a freed block whose first bytes the allocator reused
// for its own pointers) are not found; a value derived from a secret is found only when the
// caller derives it too and passes it as a needle (CredentialNeedles: NT hash, NTOWFv2); mappings larger
// than kMaxMapping (sanitizer shadow memory) and read-only or shared mappings are not scanned
// (counted in the report). A needle shorter than kMinimumNeedle bytes is not scrubbed: so short
// a pattern could match unrelated live data, and overwriting that would corrupt the process.
//
// Thread affinity: any thread; call it where the secret's users are quiescent (the RDP worker
// right after freerdp_connect returns). It allocates nothing on the heap while it holds
// secret bytes: its scratch buffer is its own locked mapping, wiped before it is unmapped.
#pragma once

#include "privacy/SecureBuffer.h"

#include <QtGlobal>

#include <array>
#include <cstddef>
#include <span>

namespace gc {

struct ScrubReport {
  static constexpr std::size_t kMaxNeedles = 8;
  bool ok = false;         // the scan ran (maps readable, scratch mapped)
  int needles = 0;         // needles scrubbed for
  int needlesTooShort = 0; // needles below kMinimumNeedle, not scrubbed
  int regions = 0;         // mappings scanned
  int regionsSkipped = 0;  // private writable mappings over kMaxMapping
  qint64 bytesScanned = 0;
  int copiesWiped = 0;      // matches overwritten with zeros
  int copiesUnwritable = 0; // matches the write did not reach (the mapping changed)
  // copiesWiped per needle, by its position in scrub()'s argument (the first kMaxNeedles).
  std::array<int, kMaxNeedles> copiesByNeedle{};
  qint64 elapsedUs = 0;
};

class ResidueScrubber {
public:
  static constexpr std::size_t kMinimumNeedle = 6;
  static constexpr quint64 kMaxMapping = quint64(1) << 30;

  // Overwrites every copy of each needle outside the needles' own buffers.
  static ScrubReport scrub(std::span<const SecureBuffer* const> needles);

  // Opens /proc/self/maps and /proc/self/pagemap now and keeps them open for every later
  // scrub: a process that is about to lose the right to open files (the RDP reader's
  // sandbox) calls it first. Idempotent; false when either cannot be opened.
  static bool keepProcFilesOpen();

  // The UTF-16LE form of UTF-8 `utf8` (how Windows APIs and NTLM hold a password), built
  // without a heap copy. PRIVACY_VIOLATION if the buffer cannot be locked; INTERNAL for
  // invalid UTF-8.
  static Outcome<SecureBuffer> utf16leOf(QByteArrayView utf8);
};

} // namespace gc
