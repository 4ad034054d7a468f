// guest-console evidence verify FILE [--head HEX]: checks an evidence log's hash chain and,
// with --head, that it ends exactly at the head the run handed out (the `closed` line's
// evidence_head). Without --head only internal consistency is checked, and it says so.
#include "app/Commands.h"
#include "audit/EvidenceLog.h"
#include "common/Refusal.h"

#include <QCommandLineParser>
#include <QRegularExpression>

#include <cstdio>

namespace gc {

int runEvidence(const QStringList& arguments) {
  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Evidence logs."));
  parser.addHelpOption();
  parser.addPositionalArgument(QStringLiteral("verify"),
                               QStringLiteral("verify FILE: check the hash chain."));
  parser.addOption(
      {QStringLiteral("head"),
       QStringLiteral("The expected head (64 hex; the closed line's evidence_head): the log must "
                      "end exactly there."),
       QStringLiteral("hex")});
  parser.process(arguments);
  const QStringList args = parser.positionalArguments();
  if (args.size() != 3 || args.at(1) != QLatin1String("verify")) {
    std::fputs("usage: guest-console evidence verify FILE [--head HEX]\n", stderr);
    return exitStatus(ExitCode::Internal);
  }
  const bool haveHead = parser.isSet(QStringLiteral("head"));
  const QByteArray expected = parser.value(QStringLiteral("head")).trimmed().toLower().toLatin1();
  static const QRegularExpression hex64(QStringLiteral("\\A[0-9a-f]{64}\\z"));
  if (haveHead && !hex64.match(QString::fromLatin1(expected)).hasMatch()) {
    std::fputs("guest-console evidence verify: --head must be 64 hex digits\n", stderr);
    return exitStatus(ExitCode::Internal);
  }
  const auto v = EvidenceLog::verifyFile(args.at(2));
  if (!v.ok) {
    std::fprintf(stdout, "evidence: BROKEN: %s\n", qPrintable(v.error));
    return exitStatus(ExitCode::Refused);
  }
  if (haveHead && v.head != expected) {
    // Where the expected head sits tells a log that goes on past it (e.g. the receipt's
    // head) from one that was cut or re-chained (the head is nowhere in it).
    const qsizetype at = v.hashes.indexOf(expected);
    const QString where = at >= 0 ? QStringLiteral("the expected head is line %1; the log goes on to line %2")
                                        .arg(at + 1)
                                        .arg(v.lines)
                                  : QStringLiteral("the expected head is not in the log (cut or re-chained)");
    std::fprintf(stdout, "evidence: %s: %llu lines end at head %s; %s\n",
                 qPrintable(refusalName(Refusal::EvidenceHeadMismatch)),
                 static_cast<unsigned long long>(v.lines), v.head.constData(), qPrintable(where));
    return exitStatus(ExitCode::Refused);
  }
  std::fprintf(stdout, "evidence: ok, %llu lines, head %s\n", static_cast<unsigned long long>(v.lines),
               v.head.constData());
  if (haveHead)
    std::fputs("  ends at the expected head: order and integrity of every line are proven relative to it\n",
               stdout);
  else
    std::fputs("  internal consistency only: a cut or re-chained log passes this; give --head HEX (the "
               "closed line's evidence_head) to prove the log ends there\n",
               stdout);
  return exitStatus(ExitCode::Ok);
}

} // namespace gc
