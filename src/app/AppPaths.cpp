#include "app/AppPaths.h"

#include "grant/GrantLedger.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>

#include <cerrno>
#include <sys/stat.h>
#include <unistd.h>

namespace gc {

void prepareParser(QCommandLineParser& parser, const QString& description) {
  parser.setApplicationDescription(description);
  parser.addHelpOption();
  addGlobalOptions(parser);
}

void addGlobalOptions(QCommandLineParser& parser) {
  parser.addOptions({
      {QStringLiteral("state-dir"),
       QStringLiteral("Where evidence goes (the consumed-grants ledger is always the user's own, "
                      "~/.local/state/guest-console)."),
       QStringLiteral("dir")},
      {QStringLiteral("runtime-dir"), QStringLiteral("Root of the private run directories."),
       QStringLiteral("dir")},
      {QStringLiteral("issuer-key"),
       QStringLiteral("Ed25519 public key (PEM) grants must be signed by (default: %1).")
           .arg(QLatin1String(GrantPolicy::kMachineIssuerKeyPath)),
       QStringLiteral("file")},
      {QStringLiteral("allow-unsigned-grants"),
       QStringLiteral("DEVELOPMENT ONLY: accept unsigned grants (the panel, the control channel and the "
                      "evidence say so).")},
      {QStringLiteral("max-grant-lifetime"), QStringLiteral("Longest accepted grant lifetime (e.g. 8h)."),
       QStringLiteral("duration")},
      {QStringLiteral("grant-freshness"), QStringLiteral("Oldest accepted issued_at (e.g. 15m)."),
       QStringLiteral("duration")},
  });
#ifdef GC_TEST_HOOKS
  parser.addOption({QStringLiteral("test-ledger-dir"),
                    QStringLiteral("TEST BUILDS ONLY: keep the consumed-grants ledger and run locks here."),
                    QStringLiteral("dir")});
#endif
}

std::optional<std::chrono::seconds> parseDuration(const QString& text) {
  static const QRegularExpression shape(QStringLiteral("^([0-9]{1,7})([smh]?)$"));
  const auto m = shape.match(text);
  if (!m.hasMatch())
    return std::nullopt;
  const qint64 n = m.captured(1).toLongLong();
  const QString unit = m.captured(2);
  const qint64 factor = unit == QLatin1String("h") ? 3600 : unit == QLatin1String("m") ? 60 : 1;
  return std::chrono::seconds(n * factor);
}

Outcome<AppPaths> resolvePaths(const QCommandLineParser& parser) {
  AppPaths paths;
  const QString home = QDir::homePath();
  const QByteArray xdgState = qgetenv("XDG_STATE_HOME");
  paths.stateDir = parser.isSet(QStringLiteral("state-dir")) ? parser.value(QStringLiteral("state-dir"))
                   : !xdgState.isEmpty() ? QFile::decodeName(xdgState) + QStringLiteral("/guest-console")
                                         : home + QStringLiteral("/.local/state/guest-console");
  const QByteArray xdgRuntime = qgetenv("XDG_RUNTIME_DIR");
  if (parser.isSet(QStringLiteral("runtime-dir"))) {
    paths.runtimeDir = parser.value(QStringLiteral("runtime-dir"));
  } else if (!xdgRuntime.isEmpty()) {
    paths.runtimeDir = QFile::decodeName(xdgRuntime);
  } else {
    // No XDG runtime dir (e.g. a root shell without a session): a private one in /tmp.
    paths.runtimeDir = QStringLiteral("/tmp/guest-console-%1").arg(::geteuid());
    if (::mkdir(QFile::encodeName(paths.runtimeDir).constData(), 0700) != 0 && errno != EEXIST)
      return Failure{Refusal::PrivacyViolation, QStringLiteral("cannot create %1").arg(paths.runtimeDir)};
  }
  // Not from argv or the environment: single use must hold whatever they say.
  paths.ledgerDir = GrantLedger::perUserDir();
#ifdef GC_TEST_HOOKS
  if (parser.isSet(QStringLiteral("test-ledger-dir")))
    paths.ledgerDir = parser.value(QStringLiteral("test-ledger-dir"));
#endif
  // Empty (no passwd entry) stays empty: GrantLedger and RunLock refuse it with GRANT_LEDGER,
  // and mcp/sweep, which need no ledger, still work.
  for (QString* dir : {&paths.stateDir, &paths.runtimeDir, &paths.ledgerDir}) {
    if (dir->isEmpty())
      continue;
    if (!QDir::isAbsolutePath(*dir))
      *dir = QDir::current().absoluteFilePath(*dir);
    *dir = QDir::cleanPath(*dir);
  }
  struct stat st {};
  if (::lstat(QFile::encodeName(paths.runtimeDir).constData(), &st) != 0 || !S_ISDIR(st.st_mode) ||
      st.st_uid != ::geteuid() || (st.st_mode & 0077) != 0)
    return Failure{
        Refusal::PrivacyViolation,
        QStringLiteral("runtime dir %1 must be a directory of ours with mode 0700").arg(paths.runtimeDir)};
  return paths;
}

Outcome<GrantPolicy> resolvePolicy(const QCommandLineParser& parser) {
  GrantPolicy policy;
  for (const auto& [name, field] : {std::pair{QStringLiteral("max-grant-lifetime"), &policy.maxLifetime},
                                    std::pair{QStringLiteral("grant-freshness"), &policy.freshness}}) {
    if (!parser.isSet(name))
      continue;
    const auto value = parseDuration(parser.value(name));
    if (!value || value->count() == 0)
      return Failure{Refusal::Internal,
                     QStringLiteral("--%1: expected a duration like 90s, 15m or 8h").arg(name)};
    *field = *value;
  }
  policy.allowUnsigned = parser.isSet(QStringLiteral("allow-unsigned-grants"));
  // --issuer-key, else the machine's key; only a missing machine file means "no key".
  const bool explicitKey = parser.isSet(QStringLiteral("issuer-key"));
  const QString keyPath = explicitKey ? parser.value(QStringLiteral("issuer-key"))
                                      : QString::fromLatin1(GrantPolicy::kMachineIssuerKeyPath);
  struct stat st {};
  if (!explicitKey && ::stat(QFile::encodeName(keyPath).constData(), &st) != 0 && errno == ENOENT)
    return policy;
  QFile key(keyPath);
  if (!key.open(QIODevice::ReadOnly) || key.size() > 16 * 1024)
    return Failure{Refusal::GrantSignature, QStringLiteral("cannot read the issuer key %1").arg(keyPath)};
  policy.issuerPublicKeyPem = key.readAll();
  if (policy.issuerPublicKeyPem.isEmpty())
    return Failure{Refusal::GrantSignature, QStringLiteral("the issuer key file %1 is empty").arg(keyPath)};
  return policy;
}

} // namespace gc
