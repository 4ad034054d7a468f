// guest-console open --grant FILE: the console. Driven by JSON lines on stdin/stdout
// (DESIGN.md §2); diagnostics on stderr.
#include "app/AppPaths.h"
#include "app/Commands.h"
#include "console/Console.h"
#include "session/ControlChannel.h"
#include "session/TtyCredentialPrompt.h"
#include "vm/LibvirtConnection.h"
#include "vm/LibvirtEventLoop.h"

#include <QCoreApplication>

#include <algorithm>
#include <cstdio>
#include <optional>

namespace gc {

int runOpen(const QStringList& arguments) {
  QCommandLineParser parser;
  prepareParser(parser, QStringLiteral("Open the one console for a grant."));
  parser.addOptions({
      {QStringLiteral("grant"), QStringLiteral("The grant file."), QStringLiteral("file")},
      {QStringLiteral("allow-origin"),
       QStringLiteral(
           "An exact web origin allowed for the panel besides vscode-webview:// (e.g. code-server's)."),
       QStringLiteral("origin")},
      {QStringLiteral("credentials"),
       QStringLiteral(
           "Where credentials come from: 'stdin' (a JSON line from the parent; default) or 'tty' (asked "
           "on the terminal, echo off)."),
       QStringLiteral("source"), QStringLiteral("stdin")},
      {QStringLiteral("auth-attempts"), QStringLiteral("Credential attempts before closing (default 3)."),
       QStringLiteral("n"), QStringLiteral("3")},
      {QStringLiteral("guest-settle-ms"),
       QStringLiteral("After the lock, how long the guest's screen must show no changed pixel before Capture "
                      "Desktop starts (default 200; raise it for slow, e.g. emulated, guests)."),
       QStringLiteral("ms"), QStringLiteral("200")},
      {QStringLiteral("guest-sync-timeout-ms"),
       QStringLiteral("After the lock, how long the guest has to confirm it processed the drained input "
                      "(default 5000); no confirmation closes the console."),
       QStringLiteral("ms"), QStringLiteral("5000")},
      {QStringLiteral("probe-timeout-ms"),
       QStringLiteral("How long the certificate probe may take (default 5000)."), QStringLiteral("ms"),
       QStringLiteral("5000")},
  });
  parser.process(arguments);
  ControlChannel control(0, 1);
  auto refuse = [&control](Refusal code, const QString& message) {
    control.sendError(code, message);
    return exitStatus(exitCodeFor(code));
  };
  const QString credentialSource = parser.value(QStringLiteral("credentials"));
  if (credentialSource != QLatin1String("stdin") && credentialSource != QLatin1String("tty"))
    return refuse(Refusal::Internal, QStringLiteral("--credentials must be stdin or tty"));
  if (!parser.isSet(QStringLiteral("grant")))
    return refuse(Refusal::Internal, QStringLiteral("--grant FILE is required"));
  const Outcome<AppPaths> paths = resolvePaths(parser);
  if (!paths.ok())
    return refuse(paths.code(), paths.failure().message);
  const Outcome<GrantPolicy> policy = resolvePolicy(parser);
  if (!policy.ok())
    return refuse(policy.code(), policy.failure().message);
  if (!control.start())
    return refuse(Refusal::PrivacyViolation, QStringLiteral("cannot lock memory for credentials"));

  ConsoleOptions options;
  options.grantPath = parser.value(QStringLiteral("grant"));
  options.policy = policy.value();
  options.stateDir = paths->stateDir;
  options.ledgerDir = paths->ledgerDir;
  if (options.policy.allowUnsigned)
    std::fputs("guest-console: WARNING: --allow-unsigned-grants: unsigned grants are accepted "
               "(development only; anyone who can hand you a grant file controls this console)\n",
               stderr);
  options.runtimeDir = paths->runtimeDir;
  options.extraOrigins = parser.values(QStringLiteral("allow-origin"));
  options.maxAuthAttempts = std::clamp(parser.value(QStringLiteral("auth-attempts")).toInt(), 1, 10);
  // Millisecond options: an integer in range, or the open is refused (never silently clamped).
  const auto millis = [&parser](const char* name, int min, int max) -> std::optional<int> {
    bool numeric = false;
    const int value = parser.value(QLatin1String(name)).toInt(&numeric);
    if (!numeric || value < min || value > max)
      return std::nullopt;
    return value;
  };
  const auto settle = millis("guest-settle-ms", 0, 10000);
  const auto sync = millis("guest-sync-timeout-ms", 100, 60000);
  const auto probe = millis("probe-timeout-ms", 500, 60000);
  if (!settle || !sync || !probe)
    return refuse(Refusal::Internal,
                  QStringLiteral("--guest-settle-ms must be 0..10000, --guest-sync-timeout-ms 100..60000 and "
                                 "--probe-timeout-ms 500..60000"));
  options.guestSettleQuiet = std::chrono::milliseconds(*settle);
  options.guestSyncDeadline = std::chrono::milliseconds(*sync);
  options.probeTimeoutMs = *probe;

  LibvirtConnection::initializeLibrary();
  LibvirtEventLoop events;
  if (Status started = events.start(); !started.ok())
    return refuse(started.code(), started.failure().message);

  int exitCode = exitStatus(ExitCode::Ok);
  {
    Console console(options, &control);
    QObject::connect(&console, &Console::finished, qApp, [](int code) { QCoreApplication::exit(code); });
    if (credentialSource == QLatin1String("tty")) {
      // Asked from the event loop, after "credentials_required" went out.
      QObject::connect(
          &console, &Console::credentialsRequired, &console,
          [&console](const QString& user, const QString& domain, int attempt) {
            Outcome<Credentials> creds = TtyCredentialPrompt::ask(user, domain, attempt);
            if (!creds.ok()) {
              console.close(Refusal::AuthCancelled, creds.failure().message);
              return;
            }
            console.provideCredentials(creds.value());
          },
          Qt::QueuedConnection);
    }
    if (Status opened = console.open(); !opened.ok())
      exitCode = exitStatus(exitCodeFor(opened.code()));
    else
      exitCode = QCoreApplication::exec();
  }
  events.stop();
  return exitCode;
}

} // namespace gc
