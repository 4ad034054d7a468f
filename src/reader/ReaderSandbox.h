// ReaderSandbox: what the RDP reader process (guest-console-rdp) gives up before it reads a
// single byte from the guest, so that whatever the guest's bytes make of it, it can reach
// nothing beyond the socket it was handed and the shared desktop:
// - empty namespaces where the kernel allows them: a new user namespace (no capabilities
//   outside it), a network namespace with no interface (no network of its own), IPC and UTS
//   namespaces, and a root directory that holds nothing (chroot into an empty directory);
// - no new privileges (PR_SET_NO_NEW_PRIVS), no core dumps, not ptrace-attachable;
// - resource limits: descriptors, address space (release builds: the sanitizers reserve
//   terabytes of shadow address space), file size 0;
// - seccomp-bpf (libseccomp): an allowlist of system calls. What a library may try and must
//   not do — open a file, create a socket, connect, send a signal to another process — fails
//   with EACCES/EPERM, so FreeRDP, OpenSSL and Qt fail that step gracefully; any other call
//   outside the list traps: the reader writes the call's number to stderr and exits (the
//   console closes the run RDP_READER_FAILED).
//
// Thread: call apply() on the reader's main thread before any other thread exists; the
// filter is synchronised to every thread anyway (TSYNC).
#pragma once

#include "common/Outcome.h"
#include "readerwire/SandboxReport.h"

#include <QtGlobal>

namespace gc {

class ReaderSandbox {
public:
  // The address space the reader may use in a release build (RLIMIT_AS).
  static constexpr quint64 kAddressSpaceBytes = quint64(3) << 30;
  // Descriptors the reader may hold (RLIMIT_NOFILE).
  static constexpr quint64 kDescriptors = 256;

  // Opens now what the reader needs later and could not open inside the sandbox (the
  // residue scrubber's /proc files; OpenSSL's configuration and providers).
  static Status prepare();
  // Applies everything above; the result is SandboxReport::Applied bits. The namespaces are
  // best effort (recorded in the result); the limits, no_new_privs and the syscall filter are
  // required: a failure is RDP_READER_FAILED.
  static Outcome<quint32> apply();
};

} // namespace gc
