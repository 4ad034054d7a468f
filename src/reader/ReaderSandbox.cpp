#include "reader/ReaderSandbox.h"

#include "privacy/ResidueScrubber.h"

#include <QStringList>

#include <openssl/crypto.h>
#include <openssl/provider.h>
#include <openssl/ssl.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <initializer_list>
#include <linux/sched.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

namespace gc {

namespace {

// The sanitizer runtimes reserve terabytes of address space for their shadow memory.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// A trapped call: say which (async-signal-safe) and end the reader.
void onSigsys(int, siginfo_t* info, void*) {
  char line[64] = "guest-console-rdp: sandbox refused system call ";
  std::size_t at = std::strlen(line);
  int nr = info ? info->si_syscall : -1;
  char digits[16];
  int n = 0;
  if (nr < 0)
    digits[n++] = '?';
  while (nr > 0 && n < 15) {
    digits[n++] = char('0' + nr % 10);
    nr /= 10;
  }
  if (n == 0)
    digits[n++] = '0';
  while (n > 0 && at < sizeof line - 2)
    line[at++] = digits[--n];
  line[at++] = '\n';
  (void)!::write(STDERR_FILENO, line, at);
  ::_exit(159);
}

struct Filter {
  scmp_filter_ctx ctx;
  bool ok = true;
  explicit Filter(scmp_filter_ctx c) : ctx(c) {}
  ~Filter() { seccomp_release(ctx); }
  void allow(int nr) { ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0) == 0; }
  void allow(std::initializer_list<int> nrs) {
    for (int nr : nrs)
      allow(nr);
  }
  void refuse(int error, std::initializer_list<int> nrs) {
    for (int nr : nrs)
      ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(uint32_t(error)), nr, 0) == 0;
  }
  template <typename... Cmp> void allowIf(int nr, Cmp... cmp) {
    ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, unsigned(sizeof...(cmp)), cmp...) == 0;
  }
  template <typename... Cmp> void refuseIf(int error, int nr, Cmp... cmp) {
    ok = ok &&
         seccomp_rule_add(ctx, SCMP_ACT_ERRNO(uint32_t(error)), nr, unsigned(sizeof...(cmp)), cmp...) == 0;
  }
};

bool installFilter() {
  struct sigaction sa {};
  sa.sa_sigaction = &onSigsys;
  sa.sa_flags = SA_SIGINFO;
  if (::sigaction(SIGSYS, &sa, nullptr) != 0)
    return false;
  scmp_filter_ctx raw = seccomp_init(SCMP_ACT_TRAP);
  if (!raw)
    return false;
  Filter f(raw);
  const pid_t self = ::getpid();

  // Memory, threads, time, the event loops (Qt's, winpr's waits), randomness.
  f.allow({SCMP_SYS(brk),
           SCMP_SYS(munmap),
           SCMP_SYS(mremap),
           SCMP_SYS(madvise),
           SCMP_SYS(mlock),
           SCMP_SYS(mlock2),
           SCMP_SYS(munlock),
           SCMP_SYS(membarrier),
           SCMP_SYS(futex),
           SCMP_SYS(set_robust_list),
           SCMP_SYS(get_robust_list),
           SCMP_SYS(rseq),
           SCMP_SYS(set_tid_address),
           SCMP_SYS(sched_yield),
           SCMP_SYS(sched_getaffinity),
           SCMP_SYS(getcpu),
           SCMP_SYS(gettid),
           SCMP_SYS(getpid),
           SCMP_SYS(getppid),
           SCMP_SYS(getuid),
           SCMP_SYS(geteuid),
           SCMP_SYS(getgid),
           SCMP_SYS(getegid),
           SCMP_SYS(getresuid),
           SCMP_SYS(getresgid),
           SCMP_SYS(uname),
           SCMP_SYS(sysinfo),
           SCMP_SYS(getrusage),
           SCMP_SYS(clock_gettime),
           SCMP_SYS(clock_getres),
           SCMP_SYS(gettimeofday),
           SCMP_SYS(time),
           SCMP_SYS(nanosleep),
           SCMP_SYS(clock_nanosleep),
           SCMP_SYS(getrandom),
           SCMP_SYS(restart_syscall),
           SCMP_SYS(exit),
           SCMP_SYS(exit_group),
           SCMP_SYS(rt_sigaction),
           SCMP_SYS(rt_sigprocmask),
           SCMP_SYS(rt_sigreturn),
           SCMP_SYS(rt_sigtimedwait),
           SCMP_SYS(sigaltstack),
           SCMP_SYS(poll),
           SCMP_SYS(ppoll),
           SCMP_SYS(select),
           SCMP_SYS(pselect6),
           SCMP_SYS(epoll_create1),
           SCMP_SYS(epoll_ctl),
           SCMP_SYS(epoll_wait),
           SCMP_SYS(epoll_pwait),
           SCMP_SYS(eventfd2),
           SCMP_SYS(pipe2),
           SCMP_SYS(timerfd_create),
           SCMP_SYS(timerfd_settime),
           SCMP_SYS(timerfd_gettime)});
  // Descriptors it already holds: the guest's socket, the socketpair, the shared desktop,
  // eventfds, its kept /proc files, stderr.
  f.allow({SCMP_SYS(read),        SCMP_SYS(write),       SCMP_SYS(readv),      SCMP_SYS(writev),
           SCMP_SYS(pread64),     SCMP_SYS(preadv),      SCMP_SYS(lseek),      SCMP_SYS(close),
           SCMP_SYS(close_range), SCMP_SYS(dup),         SCMP_SYS(dup3),       SCMP_SYS(fstat),
           SCMP_SYS(fcntl),       SCMP_SYS(recvfrom),    SCMP_SYS(recvmsg),    SCMP_SYS(sendto),
           SCMP_SYS(sendmsg),     SCMP_SYS(sendmmsg),    SCMP_SYS(shutdown),   SCMP_SYS(getsockopt),
           SCMP_SYS(setsockopt),  SCMP_SYS(getsockname), SCMP_SYS(getpeername)});
  // Each conditional allow below has its complement as a conditional refusal (one rule per
  // argument range: libseccomp gives a matching refusal precedence over an allow).
  // ioctl: non-blocking mode and the bytes pending on a socket; a terminal query (isatty on
  // stderr) is ENOTTY.
  f.allowIf(SCMP_SYS(ioctl), SCMP_A1(SCMP_CMP_EQ, FIONREAD));
  f.allowIf(SCMP_SYS(ioctl), SCMP_A1(SCMP_CMP_EQ, FIONBIO));
  f.refuseIf(ENOTTY, SCMP_SYS(ioctl), SCMP_A1(SCMP_CMP_LT, FIONREAD));
  f.refuseIf(ENOTTY, SCMP_SYS(ioctl), SCMP_A1(SCMP_CMP_GT, FIONBIO));
  // fstat through the path calls: only on a descriptor (AT_EMPTY_PATH), never a path.
  f.allowIf(SCMP_SYS(newfstatat), SCMP_A3(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH));
  f.refuseIf(EACCES, SCMP_SYS(newfstatat), SCMP_A3(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, 0));
  f.allowIf(SCMP_SYS(statx), SCMP_A2(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH));
  f.refuseIf(EACCES, SCMP_SYS(statx), SCMP_A2(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, 0));
  // Memory, never code: every library is mapped before the sandbox, so from here on no
  // mapping is made or turned executable (a write of the guest's choosing never becomes an
  // instruction). A JIT that asks is told EPERM and falls back (reader_main turns Qt's off).
  for (int nr : {SCMP_SYS(mmap), SCMP_SYS(mprotect)}) {
    f.allowIf(nr, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
    f.refuseIf(EPERM, nr, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC));
  }
  f.refuse(EPERM, {SCMP_SYS(pkey_mprotect)});
  // Threads, not processes: glibc's pthread_create uses clone3 first and clone without it.
  f.allowIf(SCMP_SYS(clone), SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
  f.refuseIf(EPERM, SCMP_SYS(clone), SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
  f.refuse(ENOSYS, {SCMP_SYS(clone3)});
  // libunwind (heaptrack's backtraces) asks mincore whether an address is
  // mapped: refused, so the frame counts as unreadable, rather than fatal.
  f.refuse(ENOSYS, {SCMP_SYS(mincore)});
  // Its own memory only (the residue scrub), its own signals only (abort()).
  for (int nr : {SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev), SCMP_SYS(tgkill), SCMP_SYS(kill)}) {
    f.allowIf(nr, SCMP_A0(SCMP_CMP_EQ, scmp_datum_t(self)));
    f.refuseIf(EPERM, nr, SCMP_A0(SCMP_CMP_NE, scmp_datum_t(self)));
  }
  f.refuse(EPERM, {SCMP_SYS(tkill)});
  // Thread names and reading limits; nothing else of prctl/prlimit.
  static_assert(PR_GET_NAME == PR_SET_NAME + 1);
  f.allowIf(SCMP_SYS(prctl), SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME));
  f.allowIf(SCMP_SYS(prctl), SCMP_A0(SCMP_CMP_EQ, PR_GET_NAME));
  f.refuseIf(EPERM, SCMP_SYS(prctl), SCMP_A0(SCMP_CMP_LT, PR_SET_NAME));
  f.refuseIf(EPERM, SCMP_SYS(prctl), SCMP_A0(SCMP_CMP_GT, PR_GET_NAME));
  f.allowIf(SCMP_SYS(prlimit64), SCMP_A2(SCMP_CMP_EQ, 0));
  f.refuseIf(EPERM, SCMP_SYS(prlimit64), SCMP_A2(SCMP_CMP_NE, 0));
  f.allow(SCMP_SYS(getrlimit));

  // No filesystem: what libraries try on their own (configuration, time zone, certificate
  // stores, Kerberos) fails as if the file were not readable.
  f.refuse(EACCES, {SCMP_SYS(open),
                    SCMP_SYS(openat),
                    SCMP_SYS(openat2),
                    SCMP_SYS(creat),
                    SCMP_SYS(access),
                    SCMP_SYS(faccessat),
                    SCMP_SYS(faccessat2),
                    SCMP_SYS(stat),
                    SCMP_SYS(lstat),
                    SCMP_SYS(statfs),
                    SCMP_SYS(fstatfs),
                    SCMP_SYS(readlink),
                    SCMP_SYS(readlinkat),
                    SCMP_SYS(getcwd),
                    SCMP_SYS(chdir),
                    SCMP_SYS(fchdir),
                    SCMP_SYS(mkdir),
                    SCMP_SYS(mkdirat),
                    SCMP_SYS(rmdir),
                    SCMP_SYS(unlink),
                    SCMP_SYS(unlinkat),
                    SCMP_SYS(rename),
                    SCMP_SYS(renameat),
                    SCMP_SYS(renameat2),
                    SCMP_SYS(link),
                    SCMP_SYS(linkat),
                    SCMP_SYS(symlink),
                    SCMP_SYS(symlinkat),
                    SCMP_SYS(chmod),
                    SCMP_SYS(fchmod),
                    SCMP_SYS(fchmodat),
                    SCMP_SYS(chown),
                    SCMP_SYS(fchown),
                    SCMP_SYS(fchownat),
                    SCMP_SYS(lchown),
                    SCMP_SYS(truncate),
                    SCMP_SYS(ftruncate),
                    SCMP_SYS(mknod),
                    SCMP_SYS(mknodat),
                    SCMP_SYS(inotify_init1),
                    SCMP_SYS(inotify_add_watch),
                    SCMP_SYS(getdents64),
                    SCMP_SYS(memfd_create),
                    SCMP_SYS(utimensat)});
  // No network of its own: the one socket it was given is all it talks on.
  f.refuse(EACCES, {SCMP_SYS(socket), SCMP_SYS(socketpair), SCMP_SYS(connect), SCMP_SYS(bind),
                    SCMP_SYS(listen), SCMP_SYS(accept), SCMP_SYS(accept4)});
  // No other process, no privilege, no kernel surface it does not need.
  f.refuse(EPERM, {SCMP_SYS(execve),
                   SCMP_SYS(execveat),
                   SCMP_SYS(fork),
                   SCMP_SYS(vfork),
                   SCMP_SYS(ptrace),
                   SCMP_SYS(setuid),
                   SCMP_SYS(setgid),
                   SCMP_SYS(setreuid),
                   SCMP_SYS(setregid),
                   SCMP_SYS(setresuid),
                   SCMP_SYS(setresgid),
                   SCMP_SYS(setgroups),
                   SCMP_SYS(unshare),
                   SCMP_SYS(setns),
                   SCMP_SYS(mount),
                   SCMP_SYS(umount2),
                   SCMP_SYS(pivot_root),
                   SCMP_SYS(chroot),
                   SCMP_SYS(personality),
                   SCMP_SYS(bpf),
                   SCMP_SYS(perf_event_open),
                   SCMP_SYS(userfaultfd),
                   SCMP_SYS(io_uring_setup),
                   SCMP_SYS(io_uring_enter),
                   SCMP_SYS(io_uring_register),
                   SCMP_SYS(keyctl),
                   SCMP_SYS(add_key),
                   SCMP_SYS(request_key),
                   SCMP_SYS(wait4),
                   SCMP_SYS(waitid),
                   SCMP_SYS(setrlimit),
                   SCMP_SYS(sched_setaffinity),
                   SCMP_SYS(setpriority),
                   SCMP_SYS(mbind),
                   SCMP_SYS(set_mempolicy),
                   SCMP_SYS(migrate_pages),
                   SCMP_SYS(move_pages)});
  if (!f.ok || seccomp_attr_set(f.ctx, SCMP_FLTATR_CTL_TSYNC, 1) != 0)
    return false;
  return seccomp_load(f.ctx) == 0;
}

bool setLimit(int resource, rlim_t value) {
  struct rlimit current {};
  if (::getrlimit(resource, &current) != 0)
    return false;
  const rlim_t limit = current.rlim_max == RLIM_INFINITY ? value : std::min(current.rlim_max, value);
  const struct rlimit next { limit, limit };
  return ::setrlimit(resource, &next) == 0;
}

} // namespace

Status ReaderSandbox::prepare() {
  if (!ResidueScrubber::keepProcFilesOpen())
    return Status(Refusal::RdpReaderFailed, QStringLiteral("cannot keep /proc/self/maps and pagemap open"));
  // OpenSSL reads its configuration and loads its providers (shared objects) on first use:
  // now, not inside. NTLM needs the legacy provider's RC4 and MD4 (WinPR loads it too, but
  // lazily), and loading a provider opens a file.
  if (OPENSSL_init_ssl(OPENSSL_INIT_LOAD_CONFIG | OPENSSL_INIT_LOAD_SSL_STRINGS, nullptr) != 1)
    return Status(Refusal::RdpReaderFailed, QStringLiteral("cannot initialise OpenSSL"));
  if (!OSSL_PROVIDER_load(nullptr, "default"))
    return Status(Refusal::RdpReaderFailed, QStringLiteral("cannot load OpenSSL's default provider"));
  (void)OSSL_PROVIDER_load(nullptr, "legacy"); // without it WinPR falls back to its own MD4
  return success();
}

Outcome<quint32> ReaderSandbox::apply() {
  quint32 applied = 0;
  // Namespaces: best effort (a kernel or a container may forbid them).
  if (::unshare(CLONE_NEWUSER) == 0)
    applied |= SandboxReport::UserNamespace;
  if (::unshare(CLONE_NEWNET) == 0)
    applied |= SandboxReport::NetworkNamespace;
  if (::unshare(CLONE_NEWIPC | CLONE_NEWUTS) == 0)
    applied |= SandboxReport::IpcNamespace;
  // Its own mount namespace, owned by its own user namespace: what allows the chroot below.
  (void)::unshare(CLONE_NEWNS);
  // An empty, read-only root: /proc/self/fdinfo exists for every process and holds no file
  // anyone could open for writing (what Chromium's sandbox does).
  if (::chroot("/proc/self/fdinfo") == 0 && ::chdir("/") == 0)
    applied |= SandboxReport::EmptyRoot;

  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return Failure{Refusal::RdpReaderFailed, QStringLiteral("PR_SET_NO_NEW_PRIVS failed")};
  applied |= SandboxReport::NoNewPrivileges;
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  if (!setLimit(RLIMIT_CORE, 0) || !setLimit(RLIMIT_NOFILE, kDescriptors))
    return Failure{Refusal::RdpReaderFailed, QStringLiteral("cannot set the resource limits")};
  applied |= SandboxReport::ResourceLimits;
  if (!kSanitized) {
    if (!setLimit(RLIMIT_AS, kAddressSpaceBytes))
      return Failure{Refusal::RdpReaderFailed, QStringLiteral("cannot limit the address space")};
    applied |= SandboxReport::AddressSpaceLimit;
  }
  if (!installFilter())
    return Failure{Refusal::RdpReaderFailed, QStringLiteral("cannot install the system call filter")};
  applied |= SandboxReport::SyscallFilter;
  return applied;
}

} // namespace gc
