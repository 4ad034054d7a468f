// A tiny process that goes through the console's libvirt lifetime once, in the console's
// order, and exits: start the event loop, open the hypervisor read-only, watch the domain
// (events and poll), destroy the watcher, drop the connection, stop the loop. Under ASan
// LeakSanitizer runs at exit, so the exit status says whether anything the watcher handed
// to libvirt was left behind. tst_vmwatch runs it.
//
// The sequence runs on a worker thread that has finished before exit: LeakSanitizer scans
// live threads' stacks, and a stale copy of a leaked pointer in a dead stack frame of the
// main thread could hide the very leak this process exists to show.
//
// Usage: gc_watch_teardown <test-driver node XML> <domain UUID>; prints "done" on success.
#include "vm/DomainWatcher.h"
#include "vm/LibvirtConnection.h"
#include "vm/LibvirtEventLoop.h"

#include <QCoreApplication>
#include <QThread>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>

using namespace gc;

namespace {

QString teardownOnce(const QString& nodeXml, const QString& uuid) {
  LibvirtEventLoop loop;
  if (const Status started = loop.start(); !started)
    return started.failure().toString();
  QString error;
  {
    auto opened = LibvirtConnection::openReadOnly(QStringLiteral("test://") + nodeXml);
    if (!opened)
      return opened.failure().toString();
    auto connection = std::make_unique<LibvirtConnection>(std::move(opened).value());
    auto watcher = std::make_unique<DomainWatcher>(*connection, uuid);
    if (const Status watching = watcher->start(std::chrono::hours(1)); !watching)
      error = watching.failure().toString();
    QCoreApplication::processEvents(); // the first (queued) poll: the domain runs, nothing fires
    if (watcher->hasFired())
      error = QStringLiteral("the watcher fired on a running domain");
    watcher.reset();
    connection.reset();
  }
  loop.stop();
  return error;
}

} // namespace

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  if (argc != 3) {
    std::fprintf(stderr, "usage: gc_watch_teardown <node.xml> <uuid>\n");
    return 2;
  }
  const QString nodeXml = QString::fromLocal8Bit(argv[1]);
  const QString uuid = QString::fromLocal8Bit(argv[2]);
  // On the main thread, as the console does: libvirt's one-time initialisation sets up
  // per-thread state in libraries below it (OpenSSL's error queue, through curl and libssh2)
  // that belongs to the initialising thread, not to what this process checks.
  LibvirtConnection::initializeLibrary();
  std::optional<QString> error;
  std::unique_ptr<QThread> worker(QThread::create([&] { error = teardownOnce(nodeXml, uuid); }));
  worker->start();
  worker->wait();
  worker.reset();
  if (!error || !error->isEmpty()) {
    std::fprintf(stderr, "%s\n", error ? qPrintable(*error) : "the worker did not run");
    return 1;
  }
  std::puts("done");
  return 0;
}
