// guest-console-rdp: the RDP reader, the one process that parses the guest's bytes. The
// console (guest-console open) spawns it with exactly three descriptors beside stdio:
//   3  its end of a SOCK_SEQPACKET socketpair (readerwire/ReaderWire.h messages)
//   4  the shared desktop (a sealed memfd, readerwire/SharedDesktop.h)
// and nothing in argv or the environment but the sanitizers' options. Before it reads any
// byte of the guest it prepares what it will need and gives up the rest (ReaderSandbox);
// then it serves the console until told to stop or until the console goes away.
#include "common/Log.h"
#include "privacy/ZeroingAllocator.h"
#include "rdp/WLogRouter.h"
#include "reader/ReaderSandbox.h"
#include "reader/ReaderService.h"
#include "reader/ReaderWarmup.h"
#include "readerwire/SharedDesktop.h"

#include <QCoreApplication>

#include <csignal>
#include <cstdio>
#include <malloc.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

namespace {

constexpr int kControlFd = 3;
constexpr int kDesktopFd = 4;

[[noreturn]] void die(const char* why, const gc::Failure* failure = nullptr) {
  std::fprintf(stderr, "guest-console-rdp: %s%s%s\n", why, failure ? ": " : "",
               failure ? qPrintable(failure->toString()) : "");
  std::_Exit(1);
}

} // namespace

int main(int argc, char** argv) {
  // A fixed mmap threshold, as in the console (src/app/main.cpp): glibc's default raises it (up
  // to 32 MB) whenever a large block is freed, and the certificate probe's FreeRDP context
  // frees tens of MB of codec state before the session allocates its own; from then on those
  // blocks came from arenas that keep their pages (zeroed, resident) after free.
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
  // Freed blocks hold zeros here too: what a decoder might read out of bounds (a
  // ClearCodec glyph showed ~57 KiB of stale heap, NTLM and TLS names among it) is then only
  // what is live, never what the session's setup left behind.
  gc::ZeroingAllocator::install();
  // The console is its only reason to exist: if it dies, so does the reader.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (::getppid() == 1)
    die("no console");
  const struct rlimit none { 0, 0 };
  ::setrlimit(RLIMIT_CORE, &none);
  ::signal(SIGPIPE, SIG_IGN);
  // No code written at run time: Qt compiles a QRegularExpression (the log's redaction) with
  // PCRE2's JIT into writable, executable memory unless told not to. Read once, at the first
  // pattern; the sandbox refuses executable mappings from then on anyway (ReaderSandbox).
  qputenv("QT_ENABLE_REGEXP_JIT", "0");
  gc::Log::install("guest-console-rdp");
  gc::WLogRouter::install();

  gc::Outcome<gc::SharedDesktop> desktop = gc::SharedDesktop::adopt(kDesktopFd);
  if (!desktop.ok())
    die("no shared desktop");
  desktop.value().closeDescriptor(); // the mapping is all it needs
  if (gc::Status s = gc::ReaderSandbox::prepare(); !s.ok())
    die("cannot prepare the sandbox", &s.failure());
  if (gc::Status s = gc::ReaderWarmup::run(); !s.ok())
    die("cannot initialise FreeRDP", &s.failure());
  const gc::Outcome<quint32> sandbox = gc::ReaderSandbox::apply();
  if (!sandbox.ok())
    die("cannot apply the sandbox", &sandbox.failure());

  QCoreApplication app(argc, argv);
  gc::ReaderService service(kControlFd, std::move(desktop).value(), sandbox.value());
  QObject::connect(&service, &gc::ReaderService::finished, &app,
                   [](int code) { QCoreApplication::exit(code); });
  service.start();
  return app.exec();
}
