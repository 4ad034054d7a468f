// IssueGrantCommand: the gc-issue-grant command line. A developer and test tool, never part
// of the console: it writes a fresh version-1 grant (0600, never over an existing file),
// optionally its detached Ed25519 signature ("<out>.sig"), and prints the digest on request.
// `gc-issue-grant keygen --out-private P --out-public Q` writes a fresh Ed25519 key pair.
// Run `gc-issue-grant --help` for the options; tools/README.md describes them.
//
// Thread: the calling thread; run() blocks (file I/O only).
#pragma once

#include <QIODevice>
#include <QStringList>
#include <QTextStream>

namespace gc::tools {

class IssueGrantCommand {
public:
  static constexpr int kExitOk = 0;
  static constexpr int kExitFailed = 1; // the grant could not be composed, signed or written
  static constexpr int kExitUsage = 2;  // bad or missing options

  // `arguments` starts with the program name, like QCoreApplication::arguments().
  // `standardInput` is read for "--cert-from-guest-ready-line -". Messages go to `err`; `out`
  // receives only the digest (--print-digest) or the help text.
  static int run(const QStringList& arguments, QIODevice& standardInput, QTextStream& out, QTextStream& err);
};

} // namespace gc::tools
