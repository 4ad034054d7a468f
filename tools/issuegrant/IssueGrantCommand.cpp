#include "tools/issuegrant/IssueGrantCommand.h"

#include "tools/issuegrant/ExclusiveFile.h"
#include "tools/issuegrant/GrantIssuer.h"
#include "tools/issuegrant/GrantSigner.h"
#include "tools/issuegrant/GuestReadyLine.h"

#include <QCommandLineParser>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QRegularExpression>

#include <optional>
#include <variant>

namespace gc::tools {

namespace {

constexpr qsizetype kMaxInputFileBytes = 64 * 1024;
constexpr qint64 kMaxLifetimeSeconds = 366LL * 24 * 3600; // the loader's own limit is lower

struct Plan {
  GrantDraft draft;
  QString outPath;
  QString signKeyPath;
  bool printDigest = false;
};

struct UsageError {
  QString message;
};

QByteArray readSmall(QIODevice& device) {
  return device.read(kMaxInputFileBytes + 1);
}

std::optional<qint64> integer(const QString& text, qint64 min, qint64 max) {
  bool ok = false;
  const qint64 value = text.toLongLong(&ok);
  if (!ok || value < min || value > max)
    return std::nullopt;
  return value;
}

// "ID:LABEL:ACTIONJSON". The action is a flat JSON object, so it starts at the last ":{";
// the id ends at the first ':' (ids containing ':' cannot be given on the command line).
std::optional<GrantDraft::Candidate> candidate(const QString& spec) {
  const qsizetype idEnd = spec.indexOf(QLatin1Char(':'));
  const qsizetype actionStart = spec.lastIndexOf(QStringLiteral(":{"));
  if (idEnd <= 0 || actionStart < idEnd + 1)
    return std::nullopt;
  QJsonParseError error{};
  const QJsonDocument action = QJsonDocument::fromJson(spec.mid(actionStart + 1).toUtf8(), &error);
  if (error.error != QJsonParseError::NoError || !action.isObject())
    return std::nullopt;
  const qsizetype labelStart = idEnd + 1;
  return GrantDraft::Candidate{spec.left(idEnd), spec.mid(labelStart, actionStart - labelStart),
                               action.object()};
}

std::variant<Plan, UsageError> plan(QCommandLineParser& parser, QIODevice& standardInput) {
  const auto usage = [](const QString& message) { return UsageError{message}; };
  Plan p;
  GrantDraft& d = p.draft;

  p.outPath = parser.value(QStringLiteral("out"));
  if (p.outPath.isEmpty())
    return usage(QStringLiteral("--out FILE is required"));
  for (const char* required : {"vm-uuid", "vm-name", "port"})
    if (!parser.isSet(QString::fromLatin1(required)))
      return usage(QStringLiteral("--%1 is required").arg(QString::fromLatin1(required)));

  d.grantId = GrantIssuer::newUuid();
  d.runId = parser.isSet(QStringLiteral("run")) ? parser.value(QStringLiteral("run"))
                                                : GrantIssuer::newId(QStringLiteral("run"));
  d.taskId = parser.isSet(QStringLiteral("task")) ? parser.value(QStringLiteral("task"))
                                                  : GrantIssuer::newId(QStringLiteral("task"));
  d.vmUuid = parser.value(QStringLiteral("vm-uuid")).toLower();
  d.vmName = parser.value(QStringLiteral("vm-name"));
  d.libvirtUri = parser.value(QStringLiteral("libvirt-uri"));

  const auto port = integer(parser.value(QStringLiteral("port")), 1, 65535);
  if (!port)
    return usage(QStringLiteral("--port must be 1..65535"));
  d.port = quint16(*port);

  const auto lifetime = integer(parser.value(QStringLiteral("lifetime")), 1, kMaxLifetimeSeconds);
  if (!lifetime)
    return usage(QStringLiteral("--lifetime must be 1..%1 seconds").arg(kMaxLifetimeSeconds));
  const auto offset =
      integer(parser.value(QStringLiteral("issued-offset")), -kMaxLifetimeSeconds, kMaxLifetimeSeconds);
  if (!offset)
    return usage(
        QStringLiteral("--issued-offset must be a number of seconds within ±%1").arg(kMaxLifetimeSeconds));
  QDateTime now = QDateTime::currentDateTimeUtc();
  now.setTime(QTime(now.time().hour(), now.time().minute(), now.time().second())); // whole seconds
  d.issuedAt = now.addSecs(*offset);
  d.expiresAt = d.issuedAt.addSecs(*lifetime);

  // The pin: exactly one of the three ways, so an unpinned grant is always a visible choice.
  const int pinOptions = int(parser.isSet(QStringLiteral("cert-sha256"))) +
                         int(parser.isSet(QStringLiteral("cert-from-guest-ready-line"))) +
                         int(parser.isSet(QStringLiteral("insecure-no-cert-pin")));
  if (pinOptions != 1)
    return usage(QStringLiteral(
        "give exactly one of --cert-sha256, --cert-from-guest-ready-line, --insecure-no-cert-pin"));
  if (parser.isSet(QStringLiteral("cert-sha256"))) {
    d.certSha256 = GrantIssuer::normalizeCertSha256(parser.value(QStringLiteral("cert-sha256")));
    if (d.certSha256.isEmpty())
      return usage(QStringLiteral("--cert-sha256 must be 64 hex digits (colons allowed)"));
  } else if (parser.isSet(QStringLiteral("cert-from-guest-ready-line"))) {
    const QString source = parser.value(QStringLiteral("cert-from-guest-ready-line"));
    QByteArray text;
    if (source == QStringLiteral("-")) {
      text = readSmall(standardInput);
    } else {
      QFile file(source);
      if (!file.open(QIODevice::ReadOnly))
        return usage(QStringLiteral("cannot read %1: %2").arg(source, file.errorString()));
      text = readSmall(file);
    }
    const auto cert = GuestReadyLine::certSha256(text.left(kMaxInputFileBytes));
    if (!cert)
      return usage(QStringLiteral("--cert-from-guest-ready-line: ") + cert.failure().message);
    d.certSha256 = cert.value();
  } else {
    d.insecureNoCertPin = true;
  }

  // The desktop and the layout; the loader (GrantIssuer::render) judges the values.
  if (parser.isSet(QStringLiteral("desktop"))) {
    static const QRegularExpression size(QStringLiteral("\\A(\\d{1,5})x(\\d{1,5})\\z"));
    const QRegularExpressionMatch m = size.match(parser.value(QStringLiteral("desktop")));
    if (!m.hasMatch())
      return usage(QStringLiteral("--desktop expects WIDTHxHEIGHT, e.g. 1920x1080"));
    d.desktopWidth = m.captured(1).toInt();
    d.desktopHeight = m.captured(2).toInt();
  }
  if (parser.isSet(QStringLiteral("desktop-size-from"))) {
    if (!parser.isSet(QStringLiteral("desktop")))
      return usage(QStringLiteral("--desktop-size-from needs --desktop (the size the console requests)"));
    d.desktopSizeFrom = parser.value(QStringLiteral("desktop-size-from"));
  }
  // capture: one of a fixed size or a long-edge bound; the loader judges them.
  if (parser.isSet(QStringLiteral("capture-size")) && parser.isSet(QStringLiteral("capture-long-edge")))
    return usage(QStringLiteral("--capture-size and --capture-long-edge exclude each other"));
  if (parser.isSet(QStringLiteral("capture-size"))) {
    static const QRegularExpression size(QStringLiteral("\\A(\\d{1,5})x(\\d{1,5})\\z"));
    const QRegularExpressionMatch m = size.match(parser.value(QStringLiteral("capture-size")));
    if (!m.hasMatch())
      return usage(QStringLiteral("--capture-size expects WIDTHxHEIGHT, e.g. 1280x800"));
    d.captureWidth = m.captured(1).toInt();
    d.captureHeight = m.captured(2).toInt();
  }
  if (parser.isSet(QStringLiteral("capture-long-edge"))) {
    bool ok = false;
    d.captureLongEdge = parser.value(QStringLiteral("capture-long-edge")).toInt(&ok);
    if (!ok || d.captureLongEdge <= 0)
      return usage(QStringLiteral("--capture-long-edge expects a positive number of pixels"));
  }
  if (parser.isSet(QStringLiteral("lock-confirmation")))
    d.lockConfirmation = parser.value(QStringLiteral("lock-confirmation"));
  if (parser.isSet(QStringLiteral("keyboard-layout")))
    d.keyboardLayout = parser.value(QStringLiteral("keyboard-layout"));

  d.title = parser.isSet(QStringLiteral("title")) ? parser.value(QStringLiteral("title"))
                                                  : QStringLiteral("Guest Console: ") + d.vmName;
  for (const QString& field : parser.values(QStringLiteral("panel"))) {
    const qsizetype eq = field.indexOf(QLatin1Char('='));
    if (eq <= 0)
      return usage(QStringLiteral("--panel expects KEY=VALUE"));
    const QString key = field.left(eq);
    if (key == QStringLiteral("title"))
      return usage(QStringLiteral("--panel title=… : use --title"));
    for (const auto& existing : d.panelFields)
      if (existing.first == key)
        return usage(QStringLiteral("--panel %1 given twice").arg(key));
    d.panelFields.append({key, field.mid(eq + 1)});
  }
  d.mcpServer = parser.value(QStringLiteral("mcp-server"));
  d.mcpTool = parser.value(QStringLiteral("mcp-tool"));
  for (const QString& spec : parser.values(QStringLiteral("candidate"))) {
    const auto c = candidate(spec);
    if (!c)
      return usage(QStringLiteral("--candidate expects ID:LABEL:{action JSON}"));
    d.candidates.append(*c);
  }

  p.signKeyPath = parser.value(QStringLiteral("sign-key"));
  p.printDigest = parser.isSet(QStringLiteral("print-digest"));
  return p;
}

void addOptions(QCommandLineParser& parser) {
  parser.setApplicationDescription(
      QStringLiteral("Writes a fresh version-1 Guest Console grant (docs/grant.md) for tests and demos.\n"
                     "Developer tool: the run orchestrator is the real issuer."));
  const auto opt = [&](const char* name, const char* help, const char* valueName = nullptr,
                       const char* defaultValue = nullptr) {
    QCommandLineOption option(QString::fromLatin1(name), QString::fromUtf8(help));
    if (valueName)
      option.setValueName(QString::fromLatin1(valueName));
    if (defaultValue)
      option.setDefaultValue(QString::fromLatin1(defaultValue));
    parser.addOption(option);
  };
  opt("help", "Show this help.");
  opt("out", "Write the grant here (created 0600; an existing file is never replaced).", "FILE");
  opt("run", "run_id (default: random run-XXXXXXXXXXXX).", "ID");
  opt("task", "task_id (default: random task-XXXXXXXXXXXX).", "ID");
  opt("vm-uuid", "The domain's UUID (required).", "UUID");
  opt("vm-name", "The domain's name (required).", "NAME");
  opt("libvirt-uri", "libvirt URI.", "URI", "qemu:///system");
  opt("port", "The per-run host port forwarded to guest port 3389 (required).", "PORT");
  opt("cert-sha256", "The guest's RDP certificate SHA-256 (64 hex digits, colons allowed).", "HEX");
  opt("cert-from-guest-ready-line", "Take cert_sha256 from gc-test-guest's ready line in FILE (- = stdin).",
      "FILE");
  opt("insecure-no-cert-pin", "Do not pin the guest's certificate (the panel warns).");
  opt("lifetime", "expires_at - issued_at, in seconds.", "SECONDS", "900");
  opt("issued-offset", "issued_at = now + SECONDS (negative: in the past). For tests.", "SECONDS", "0");
  opt("desktop", "rdp.desktop: the size the console requests and insists on (default 1920x1080).",
      "WIDTHxHEIGHT");
  opt("desktop-size-from", "rdp.desktop.size_from: grant (default) or server (the server's size is taken).",
      "grant|server");
  opt("capture-size",
      "capture.size: the image the model sees and the coordinates it acts in, e.g. 1024x768 (XGA) or "
      "1280x800 (WXGA); at most the desktop.",
      "WIDTHxHEIGHT");
  opt("capture-long-edge", "capture.long_edge: the capture scaled down, aspect kept, to this longer edge.",
      "PIXELS");
  opt("keyboard-layout", "rdp.keyboard_layout, a Windows KLID (default 0x00000409, US English).",
      "0xXXXXXXXX");
  opt("lock-confirmation",
      "lock.confirmation: guest (default: the guest must answer the lock's refresh) or settle (a quiet "
      "screen is enough).",
      "guest|settle");
  opt("title", "panel.title (default: \"Guest Console: <vm-name>\").", "TEXT");
  opt("panel", "Another panel field (repeatable), e.g. username=alice.", "KEY=VALUE");
  opt("mcp-server", "mcp.server.", "NAME", "guest-console");
  opt("mcp-tool", "mcp.tool.", "NAME", "perform_action");
  opt("candidate", "An action candidate (repeatable), e.g. ok:Click OK:{\"type\":\"click\",\"x\":5,\"y\":9}.",
      "ID:LABEL:JSON");
  opt("sign-key", "Ed25519 private key (PEM, unencrypted); writes <out>.sig (base64 signature).", "PEM");
  opt("print-digest", "Print the grant's SHA-256 digest (hex) on stdout.");
}

// gc-issue-grant keygen --out-private P --out-public Q: a key pair for one run (both files
// created 0600, never over an existing one; keep P in a 0700 directory).
int keygen(const QStringList& arguments, QTextStream& out, QTextStream& err) {
  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Writes a fresh Ed25519 key pair for signing grants."));
  parser.addOptions(
      {{QStringLiteral("help"), QStringLiteral("Show this help.")},
       {QStringLiteral("out-private"), QStringLiteral("The private key (PEM) for --sign-key."),
        QStringLiteral("FILE")},
       {QStringLiteral("out-public"), QStringLiteral("The public key (PEM) for guest-console --issuer-key."),
        QStringLiteral("FILE")}});
  const auto fail = [&](int code, const QString& message) {
    err << "gc-issue-grant keygen: " << message << Qt::endl;
    return code;
  };
  QStringList args = arguments;
  args.removeAt(1); // "keygen"
  if (!parser.parse(args))
    return fail(IssueGrantCommand::kExitUsage, parser.errorText());
  if (parser.isSet(QStringLiteral("help"))) {
    out << parser.helpText();
    out.flush();
    return IssueGrantCommand::kExitOk;
  }
  const QString privatePath = parser.value(QStringLiteral("out-private"));
  const QString publicPath = parser.value(QStringLiteral("out-public"));
  if (privatePath.isEmpty() || publicPath.isEmpty() || !parser.positionalArguments().isEmpty())
    return fail(IssueGrantCommand::kExitUsage,
                QStringLiteral("--out-private FILE and --out-public FILE are required"));
  Outcome<GrantSigner::KeyPair> pair = GrantSigner::generate();
  if (!pair)
    return fail(IssueGrantCommand::kExitFailed, pair.failure().message);
  GrantSigner::KeyPair& keys = pair.value();
  const Status wrotePrivate = ExclusiveFile::write(privatePath, keys.privatePem);
  keys.privatePem.fill('\0');
  if (!wrotePrivate)
    return fail(IssueGrantCommand::kExitFailed, wrotePrivate.failure().message);
  if (const Status wrotePublic = ExclusiveFile::write(publicPath, keys.publicPem); !wrotePublic) {
    QFile::remove(privatePath);
    return fail(IssueGrantCommand::kExitFailed, wrotePublic.failure().message);
  }
  return IssueGrantCommand::kExitOk;
}

} // namespace

int IssueGrantCommand::run(const QStringList& arguments, QIODevice& standardInput, QTextStream& out,
                           QTextStream& err) {
  if (arguments.size() >= 2 && arguments.at(1) == QLatin1String("keygen"))
    return keygen(arguments, out, err);
  QCommandLineParser parser;
  addOptions(parser);
  const auto fail = [&](int code, const QString& message) {
    err << "gc-issue-grant: " << message << Qt::endl;
    return code;
  };
  if (!parser.parse(arguments))
    return fail(kExitUsage, parser.errorText());
  if (parser.isSet(QStringLiteral("help"))) {
    out << parser.helpText();
    out.flush();
    return kExitOk;
  }
  if (!parser.positionalArguments().isEmpty())
    return fail(kExitUsage,
                QStringLiteral("unexpected argument %1").arg(parser.positionalArguments().first()));

  auto planned = plan(parser, standardInput);
  if (const auto* error = std::get_if<UsageError>(&planned))
    return fail(kExitUsage, error->message);
  const Plan& p = std::get<Plan>(planned);

  const auto bytes = GrantIssuer::render(p.draft);
  if (!bytes)
    return fail(kExitFailed, QStringLiteral("not a valid grant: ") + bytes.failure().message);

  QByteArray sigFile;
  const QString sigPath = p.outPath + QStringLiteral(".sig");
  if (!p.signKeyPath.isEmpty()) {
    QFile keyFile(p.signKeyPath);
    if (!keyFile.open(QIODevice::ReadOnly))
      return fail(kExitFailed,
                  QStringLiteral("cannot read %1: %2").arg(p.signKeyPath, keyFile.errorString()));
    QByteArray key = readSmall(keyFile);
    const auto signature = GrantSigner::sign(bytes.value(), key);
    key.fill('\0'); // best effort: the private key does not linger in this heap block
    if (!signature)
      return fail(kExitFailed, p.signKeyPath + QStringLiteral(": ") + signature.failure().message);
    sigFile = GrantSigner::detached(signature.value());
    // Checked before the grant is written, so a stale .sig never sits next to a new grant.
    if (QFileInfo(sigPath).exists() || QFileInfo(sigPath).isSymLink())
      return fail(kExitFailed, QStringLiteral("%1 already exists").arg(sigPath));
  }

  const Status written = ExclusiveFile::write(p.outPath, bytes.value());
  if (!written)
    return fail(kExitFailed, written.failure().message);
  if (!sigFile.isEmpty()) {
    const Status signedOk = ExclusiveFile::write(sigPath, sigFile);
    if (!signedOk) {
      QFile::remove(p.outPath);
      return fail(kExitFailed, signedOk.failure().message);
    }
  }
  if (p.printDigest) {
    out << GrantIssuer::digestHex(bytes.value()) << Qt::endl;
  }
  return kExitOk;
}

} // namespace gc::tools
