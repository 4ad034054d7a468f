// guest-console check --grant FILE [--json] [--probe-cert]: validates the grant and resolves
// the binding without consuming anything. Every check, bound or refused, leaves one evidence
// log of its own (<state-dir>/evidence/check-<time>-<pid>.jsonl), as a refused open does.
#include "app/AppPaths.h"
#include "app/Commands.h"
#include "audit/EvidenceLog.h"
#include "console/Console.h"
#include "grant/GrantLedger.h"
#include "grant/GrantLoader.h"
#include "readerhost/RdpReader.h"
#include "vm/DomainBinder.h"
#include "vm/LibvirtConnection.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>

#include <cstdio>

namespace gc {
namespace {

struct CheckResult {
  QJsonObject fields;
  std::optional<Failure> failure;
};

CheckResult check(const QCommandLineParser& parser, const Outcome<AppPaths>& paths) {
  CheckResult result;
  if (!paths.ok())
    return {{}, paths.failure()};
  const Outcome<GrantPolicy> policy = resolvePolicy(parser);
  if (!policy.ok())
    return {{}, policy.failure()};
  const Outcome<Grant> loaded = GrantLoader::loadFile(parser.value(QStringLiteral("grant")), policy.value(),
                                                      QDateTime::currentDateTimeUtc());
  if (!loaded.ok())
    return {{}, loaded.failure()};
  const Grant& grant = loaded.value();
  result.fields = QJsonObject{{QStringLiteral("run"), grant.runId},
                              {QStringLiteral("task"), grant.taskId},
                              {QStringLiteral("grant_digest"), QString::fromLatin1(grant.digestHex)}};
  result.fields.insert(QStringLiteral("signed"), grant.signed_);
  result.fields.insert(QStringLiteral("unsigned_grants_allowed"), policy->allowUnsigned);
  if (GrantLedger(paths->ledgerDir).isConsumed(grant.grantId))
    return {result.fields,
            Failure{Refusal::GrantReused, QStringLiteral("grant %1 was already used").arg(grant.grantId)}};

  const Outcome<VmBinding> binding = DomainBinder::bind(Console::vmTargetOf(grant));
  if (!binding.ok())
    return {result.fields, binding.failure()};
  result.fields.insert(QStringLiteral("vm"), QJsonObject{{QStringLiteral("name"), binding->name},
                                                         {QStringLiteral("uuid"), binding->uuid}});
  result.fields.insert(QStringLiteral("port"), binding->hostPort);
  result.fields.insert(QStringLiteral("rule"), binding->ruleSource);
  result.fields.insert(QStringLiteral("cert_pin"), !grant.rdp.unpinned);

  if (parser.isSet(QStringLiteral("probe-cert"))) {
    if (grant.rdp.unpinned)
      return {result.fields,
              Failure{Refusal::GuestCertMismatch, QStringLiteral("the grant has no pin to probe")}};
    // The guest's TLS handshake is parsed by the RDP reader, like every byte of the guest's.
    RdpReader reader;
    const QSize desktop(grant.rdp.desktop.width, grant.rdp.desktop.height);
    if (Status spawned = reader.spawn(desktop); !spawned.ok())
      return {result.fields, spawned.failure()};
    const Outcome<QByteArray> probed =
        reader.probe(grant.rdp.host, grant.rdp.port, grant.rdp.certSha256, 5000);
    reader.abort();
    if (!probed.ok())
      return {result.fields, probed.failure()};
    result.fields.insert(QStringLiteral("cert_verified"), true);
  }
  return result;
}

// One log per check: "checked" with what was bound, or "refused" with the code and message (the
// fields a refused open records). Names and hashes only: nothing of the grant file is copied in.
Status recordEvidence(const AppPaths& paths, const CheckResult& result) {
  EvidenceLog log;
  const QString name =
      QStringLiteral("check-%1-%2")
          .arg(QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMddThhmmsszzz")))
          .arg(QCoreApplication::applicationPid());
  if (Status opened = log.open(QDir(paths.stateDir).filePath(QStringLiteral("evidence")), name); !opened.ok())
    return opened;
  QJsonObject fields{{QStringLiteral("command"), QStringLiteral("check")}};
  if (result.failure) {
    fields.insert(QStringLiteral("code"), refusalName(result.failure->code));
    fields.insert(QStringLiteral("message"), result.failure->message);
    if (result.fields.contains(QStringLiteral("grant_digest")))
      fields.insert(QStringLiteral("grant_digest"), result.fields.value(QStringLiteral("grant_digest")));
  } else {
    for (auto it = result.fields.begin(); it != result.fields.end(); ++it)
      fields.insert(it.key(), it.value());
    fields.insert(QStringLiteral("cert_verified"),
                  result.fields.value(QStringLiteral("cert_verified")).toBool());
  }
  const Status appended =
      log.append(result.failure ? QStringLiteral("refused") : QStringLiteral("checked"), fields);
  log.close();
  return appended;
}

} // namespace

int runCheck(const QStringList& arguments) {
  QCommandLineParser parser;
  prepareParser(parser, QStringLiteral("Validate a grant and resolve its VM binding; consumes nothing."));
  parser.addOptions(
      {{QStringLiteral("grant"), QStringLiteral("The grant file."), QStringLiteral("file")},
       {QStringLiteral("json"), QStringLiteral("Print one JSON object.")},
       {QStringLiteral("probe-cert"), QStringLiteral("Also verify the guest's certificate pin (TLS only, "
                                                     "no credentials).")}});
  parser.process(arguments);
  if (!parser.isSet(QStringLiteral("grant"))) {
    std::fputs("guest-console check: --grant FILE is required\n", stderr);
    return exitStatus(ExitCode::Internal);
  }
  if (parser.isSet(QStringLiteral("allow-unsigned-grants")))
    std::fputs("guest-console: WARNING: --allow-unsigned-grants: unsigned grants are accepted "
               "(development only)\n",
               stderr);
  LibvirtConnection::initializeLibrary();
  const Outcome<AppPaths> paths = resolvePaths(parser);
  CheckResult result = check(parser, paths);
  // Without paths there is nowhere to write (the refusal says why); a check whose evidence
  // cannot be written is not reported bound.
  if (paths.ok()) {
    if (const Status recorded = recordEvidence(paths.value(), result); !recorded.ok()) {
      std::fprintf(stderr, "guest-console check: evidence not written: %s\n",
                   qPrintable(recorded.failure().toString()));
      if (!result.failure)
        result.failure = recorded.failure();
    }
  }
  const bool json = parser.isSet(QStringLiteral("json"));
  QJsonObject out = result.fields;
  out.insert(QStringLiteral("ok"), !result.failure.has_value());
  if (result.failure) {
    out.insert(QStringLiteral("code"), refusalName(result.failure->code));
    out.insert(QStringLiteral("message"), result.failure->message);
  } else {
    out.insert(QStringLiteral("code"), QJsonValue::Null);
    out.insert(QStringLiteral("message"), QStringLiteral("bound"));
  }
  if (json) {
    std::fputs(QJsonDocument(out).toJson(QJsonDocument::Compact).append('\n').constData(), stdout);
  } else if (result.failure) {
    std::fprintf(stdout, "refused: %s\n  %s\n", qPrintable(refusalName(result.failure->code)),
                 qPrintable(result.failure->message));
  } else {
    const QJsonObject vm = out.value(QStringLiteral("vm")).toObject();
    std::fprintf(stdout, "bound: run %s, task %s\n  VM %s (%s)\n  RDP 127.0.0.1:%d via %s, certificate %s\n",
                 qPrintable(out.value(QStringLiteral("run")).toString()),
                 qPrintable(out.value(QStringLiteral("task")).toString()),
                 qPrintable(vm.value(QStringLiteral("name")).toString()),
                 qPrintable(vm.value(QStringLiteral("uuid")).toString()),
                 out.value(QStringLiteral("port")).toInt(),
                 qPrintable(out.value(QStringLiteral("rule")).toString()),
                 out.value(QStringLiteral("cert_verified")).toBool() ? "verified"
                 : out.value(QStringLiteral("cert_pin")).toBool()    ? "pinned (not probed)"
                                                                     : "NOT PINNED");
  }
  std::fflush(stdout);
  if (!result.failure)
    return exitStatus(ExitCode::Ok);
  return exitStatus(exitCodeFor(result.failure->code));
}

} // namespace gc
