// gc-issue-grant: writes a fresh version-1 grant for tests and demos (see IssueGrantCommand.h).
#include "tools/issuegrant/IssueGrantCommand.h"

#include <QCoreApplication>
#include <QFile>

#include <cstdio>

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  QCoreApplication::setApplicationName(QStringLiteral("gc-issue-grant"));
  QFile in;
  if (!in.open(stdin, QIODevice::ReadOnly))
    return gc::tools::IssueGrantCommand::kExitFailed;
  QTextStream out(stdout);
  QTextStream err(stderr);
  return gc::tools::IssueGrantCommand::run(QCoreApplication::arguments(), in, out, err);
}
