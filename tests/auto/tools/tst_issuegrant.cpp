// gc-issue-grant writes grants the console's own GrantLoader accepts: every option shows up
// in the loaded grant, signatures verify with the issuer's public key and break on
// tampering, files are created 0600 and never replace anything, and nothing secret is
// written anywhere.
#include "grant/GrantLoader.h"
#include "grant/KeyboardLayout.h"
#include "tools/issuegrant/GrantIssuer.h"
#include "tools/issuegrant/GuestReadyLine.h"
#include "tools/issuegrant/IssueGrantCommand.h"

#include <QBuffer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

using namespace gc;
using namespace gc::tools;

namespace {

const QString kUuid = QStringLiteral("6d8f2a3e-9c41-4b7a-8f0e-2b1c3d4e5f60");
const QString kCert = QStringLiteral("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08");

struct Run {
  int exitCode = -1;
  QString out;
  QString err;
};

// Most rows load what the tool wrote without a key: the development opt-out.
GrantPolicy unsignedPolicy() {
  GrantPolicy policy;
  policy.allowUnsigned = true;
  return policy;
}

Run issue(const QStringList& args, const QByteArray& standardInput = {}) {
  QByteArray input = standardInput;
  QBuffer in(&input);
  in.open(QIODevice::ReadOnly);
  Run run;
  QTextStream out(&run.out);
  QTextStream err(&run.err);
  run.exitCode = IssueGrantCommand::run(QStringList{QStringLiteral("gc-issue-grant")} + args, in, out, err);
  out.flush();
  err.flush();
  return run;
}

QStringList required(const QString& out) {
  return {QStringLiteral("--out"),         out,
          QStringLiteral("--vm-uuid"),     kUuid,
          QStringLiteral("--vm-name"),     QStringLiteral("win11"),
          QStringLiteral("--port"),        QStringLiteral("43389"),
          QStringLiteral("--cert-sha256"), kCert};
}

QByteArray readAll(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

QString fieldOf(const Grant& g, const QString& field) {
  if (field == QStringLiteral("run_id"))
    return g.runId;
  if (field == QStringLiteral("task_id"))
    return g.taskId;
  if (field == QStringLiteral("vm.uuid"))
    return g.vm.uuid;
  if (field == QStringLiteral("vm.name"))
    return g.vm.name;
  if (field == QStringLiteral("vm.libvirt_uri"))
    return g.vm.libvirtUri;
  if (field == QStringLiteral("rdp.port"))
    return QString::number(g.rdp.port);
  if (field == QStringLiteral("rdp.cert_sha256"))
    return QString::fromLatin1(g.rdp.certSha256.toHex());
  if (field == QStringLiteral("rdp.unpinned"))
    return g.rdp.unpinned ? QStringLiteral("true") : QStringLiteral("false");
  if (field == QStringLiteral("rdp.desktop"))
    return QStringLiteral("%1x%2 %3")
        .arg(g.rdp.desktop.width)
        .arg(g.rdp.desktop.height)
        .arg(Grant::Desktop::sizeFromName(g.rdp.desktop.sizeFrom));
  if (field == QStringLiteral("rdp.keyboard_layout"))
    return KeyboardLayout::toString(g.rdp.desktop.keyboardLayout);
  if (field == QStringLiteral("capture"))
    return QString::fromUtf8(QJsonDocument(g.capture.toJson()).toJson(QJsonDocument::Compact));
  if (field == QStringLiteral("lifetime"))
    return QString::number(g.issuedAt.secsTo(g.expiresAt));
  if (field == QStringLiteral("lock.confirmation"))
    return Grant::Lock::confirmationName(g.lock.confirmation);
  if (field == QStringLiteral("panel.title"))
    return g.panel.title;
  if (field == QStringLiteral("panel"))
    return QString::fromUtf8(QJsonDocument(g.panel.metadata).toJson(QJsonDocument::Compact));
  if (field == QStringLiteral("mcp.server"))
    return g.mcp.server;
  if (field == QStringLiteral("mcp.tool"))
    return g.mcp.tool;
  if (field == QStringLiteral("candidates")) {
    QStringList parts;
    for (const Candidate& c : g.candidates)
      parts.append(c.id + QLatin1Char('|') + c.label + QLatin1Char('|') + c.action.canonical());
    return parts.join(QLatin1Char(';'));
  }
  return QStringLiteral("<unknown field %1>").arg(field);
}

// openssl is how docs/grant.md and tools/README.md tell issuers to make keys.
bool openssl(const QStringList& args) {
  QProcess p;
  p.start(QStringLiteral("openssl"), args);
  return p.waitForFinished(30000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
}

} // namespace

class tst_IssueGrant : public QObject {
  Q_OBJECT

private:
  QTemporaryDir m_dir;
  int m_files = 0;
  QString m_key; // Ed25519 private key (PEM)
  QString m_pub; // its public key (PEM)

  QString freshPath() { return m_dir.filePath(QStringLiteral("grant%1.json").arg(++m_files)); }

private slots:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    m_key = m_dir.filePath(QStringLiteral("issuer.key"));
    m_pub = m_dir.filePath(QStringLiteral("issuer.pub"));
    QVERIFY(openssl({"genpkey", "-algorithm", "ed25519", "-out", m_key}));
    QVERIFY(openssl({"pkey", "-in", m_key, "-pubout", "-out", m_pub}));
  }

  void issuesGrantThatTheConsoleLoads() {
    const QString path = freshPath();
    const Run run = issue(required(path) << QStringLiteral("--print-digest"));
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));

    const auto grant = GrantLoader::loadFile(path, unsignedPolicy(), QDateTime::currentDateTimeUtc());
    QVERIFY2(grant.ok(), qPrintable(grant.ok() ? QString() : grant.failure().toString()));
    QCOMPARE(grant->version, 1);
    QCOMPARE(run.out.trimmed(), QString::fromLatin1(grant->digestHex)); // --print-digest
    QCOMPARE(run.err, QString());
    QVERIFY(!grant->signed_);
  }

  void reflectsEveryOptionInTheLoadedGrant_data() {
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("expected");
    const auto row = [](const char* name, const QStringList& options, const char* field,
                        const QString& expected) {
      QTest::newRow(name) << options << QString::fromLatin1(field) << expected;
    };
    row("--run", {"--run", "run-2030.7"}, "run_id", "run-2030.7");
    row("--task", {"--task", "task:open-notepad"}, "task_id", "task:open-notepad");
    row("--vm-uuid any case", {"--vm-uuid", kUuid.toUpper()}, "vm.uuid", kUuid);
    row("--vm-name", {"--vm-name", "win11"}, "vm.name", "win11");
    row("--libvirt-uri default", {}, "vm.libvirt_uri", "qemu:///system");
    row("--libvirt-uri", {"--libvirt-uri", "test:///tmp/node.xml"}, "vm.libvirt_uri", "test:///tmp/node.xml");
    row("--port", {"--port", "5"}, "rdp.port", "5");
    row("--cert-sha256", {}, "rdp.cert_sha256", kCert);
    row("--cert-sha256 with colons",
        {"--cert-sha256",
         "9F:86:D0:81:88:4C:7D:65:9A:2F:EA:A0:C5:5A:D0:15:A3:BF:4F:1B:2B:0B:82:2C:D1:5D:6C:15:B0:F0:0A:08"},
        "rdp.cert_sha256", kCert);
    row("pinned by default", {}, "rdp.unpinned", "false");
    row("--desktop default", {}, "rdp.desktop", "1920x1080 grant");
    row("--desktop", {"--desktop", "1280x720"}, "rdp.desktop", "1280x720 grant");
    row("--desktop-size-from server", {"--desktop", "1024x768", "--desktop-size-from", "server"},
        "rdp.desktop", "1024x768 server");
    row("--keyboard-layout default", {}, "rdp.keyboard_layout", "0x00000409");
    row("--keyboard-layout", {"--keyboard-layout", "0x00000407"}, "rdp.keyboard_layout", "0x00000407");
    row("--lock-confirmation default", {}, "lock.confirmation", "guest");
    row("--lock-confirmation settle", {"--lock-confirmation", "settle"}, "lock.confirmation", "settle");
    row("--capture-size default", {}, "capture", "{}");
    row("--capture-size", {"--capture-size", "1280x800"}, "capture", "{\"size\":[1280,800]}");
    row("--capture-long-edge", {"--capture-long-edge", "1366"}, "capture", "{\"long_edge\":1366}");
    row("--lifetime default", {}, "lifetime", "900");
    row("--lifetime", {"--lifetime", "60"}, "lifetime", "60");
    row("--title default", {}, "panel.title", "Guest Console: win11");
    row("--title", {"--title", "Benchmark — run 7"}, "panel.title", "Benchmark — run 7");
    row("--panel", {"--panel", "username=alice", "--panel", "note=a=b"}, "panel",
        "{\"note\":\"a=b\",\"title\":\"Guest Console: win11\",\"username\":\"alice\"}");
    row("--mcp-server default", {}, "mcp.server", "guest-console");
    row("--mcp-tool default", {}, "mcp.tool", "perform_action");
    row("--mcp-server", {"--mcp-server", "bench-mcp"}, "mcp.server", "bench-mcp");
    row("--mcp-tool", {"--mcp-tool", "act"}, "mcp.tool", "act");
    row("no candidates", {}, "candidates", "");
    row("--candidate",
        {"--candidate", "ok:Click \"OK\": now:{\"type\":\"click\",\"x\":812,\"y\":604}", "--candidate",
         "save:Save:{\"type\":\"key_chord\",\"keys\":[\"s\",\"win\"]}"},
        "candidates", "ok|Click \"OK\": now|click(812,604);save|Save|key_chord(meta+s)");
  }

  void reflectsEveryOptionInTheLoadedGrant() {
    QFETCH(QStringList, options);
    QFETCH(QString, field);
    QFETCH(QString, expected);
    const QString path = freshPath();
    const Run run = issue(required(path) + options); // later options win over required()'s
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    const auto grant = GrantLoader::loadFile(path, unsignedPolicy(), QDateTime::currentDateTimeUtc());
    QVERIFY2(grant.ok(), qPrintable(grant.ok() ? QString() : grant.failure().toString()));
    QCOMPARE(fieldOf(grant.value(), field), expected);
  }

  void generatesFreshIdsForEveryGrant() {
    const QString a = freshPath();
    const QString b = freshPath();
    QCOMPARE(issue(required(a)).exitCode, 0);
    QCOMPARE(issue(required(b)).exitCode, 0);
    const auto ga = GrantLoader::loadFile(a, unsignedPolicy(), QDateTime::currentDateTimeUtc());
    const auto gb = GrantLoader::loadFile(b, unsignedPolicy(), QDateTime::currentDateTimeUtc());
    QVERIFY(ga.ok() && gb.ok());
    static const QRegularExpression uuidV4(
        QStringLiteral("\\A[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\\z"));
    QVERIFY2(uuidV4.match(ga->grantId).hasMatch(), qPrintable(ga->grantId));
    QVERIFY(ga->grantId != gb->grantId);
    QVERIFY(ga->runId != gb->runId);
    QVERIFY(ga->taskId != gb->taskId);
    QVERIFY(ga->runId.startsWith(QStringLiteral("run-")));
    QVERIFY(ga->taskId.startsWith(QStringLiteral("task-")));
  }

  void opensAnUnpinnedGrantOnlyWhenAskedTo() {
    const QString path = freshPath();
    QStringList args = required(path).mid(0, 8) << QStringLiteral("--insecure-no-cert-pin");
    const Run run = issue(args);
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    const auto grant = GrantLoader::loadFile(path, unsignedPolicy(), QDateTime::currentDateTimeUtc());
    QVERIFY(grant.ok());
    QVERIFY(grant->rdp.unpinned);
    QVERIFY(grant->rdp.certSha256.isEmpty());
  }

  void takesThePinFromTheGuestReadyLine_data() {
    QTest::addColumn<bool>("fromStdin");
    QTest::newRow("file") << false;
    QTest::newRow("stdin") << true;
  }

  void takesThePinFromTheGuestReadyLine() {
    QFETCH(bool, fromStdin);
    const QByteArray log = "not json\n{\"event\":\"client_connected\"}\n"
                           "{\"event\":\"ready\",\"port\":40000,\"cert_sha256\":\"" +
                           kCert.toUpper().toLatin1() +
                           "\",\"marker\":\"0x6c5a7e57\",\"width\":1024,\"height\":768}\n";
    const QString readyPath = m_dir.filePath(QStringLiteral("ready%1.txt").arg(m_files));
    QFile ready(readyPath);
    QVERIFY(ready.open(QIODevice::WriteOnly));
    ready.write(log);
    ready.close();
    const QString path = freshPath();
    const QStringList args = required(path).mid(0, 8) << QStringLiteral("--cert-from-guest-ready-line")
                                                      << (fromStdin ? QStringLiteral("-") : readyPath);
    const Run run = issue(args, fromStdin ? log : QByteArray());
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    const auto grant = GrantLoader::loadFile(path, unsignedPolicy(), QDateTime::currentDateTimeUtc());
    QVERIFY(grant.ok());
    QCOMPARE(QString::fromLatin1(grant->rdp.certSha256.toHex()), kCert);
  }

  void refusesReadyLineWithoutACertificate_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("other events only") << QByteArray("{\"event\":\"client_connected\"}\n");
    QTest::newRow("short hash") << QByteArray("{\"event\":\"ready\",\"cert_sha256\":\"abcd\"}\n");
    QTest::newRow("duplicate key") << QByteArray("{\"event\":\"ready\",\"cert_sha256\":\"" +
                                                 kCert.toLatin1() + "\",\"cert_sha256\":\"" +
                                                 kCert.toLatin1() + "\"}\n");
  }

  void refusesReadyLineWithoutACertificate() {
    QFETCH(QByteArray, text);
    QVERIFY(!GuestReadyLine::certSha256(text).ok());
    const QString path = freshPath();
    const Run run = issue(required(path).mid(0, 8)
                              << QStringLiteral("--cert-from-guest-ready-line") << QStringLiteral("-"),
                          text);
    QCOMPARE(run.exitCode, IssueGrantCommand::kExitUsage);
    QVERIFY(!QFile::exists(path));
  }

  void issuedOffsetMakesTheLoaderRefuse_data() {
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<QString>("code"); // empty: accepted
    QTest::newRow("now") << QStringList{} << QString();
    QTest::newRow("expired") << QStringList{"--issued-offset", "-1000", "--lifetime", "900"}
                             << QStringLiteral("GRANT_EXPIRED");
    QTest::newRow("not yet valid") << QStringList{"--issued-offset", "600"}
                                   << QStringLiteral("GRANT_NOT_YET_VALID");
    QTest::newRow("within the clock skew") << QStringList{"--issued-offset", "30"} << QString();
    QTest::newRow("stale") << QStringList{"--issued-offset", "-3600", "--lifetime", "7200"}
                           << QStringLiteral("GRANT_STALE");
    QTest::newRow("lifetime beyond 8 h")
        << QStringList{"--lifetime", "36000"} << QStringLiteral("GRANT_LIFETIME");
  }

  void issuedOffsetMakesTheLoaderRefuse() {
    QFETCH(QStringList, options);
    QFETCH(QString, code);
    const QString path = freshPath();
    const Run run = issue(required(path) + options);
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    const auto grant = GrantLoader::loadFile(path, unsignedPolicy(), QDateTime::currentDateTimeUtc());
    if (code.isEmpty())
      QVERIFY2(grant.ok(), qPrintable(grant.ok() ? QString() : grant.failure().toString()));
    else
      QCOMPARE(grant.ok() ? QStringLiteral("ok") : refusalName(grant.code()), code);
  }

  void signedGrantVerifiesWithTheIssuerKey() {
    const QString path = freshPath();
    const Run run = issue(required(path) << QStringLiteral("--sign-key") << m_key);
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    GrantPolicy policy;
    policy.issuerPublicKeyPem = readAll(m_pub);
    const auto grant = GrantLoader::loadFile(path, policy, QDateTime::currentDateTimeUtc());
    QVERIFY2(grant.ok(), qPrintable(grant.ok() ? QString() : grant.failure().toString()));
    QVERIFY(grant->signed_);
    QCOMPARE(QByteArray::fromBase64(readAll(path + QStringLiteral(".sig")).trimmed()).size(), 64);
  }

  // `gc-issue-grant keygen`: a fresh pair per call, both files 0600 and never over an
  // existing file; what it signs, the console's loader verifies with the public half.
  void keygenMakesAPairTheConsoleVerifies() {
    const QString key = m_dir.filePath(QStringLiteral("run%1.key").arg(++m_files));
    const QString pub = m_dir.filePath(QStringLiteral("run%1.pub").arg(m_files));
    const Run made = issue({QStringLiteral("keygen"), QStringLiteral("--out-private"), key,
                            QStringLiteral("--out-public"), pub});
    QVERIFY2(made.exitCode == 0, qPrintable(made.err));
    for (const QString& file : {key, pub}) {
      struct stat st {};
      QCOMPARE(::lstat(QFile::encodeName(file).constData(), &st), 0);
      QCOMPARE(st.st_mode & 07777, mode_t(0600));
    }
    QVERIFY(readAll(key).startsWith("-----BEGIN PRIVATE KEY-----"));
    QVERIFY(readAll(pub).startsWith("-----BEGIN PUBLIC KEY-----"));
    const QString path = freshPath();
    QCOMPARE(issue(required(path) << QStringLiteral("--sign-key") << key).exitCode, 0);
    GrantPolicy policy;
    policy.issuerPublicKeyPem = readAll(pub);
    const auto grant = GrantLoader::loadFile(path, policy, QDateTime::currentDateTimeUtc());
    QVERIFY2(grant.ok(), qPrintable(grant.ok() ? QString() : grant.failure().toString()));
    QVERIFY(grant->signed_);
    // Another pair does not verify it, and keygen never overwrites.
    const QString key2 = m_dir.filePath(QStringLiteral("run%1.key").arg(++m_files));
    const QString pub2 = m_dir.filePath(QStringLiteral("run%1.pub").arg(m_files));
    QCOMPARE(issue({QStringLiteral("keygen"), QStringLiteral("--out-private"), key2,
                    QStringLiteral("--out-public"), pub2})
                 .exitCode,
             0);
    QVERIFY(readAll(pub2) != readAll(pub));
    policy.issuerPublicKeyPem = readAll(pub2);
    QCOMPARE(GrantLoader::loadFile(path, policy, QDateTime::currentDateTimeUtc()).code(),
             Refusal::GrantSignature);
    const QByteArray before = readAll(key);
    QCOMPARE(issue({QStringLiteral("keygen"), QStringLiteral("--out-private"), key,
                    QStringLiteral("--out-public"), m_dir.filePath(QStringLiteral("fresh.pub"))})
                 .exitCode,
             IssueGrantCommand::kExitFailed);
    QCOMPARE(readAll(key), before);
    QCOMPARE(issue({QStringLiteral("keygen")}).exitCode, IssueGrantCommand::kExitUsage);
  }

  void tamperingBreaksTheSignature_data() {
    QTest::addColumn<QString>("what");
    QTest::newRow("grant byte") << QStringLiteral("grant");
    QTest::newRow("signature byte") << QStringLiteral("sig");
    QTest::newRow("signature removed") << QStringLiteral("nosig");
    QTest::newRow("another issuer's key") << QStringLiteral("otherkey");
  }

  void tamperingBreaksTheSignature() {
    QFETCH(QString, what);
    const QString path = freshPath();
    const QString sigPath = path + QStringLiteral(".sig");
    QCOMPARE(issue(required(path) << QStringLiteral("--sign-key") << m_key).exitCode, 0);
    GrantPolicy policy;
    policy.issuerPublicKeyPem = readAll(m_pub);

    const auto rewrite = [](const QString& file, const QByteArray& bytes) {
      QFile::remove(file);
      QFile f(file);
      return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
    };
    if (what == QStringLiteral("grant")) {
      QByteArray bytes = readAll(path);
      bytes.replace("43389", "43390"); // still a valid grant, just not the signed one
      QVERIFY(rewrite(path, bytes));
    } else if (what == QStringLiteral("sig")) {
      QByteArray sig = QByteArray::fromBase64(readAll(sigPath).trimmed());
      sig[10] = char(sig[10] ^ 0x01);
      QVERIFY(rewrite(sigPath, sig.toBase64()));
    } else if (what == QStringLiteral("nosig")) {
      QVERIFY(QFile::remove(sigPath));
    } else {
      const QString other = m_dir.filePath(QStringLiteral("other.key"));
      const QString otherPub = m_dir.filePath(QStringLiteral("other.pub"));
      if (!QFile::exists(otherPub)) {
        QVERIFY(openssl({"genpkey", "-algorithm", "ed25519", "-out", other}));
        QVERIFY(openssl({"pkey", "-in", other, "-pubout", "-out", otherPub}));
      }
      policy.issuerPublicKeyPem = readAll(otherPub);
    }
    const auto grant = GrantLoader::loadFile(path, policy, QDateTime::currentDateTimeUtc());
    QVERIFY(!grant.ok());
    QCOMPARE(grant.code(), Refusal::GrantSignature);
  }

  void refusesKeysItCannotSignWith_data() {
    QTest::addColumn<QByteArray>("pem");
    QTest::newRow("not PEM") << QByteArray("hello");
    QTest::newRow("public key") << QByteArray("<pub>");
    QTest::newRow("RSA key") << QByteArray("<rsa>");
  }

  void refusesKeysItCannotSignWith() {
    QFETCH(QByteArray, pem);
    const QString keyPath = m_dir.filePath(QStringLiteral("bad%1.key").arg(m_files));
    if (pem == "<pub>") {
      QVERIFY(QFile::copy(m_pub, keyPath));
    } else if (pem == "<rsa>") {
      QVERIFY(openssl({"genpkey", "-algorithm", "rsa", "-pkeyopt", "rsa_keygen_bits:1024", "-out", keyPath}));
    } else {
      QFile f(keyPath);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(pem);
    }
    const QString path = freshPath();
    const Run run = issue(required(path) << QStringLiteral("--sign-key") << keyPath);
    QCOMPARE(run.exitCode, IssueGrantCommand::kExitFailed);
    QVERIFY(!QFile::exists(path));
    QVERIFY(!QFile::exists(path + QStringLiteral(".sig")));
  }

  void writesOwnerOnlyFilesAndNeverReplacesOne_data() {
    QTest::addColumn<QString>("existing"); // what already sits at the output path
    QTest::newRow("nothing") << QString();
    QTest::newRow("a file") << QStringLiteral("file");
    QTest::newRow("a symlink") << QStringLiteral("symlink");
    QTest::newRow("a dangling symlink") << QStringLiteral("dangling");
    QTest::newRow("a stale .sig") << QStringLiteral("sig");
  }

  void writesOwnerOnlyFilesAndNeverReplacesOne() {
    QFETCH(QString, existing);
    const QString path = freshPath();
    const QString victim = m_dir.filePath(QStringLiteral("victim%1").arg(m_files));
    const QByteArray before("precious\n");
    {
      QFile v(victim);
      QVERIFY(v.open(QIODevice::WriteOnly));
      v.write(before);
    }
    if (existing == QStringLiteral("file"))
      QVERIFY(QFile::copy(victim, path));
    else if (existing == QStringLiteral("symlink"))
      QVERIFY(QFile::link(victim, path));
    else if (existing == QStringLiteral("dangling"))
      QVERIFY(QFile::link(victim + QStringLiteral(".nothing"), path));
    else if (existing == QStringLiteral("sig"))
      QVERIFY(QFile::copy(victim, path + QStringLiteral(".sig")));

    const Run run = issue(required(path) << QStringLiteral("--sign-key") << m_key);
    QCOMPARE(readAll(victim), before);
    if (!existing.isEmpty()) {
      QCOMPARE(run.exitCode, IssueGrantCommand::kExitFailed);
      QVERIFY(!QFile::exists(victim + QStringLiteral(".nothing")));
      if (existing == QStringLiteral("sig"))
        QVERIFY(!QFile::exists(path));
      return;
    }
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    for (const QString& file : {path, path + QStringLiteral(".sig")}) {
      struct stat st {};
      QCOMPARE(::lstat(QFile::encodeName(file).constData(), &st), 0);
      QVERIFY(S_ISREG(st.st_mode));
      QCOMPARE(st.st_mode & 07777, mode_t(0600));
    }
  }

  void refusesBadUsageWithoutWritingAnything_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("exitCode");
    const QStringList base{"--vm-uuid", kUuid, "--vm-name", "w", "--port", "1"};
    const int usage = IssueGrantCommand::kExitUsage;
    const int failed = IssueGrantCommand::kExitFailed;
    QTest::newRow("no pin option") << base << usage;
    QTest::newRow("two pin options") << (base + QStringList{"--cert-sha256", kCert, "--insecure-no-cert-pin"})
                                     << usage;
    QTest::newRow("short pin") << (base + QStringList{"--cert-sha256", "abcd"}) << usage;
    QTest::newRow("port 0") << (QStringList{"--port", "0", "--insecure-no-cert-pin"} + base.mid(0, 4))
                            << usage;
    QTest::newRow("port 65536") << (QStringList{"--port", "65536", "--insecure-no-cert-pin"} + base.mid(0, 4))
                                << usage;
    QTest::newRow("lifetime 0") << (base + QStringList{"--insecure-no-cert-pin", "--lifetime", "0"}) << usage;
    QTest::newRow("lifetime text") << (base + QStringList{"--insecure-no-cert-pin", "--lifetime", "1h"})
                                   << usage;
    QTest::newRow("missing vm name") << QStringList{"--vm-uuid", kUuid, "--port", "1",
                                                    "--insecure-no-cert-pin"}
                                     << usage;
    QTest::newRow("panel without =") << (base + QStringList{"--insecure-no-cert-pin", "--panel", "x"})
                                     << usage;
    QTest::newRow("panel title") << (base + QStringList{"--insecure-no-cert-pin", "--panel", "title=x"})
                                 << usage;
    QTest::newRow("panel twice") << (base + QStringList{"--insecure-no-cert-pin", "--panel", "a=1", "--panel",
                                                        "a=2"})
                                 << usage;
    QTest::newRow("candidate without JSON")
        << (base + QStringList{"--insecure-no-cert-pin", "--candidate", "a:b"}) << usage;
    QTest::newRow("unknown option") << (base + QStringList{"--insecure-no-cert-pin", "--password", "x"})
                                    << usage;
    QTest::newRow("positional") << (base + QStringList{"--insecure-no-cert-pin", "extra"}) << usage;
    // Well-formed options, but the loader would refuse the grant: nothing is written.
    QTest::newRow("vm uuid")
        << QStringList{"--vm-uuid", "nope", "--vm-name", "w", "--port", "1", "--insecure-no-cert-pin"}
        << failed;
    QTest::newRow("run id") << (base + QStringList{"--insecure-no-cert-pin", "--run", "has space"}) << failed;
    QTest::newRow("panel key") << (base + QStringList{"--insecure-no-cert-pin", "--panel", "bad-key=1"})
                               << failed;
    QTest::newRow("libvirt uri") << (base + QStringList{"--insecure-no-cert-pin", "--libvirt-uri", "nouri"})
                                 << failed;
    QTest::newRow("candidate action")
        << (base + QStringList{"--insecure-no-cert-pin", "--candidate", "a:b:{\"type\":\"type_text\"}"})
        << failed;
    QTest::newRow("duplicate candidate id")
        << (base + QStringList{"--insecure-no-cert-pin", "--candidate",
                               "a:b:{\"type\":\"click\",\"x\":1,\"y\":1}", "--candidate",
                               "a:c:{\"type\":\"click\",\"x\":2,\"y\":2}"})
        << failed;
    QTest::newRow("desktop without x")
        << (base + QStringList{"--insecure-no-cert-pin", "--desktop", "1920"}) << usage;
    QTest::newRow("size-from without desktop")
        << (base + QStringList{"--insecure-no-cert-pin", "--desktop-size-from", "server"}) << usage;
    QTest::newRow("desktop odd") << (base + QStringList{"--insecure-no-cert-pin", "--desktop", "1921x1080"})
                                 << failed;
    QTest::newRow("desktop too small")
        << (base + QStringList{"--insecure-no-cert-pin", "--desktop", "100x100"}) << failed;
    QTest::newRow("size-from other") << (base + QStringList{"--insecure-no-cert-pin", "--desktop", "800x600",
                                                            "--desktop-size-from", "panel"})
                                     << failed;
    QTest::newRow("layout zero") << (base +
                                     QStringList{"--insecure-no-cert-pin", "--keyboard-layout", "0x00000000"})
                                 << failed;
    QTest::newRow("capture size without x")
        << (base + QStringList{"--insecure-no-cert-pin", "--capture-size", "1280"}) << usage;
    QTest::newRow("capture size and long edge")
        << (base +
            QStringList{"--insecure-no-cert-pin", "--capture-size", "1280x800", "--capture-long-edge", "900"})
        << usage;
    QTest::newRow("capture long edge zero")
        << (base + QStringList{"--insecure-no-cert-pin", "--capture-long-edge", "0"}) << usage;
    QTest::newRow("capture size larger than the desktop")
        << (base + QStringList{"--insecure-no-cert-pin", "--capture-size", "2560x1440"}) << failed;
    QTest::newRow("capture size distorting the desktop")
        << (base + QStringList{"--insecure-no-cert-pin", "--capture-size", "400x1000"}) << failed;
    QTest::newRow("title control character")
        << (base + QStringList{"--insecure-no-cert-pin", "--title", "a\nb"}) << failed;
  }

  void refusesBadUsageWithoutWritingAnything() {
    QFETCH(QStringList, args);
    QFETCH(int, exitCode);
    const QString path = freshPath();
    const Run run = issue(QStringList{"--out", path} + args);
    QCOMPARE(run.exitCode, exitCode);
    QVERIFY(run.err.startsWith(QStringLiteral("gc-issue-grant: ")));
    QVERIFY(!QFile::exists(path));
    QVERIFY(run.out.isEmpty());
  }

  void writesNothingSecret() {
    const QString path = freshPath();
    const Run run =
        issue(required(path) << QStringLiteral("--sign-key") << m_key << QStringLiteral("--print-digest"));
    QCOMPARE(run.exitCode, 0);
    const QByteArray grant = readAll(path);
    const QByteArray sig = readAll(path + QStringLiteral(".sig"));
    // The private key's base64 body, in whole or in part, appears nowhere.
    QByteArray keyBody;
    for (const QByteArray& line : readAll(m_key).split('\n'))
      if (!line.startsWith("-----"))
        keyBody += line.trimmed();
    QVERIFY(keyBody.size() > 40);
    for (const QByteArray& where : {grant, sig, run.out.toUtf8(), run.err.toUtf8()}) {
      QVERIFY(!where.contains(keyBody.left(24)));
      QVERIFY(!where.contains(QByteArray::fromBase64(keyBody).right(32)));
    }
    // The grant holds exactly the documented fields; the signature file only 64 bytes.
    const QJsonObject root = QJsonDocument::fromJson(grant).object();
    QStringList keys = root.keys();
    QCOMPARE(keys, (QStringList{"expires_at", "grant_id", "issued_at", "mcp", "panel", "rdp", "run_id",
                                "task_id", "version", "vm"}));
    QCOMPARE(root.value("rdp").toObject().keys(), (QStringList{"cert_sha256", "guest_port", "host", "port"}));
    QCOMPARE(root.value("panel").toObject().keys(), QStringList{"title"});
    QCOMPARE(QByteArray::fromBase64(sig.trimmed()).size(), 64);
    QVERIFY(!grant.contains("password"));
  }

  void theExecutableWritesTheSameKindOfGrant() {
    const QString path = freshPath();
    QProcess process;
    process.start(QStringLiteral(GC_BIN_DIR "/gc-issue-grant"),
                  required(path) << QStringLiteral("--print-digest") << QStringLiteral("--title")
                                 << QStringLiteral("Démo"));
    QVERIFY(process.waitForFinished(30000));
    QCOMPARE(process.exitCode(), 0);
    const auto grant = GrantLoader::loadFile(path, unsignedPolicy(), QDateTime::currentDateTimeUtc());
    QVERIFY(grant.ok());
    QCOMPARE(grant->panel.title, QStringLiteral("Démo"));
    QCOMPARE(process.readAllStandardOutput().trimmed(), grant->digestHex);

    QProcess help;
    help.start(QStringLiteral(GC_BIN_DIR "/gc-issue-grant"), {QStringLiteral("--help")});
    QVERIFY(help.waitForFinished(30000));
    QCOMPARE(help.exitCode(), 0);
    QVERIFY(help.readAllStandardOutput().contains("--cert-from-guest-ready-line"));
  }
};

QTEST_GUILESS_MAIN(tst_IssueGrant)
#include "tst_issuegrant.moc"
