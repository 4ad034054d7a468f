// gc_ledger_consume <stateDir> <grantId>...
// Prints "ready", waits for one line on stdin (the start signal), then consumes each grant
// in order (digest = SHA-256 of the id) and prints one result line per grant: "ok",
// "GRANT_REUSED" or another refusal code. Exit 0, or 2 when any other code occurred.
#include "grant/GrantLedger.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QStringList>

#include <cstdio>

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  const QStringList args = app.arguments();
  if (args.size() < 3) {
    std::fprintf(stderr, "usage: gc_ledger_consume <stateDir> <grantId>...\n");
    return 64;
  }
  gc::GrantLedger ledger(args[1]);
  QList<gc::Grant> grants;
  for (qsizetype i = 2; i < args.size(); ++i) {
    gc::Grant grant;
    grant.grantId = args[i];
    grant.digestHex = QCryptographicHash::hash(args[i].toLatin1(), QCryptographicHash::Sha256).toHex();
    grants.append(grant);
  }

  std::printf("ready\n");
  std::fflush(stdout);
  char line[16];
  if (!std::fgets(line, sizeof line, stdin))
    return 3;

  int exitCode = 0;
  for (const gc::Grant& grant : grants) {
    const gc::Status result = ledger.consume(grant);
    if (result.ok()) {
      std::printf("ok\n");
      continue;
    }
    std::printf("%s\n", qPrintable(gc::refusalName(result.code())));
    if (result.code() != gc::Refusal::GrantReused)
      exitCode = 2;
  }
  return exitCode;
}
