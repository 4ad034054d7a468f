// guest-console evidence verify FILE: checks an evidence log's hash chain.
#include "app/Commands.h"
#include "audit/EvidenceLog.h"

#include <QCommandLineParser>

#include <cstdio>

namespace gc {

int runEvidence(const QStringList& arguments) {
  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Evidence logs."));
  parser.addHelpOption();
  parser.addPositionalArgument(QStringLiteral("verify"),
                               QStringLiteral("verify FILE: check the hash chain."));
  parser.process(arguments);
  const QStringList args = parser.positionalArguments();
  if (args.size() != 3 || args.at(1) != QLatin1String("verify")) {
    std::fputs("usage: guest-console evidence verify FILE\n", stderr);
    return kExitInternal;
  }
  const auto v = EvidenceLog::verifyFile(args.at(2));
  if (!v.ok) {
    std::fprintf(stdout, "evidence: BROKEN: %s\n", qPrintable(v.error));
    return kExitRefused;
  }
  std::fprintf(stdout, "evidence: ok, %llu lines, head %s\n", static_cast<unsigned long long>(v.lines),
               v.head.constData());
  return kExitOk;
}

} // namespace gc
