#include "tools/demo/DemoRun.h"

#include "testguest/IdentityMarker.h"
#include "tools/demo/ChildProcess.h"
#include "tools/demo/EventWait.h"
#include "tools/demo/McpClient.h"
#include "tools/demo/PanelClient.h"
#include "tools/demovm/DemoNodeXml.h"
#include "tools/issuegrant/ExclusiveFile.h"
#include "tools/issuegrant/GrantIssuer.h"
#include "tools/issuegrant/GrantSigner.h"
#include "tools/issuegrant/GuestReadyLine.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QTimeZone>

#include <cerrno>
#include <csignal>
#include <sys/stat.h>
#include <unistd.h>

namespace gc::tools {

namespace {

// Generous: the whole chain may run under ASan on two shared cores.
constexpr int kStartMs = 30000;
constexpr int kStepMs = 30000;
constexpr int kExitMs = 15000;

const QStringList kPhaseOrder{QStringLiteral("SETUP"),     QStringLiteral("LOCKING"),
                              QStringLiteral("READ_ONLY"), QStringLiteral("CAPTURING"),
                              QStringLiteral("REVIEWING"), QStringLiteral("ACTION"),
                              QStringLiteral("CLOSED")};

QString str(const QJsonObject& o, const char* key) {
  return o.value(QLatin1String(key)).toString();
}

QString pinPrefix(const QString& sha256) {
  QStringList bytes;
  for (int i = 0; i < 16 && i + 1 < sha256.size(); i += 2)
    bytes.append(sha256.mid(i, 2));
  return bytes.join(QLatin1Char(':'));
}

QString bytesToString(const QByteArray& bytes) {
  return QString::fromUtf8(bytes).trimmed();
}

// Our children by /proc: any process whose parent is us. Zero is the only good answer at the end.
int livingChildren() {
  int count = 0;
  const QString self = QString::number(::getpid());
  const QStringList entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
  for (const QString& entry : entries) {
    bool numeric = false;
    entry.toInt(&numeric);
    if (!numeric)
      continue;
    QFile status(QStringLiteral("/proc/%1/status").arg(entry));
    if (!status.open(QIODevice::ReadOnly))
      continue;
    for (const QByteArray& line : status.readAll().split('\n'))
      if (line.startsWith("PPid:") && line.mid(5).trimmed() == self.toLatin1())
        ++count;
  }
  return count;
}

bool pidGone(qint64 pid) {
  return pid > 0 && ::kill(pid_t(pid), 0) != 0 && errno == ESRCH;
}

} // namespace

DemoRun::DemoRun(Options options) : m_options(std::move(options)) {}

DemoRun::~DemoRun() {
  stopChildren();
  qDeleteAll(m_children);
  m_password.fill('\0');
}

ChildProcess* DemoRun::spawn(const QString& label, const QString& program, const QStringList& arguments) {
  auto* child = new ChildProcess(label);
  m_children.append(child);
  if (!child->start(program, arguments)) {
    m_report.fail(QStringLiteral("%1 did not start").arg(label),
                  program + QStringLiteral(": ") + child->errorString());
    return nullptr;
  }
  m_report.section(QStringLiteral("pids")).insert(label, child->pid());
  return child;
}

int DemoRun::run() {
  m_report.setMode(m_options.viewer ? QStringLiteral("viewer") : QStringLiteral("scripted"));
  std::printf("Guest Console demo: libvirt test driver + gc-test-guest, %s\n\n",
              m_options.viewer ? "operator at guest-console-viewer" : "scripted operator");
  std::fflush(stdout);

  bool ok = prepareDirectories() && startGuest() && writeVm() && issueGrant() && openConsole() &&
            (m_options.viewer ? viewerSetup() : scriptedSetup()) && captureAndAct();
  (void)ok; // every failure was recorded; cleanup and its proof run regardless
  finishConsole();
  stopChildren();
  collectGuestInput();
  verifyEvidence();
  checkCleanup();

  m_report.printSummary();
  if (!m_options.jsonReportPath.isEmpty() && !m_report.writeJson(m_options.jsonReportPath))
    std::fprintf(stderr, "guest-console-demo: cannot write %s\n", qPrintable(m_options.jsonReportPath));
  return m_report.ok() ? 0 : 1;
}

bool DemoRun::prepareDirectories() {
  // One private directory holds everything the demo writes (node XML, grant, runtime and
  // state dirs); it is removed at the end and the report says so.
  m_temp = std::make_unique<QTemporaryDir>(QDir::temp().filePath(QStringLiteral("gc-demo-XXXXXX")));
  if (!m_temp->isValid()) {
    m_report.fail(QStringLiteral("temporary directory"), m_temp->errorString());
    return false;
  }
  m_runtimeDir = m_temp->filePath(QStringLiteral("runtime"));
  m_stateDir = m_temp->filePath(QStringLiteral("state"));
  for (const QString& dir : {m_temp->path(), m_runtimeDir, m_stateDir}) {
    if ((!QFileInfo::exists(dir) && ::mkdir(QFile::encodeName(dir).constData(), 0700) != 0) ||
        ::chmod(QFile::encodeName(dir).constData(), 0700) != 0) {
      m_report.fail(QStringLiteral("temporary directory"), QStringLiteral("cannot create %1").arg(dir));
      return false;
    }
  }
  m_report.section(QStringLiteral("cleanup")).insert(QStringLiteral("temp_dir"), m_temp->path());
  return true;
}

bool DemoRun::startGuest() {
  m_guest =
      spawn(QStringLiteral("guest"), m_options.guestBinary, {QStringLiteral("--port"), QStringLiteral("0")});
  if (!m_guest)
    return false;
  // A throwaway password that exists only for this guest and this console.
  m_password = QByteArray::number(QRandomGenerator::system()->generate64(), 16) +
               QByteArray::number(QRandomGenerator::system()->generate64(), 16);
  QByteArray line = QJsonDocument(QJsonObject{{QStringLiteral("username"), QStringLiteral("demo")},
                                              {QStringLiteral("password"), QString::fromLatin1(m_password)},
                                              {QStringLiteral("domain"), QString()}})
                        .toJson(QJsonDocument::Compact);
  m_guest->writeLine(line);
  line.fill('\0');
  if (!EventWait::until(
          [this] {
            return !m_guest->events(QStringLiteral("event"), QStringLiteral("ready")).isEmpty() ||
                   m_guest->hasExited();
          },
          kStartMs) ||
      m_guest->events(QStringLiteral("event"), QStringLiteral("ready")).isEmpty()) {
    m_report.fail(QStringLiteral("guest ready"), bytesToString(m_guest->stderrTail().right(400)));
    return false;
  }
  m_guestReady = m_guest->events(QStringLiteral("event"), QStringLiteral("ready")).first();
  m_port = quint16(m_guestReady.value(QStringLiteral("port")).toInt());
  m_report.step(QStringLiteral("guest ready"),
                QStringLiteral("gc-test-guest pid %1 on 127.0.0.1:%2, %3, marker %4")
                    .arg(m_guest->pid())
                    .arg(m_port)
                    .arg(str(m_guestReady, "size") == QLatin1String("fixed")
                             ? QStringLiteral("%1x%2 fixed")
                                   .arg(m_guestReady.value(QStringLiteral("width")).toInt())
                                   .arg(m_guestReady.value(QStringLiteral("height")).toInt())
                             : QStringLiteral("the size the client asks for"))
                    .arg(str(m_guestReady, "marker")));
  return true;
}

bool DemoRun::writeVm() {
  m_vmUuid = GrantIssuer::newUuid();
  m_vmName = QStringLiteral("gc-demo");
  DemoNodeXml node({m_vmUuid, m_vmName, m_port});
  const DemoNodeXml::Domain decoy = node.suggestedDecoy();
  node.addDecoy(decoy);
  const Outcome<QString> uri = node.writeTo(m_temp->filePath(QStringLiteral("node.xml")));
  if (!uri.ok()) {
    m_report.fail(QStringLiteral("demo VM"), uri.failure().message);
    return false;
  }
  m_libvirtUri = uri.value();
  QJsonObject& binding = m_report.section(QStringLiteral("binding"));
  binding.insert(QStringLiteral("vm_name"), m_vmName);
  binding.insert(QStringLiteral("vm_uuid"), m_vmUuid);
  binding.insert(QStringLiteral("decoy"), decoy.name);
  binding.insert(QStringLiteral("decoy_port"), decoy.hostPort);
  binding.insert(QStringLiteral("host"), QStringLiteral("127.0.0.1"));
  binding.insert(QStringLiteral("port"), m_port);
  binding.insert(QStringLiteral("libvirt_uri"), m_libvirtUri);
  m_report.step(QStringLiteral("demo VM defined"), QStringLiteral("%1 (%2) -> 127.0.0.1:%3, decoy %4")
                                                       .arg(m_vmName, m_vmUuid.left(8))
                                                       .arg(m_port)
                                                       .arg(decoy.name));
  return true;
}

bool DemoRun::issueGrant() {
  const Outcome<QString> pin =
      GuestReadyLine::certSha256(QJsonDocument(m_guestReady).toJson(QJsonDocument::Compact));
  if (!pin.ok()) {
    m_report.fail(QStringLiteral("certificate pin"), pin.failure().message);
    return false;
  }
  GrantDraft draft;
  draft.grantId = GrantIssuer::newUuid();
  draft.runId = GrantIssuer::newId(QStringLiteral("run"));
  draft.taskId = GrantIssuer::newId(QStringLiteral("task"));
  draft.issuedAt = QDateTime::fromSecsSinceEpoch(QDateTime::currentSecsSinceEpoch(), QTimeZone::utc());
  draft.expiresAt = draft.issuedAt.addSecs(15 * 60);
  draft.vmUuid = m_vmUuid;
  draft.vmName = m_vmName;
  draft.libvirtUri = m_libvirtUri;
  draft.port = m_port;
  draft.certSha256 = pin.value();
  draft.title = QStringLiteral("Guest Console demo");
  draft.panelFields = {{QStringLiteral("username"), QStringLiteral("demo")}};
  const Outcome<QByteArray> bytes = GrantIssuer::render(draft);
  if (!bytes.ok()) {
    m_report.fail(QStringLiteral("grant"), bytes.failure().message);
    return false;
  }
  // Signed with a key made for this run: the console refuses unsigned grants. Only the
  // public key is written (0600, in the private temp dir); the private one stays in memory.
  Outcome<GrantSigner::KeyPair> keys = GrantSigner::generate();
  const Outcome<QByteArray> signature =
      keys.ok() ? GrantSigner::sign(bytes.value(), keys->privatePem) : Outcome<QByteArray>(keys.failure());
  if (keys.ok())
    keys.value().privatePem.fill('\0');
  if (!signature.ok()) {
    m_report.fail(QStringLiteral("grant signature"), signature.failure().message);
    return false;
  }
  m_grantPath = m_temp->filePath(QStringLiteral("grant.json"));
  m_issuerKeyPath = m_temp->filePath(QStringLiteral("issuer.pub"));
  for (const auto& [path, content] :
       {std::pair{m_grantPath, bytes.value()},
        std::pair{m_grantPath + QStringLiteral(".sig"), GrantSigner::detached(signature.value())},
        std::pair{m_issuerKeyPath, keys->publicPem}}) {
    if (Status written = ExclusiveFile::write(path, content); !written.ok()) {
      m_report.fail(QStringLiteral("grant"), written.failure().message);
      return false;
    }
  }
  m_runId = draft.runId;
  m_mcpTool = draft.mcpTool;
  m_taskId = draft.taskId;
  m_grantId = draft.grantId;
  m_grantDigest = QString::fromLatin1(GrantIssuer::digestHex(bytes.value()));
  m_evidencePath =
      QDir(m_stateDir).filePath(QStringLiteral("evidence/%1-%2.jsonl").arg(m_runId, m_grantId.left(8)));
  QJsonObject& binding = m_report.section(QStringLiteral("binding"));
  binding.insert(QStringLiteral("cert_sha256"), pin.value());
  binding.insert(QStringLiteral("cert_pin_prefix"), pinPrefix(pin.value()));
  binding.insert(QStringLiteral("run"), m_runId);
  binding.insert(QStringLiteral("task"), m_taskId);
  binding.insert(QStringLiteral("grant_id"), m_grantId);
  binding.insert(QStringLiteral("grant_digest"), m_grantDigest);
  m_report.step(QStringLiteral("grant issued"),
                QStringLiteral("%1, %2, expires in 15 min, pin %3…, signed with a key made for this run")
                    .arg(m_runId, m_taskId, pinPrefix(pin.value())));
  return true;
}

QStringList DemoRun::consoleArgs() const {
  return {QStringLiteral("--state-dir"),  m_stateDir,     QStringLiteral("--runtime-dir"), m_runtimeDir,
          QStringLiteral("--issuer-key"), m_issuerKeyPath};
}

void DemoRun::onConsoleLine(const QJsonObject& line) {
  const QString event = str(line, "event");
  if (event == QLatin1String("phase")) {
    const QString phase = str(line, "phase");
    // "SETUP, guest connected" repeats SETUP as news, not a transition; it is the first phase we see.
    if (m_phases.isEmpty() || m_phases.last() != phase) {
      m_phases.append(phase);
      m_report.phase(phase, str(line, "reason"));
    }
  } else if (event == QLatin1String("error")) {
    m_errors.append(str(line, "code"));
    m_report.step(QStringLiteral("console error"),
                  str(line, "code") + QStringLiteral(": ") + str(line, "message"));
  } else if (event == QLatin1String("receipt")) {
    m_receipt = line;
    m_receipt.remove(QStringLiteral("event"));
  } else if (event == QLatin1String("closed")) {
    m_closed = line;
  } else if (event == QLatin1String("drained")) {
    m_report.step(QStringLiteral("drained"),
                  QStringLiteral("upto %1").arg(line.value(QStringLiteral("upto")).toInteger()));
  }
}

bool DemoRun::phaseSeen(const QString& phase) const {
  return m_phases.contains(phase);
}

bool DemoRun::waitConsole(const std::function<bool()>& condition, int timeoutMs, const QString& what) {
  const bool ok =
      EventWait::until([&] { return condition() || m_console->hasExited(); }, timeoutMs) && condition();
  if (!ok)
    m_report.fail(what, m_console->hasExited()
                            ? QStringLiteral("the console ended (%1; %2)")
                                  .arg(m_console->howEnded(), m_errors.join(QLatin1Char(',')))
                        : EventWait::interrupted() ? QStringLiteral("interrupted")
                                                   : QStringLiteral("timed out after %1 ms").arg(timeoutMs));
  return ok;
}

bool DemoRun::openConsole() {
  m_console =
      spawn(QStringLiteral("console"), QDir(m_options.binDir).filePath(QStringLiteral("guest-console")),
            QStringList{QStringLiteral("open"), QStringLiteral("--grant"), m_grantPath} + consoleArgs());
  if (!m_console)
    return false;
  QObject::connect(m_console, &ChildProcess::jsonLine, m_console,
                   [this](const QJsonObject& l) { onConsoleLine(l); });
  auto has = [this](const char* event) {
    return !m_console->events(QStringLiteral("event"), QLatin1String(event)).isEmpty();
  };
  if (!waitConsole([&] { return has("ready"); }, kStartMs, QStringLiteral("console ready")))
    return false;
  m_ready = m_console->events(QStringLiteral("event"), QStringLiteral("ready")).first();
  const QJsonObject identity = m_ready.value(QStringLiteral("identity")).toObject();
  m_report.step(
      QStringLiteral("console ready"),
      QStringLiteral("pid %1, bound %2 (%3…), panel 127.0.0.1:%4, capability 256 bits (not shown)")
          .arg(m_console->pid())
          .arg(str(identity, "vm_name"), str(identity, "vm_uuid_prefix"))
          .arg(m_ready.value(QStringLiteral("panel")).toObject().value(QStringLiteral("port")).toInt()));
  m_report.check(
      QStringLiteral("console bound the demo VM"),
      str(identity, "vm_name") == m_vmName && m_vmUuid.startsWith(str(identity, "vm_uuid_prefix")) &&
          str(identity, "cert_fingerprint")
                  .compare(pinPrefix(m_report.section(QStringLiteral("binding"))
                                         .value(QStringLiteral("cert_sha256"))
                                         .toString()),
                           Qt::CaseInsensitive) == 0,
      QStringLiteral("%1 %2 %3")
          .arg(str(identity, "vm_name"), str(identity, "vm_uuid_prefix"), str(identity, "cert_fingerprint")));

  if (!waitConsole([&] { return has("credentials_required"); }, kStepMs, QStringLiteral("credentials asked")))
    return false;
  const QJsonObject asked =
      m_console->events(QStringLiteral("event"), QStringLiteral("credentials_required")).first();
  // What the VS Code extension does with its password box: one line on the console's stdin
  // ("cmd" first: QJsonObject sorts keys, and "cmd" sorts before the others).
  QByteArray line = QJsonDocument(QJsonObject{{QStringLiteral("cmd"), QStringLiteral("credentials")},
                                              {QStringLiteral("username"), str(asked, "username")},
                                              {QStringLiteral("password"), QString::fromLatin1(m_password)},
                                              {QStringLiteral("domain"), str(asked, "domain")}})
                        .toJson(QJsonDocument::Compact);
  m_console->writeLine(line);
  line.fill('\0');
  m_password.fill('\0');
  m_report.step(QStringLiteral("credentials sent"),
                QStringLiteral("user %1, attempt %2 of %3 (on the console's stdin)")
                    .arg(str(asked, "username"))
                    .arg(asked.value(QStringLiteral("attempt")).toInt())
                    .arg(asked.value(QStringLiteral("max_attempts")).toInt()));
  return waitConsole([&] { return phaseSeen(QStringLiteral("SETUP")); }, kStepMs,
                     QStringLiteral("guest connected"));
}

bool DemoRun::scriptedSetup() {
  const QJsonObject panelInfo = m_ready.value(QStringLiteral("panel")).toObject();
  m_panel = std::make_unique<PanelClient>();
  m_panel->open(quint16(panelInfo.value(QStringLiteral("port")).toInt()), m_runId, m_taskId,
                str(panelInfo, "capability"));
  if (!waitConsole([&] { return m_panel->isWelcomed() || m_panel->isClosed(); }, kStepMs,
                   QStringLiteral("panel welcome")) ||
      !m_panel->isWelcomed()) {
    m_report.fail(QStringLiteral("panel welcome"), m_panel->errors().join(QLatin1Char(',')));
    return false;
  }
  const QJsonObject welcome = m_panel->welcome();
  m_width = welcome.value(QStringLiteral("width")).toInt();
  m_height = welcome.value(QStringLiteral("height")).toInt();
  m_report.step(QStringLiteral("panel connected"),
                QStringLiteral("welcome: phase %1, %2x%3, identity %4")
                    .arg(str(welcome, "phase"))
                    .arg(m_width)
                    .arg(m_height)
                    .arg(str(welcome.value(QStringLiteral("identity")).toObject(), "cert_fingerprint")));

  m_script = OperatorScript::standard(m_width, m_height);
  for (const OperatorScript::Step& s : m_script->steps()) {
    if (s.isKey)
      m_panel->sendKey(s.scancode, s.down);
    else
      m_panel->sendPointer(s.x, s.y, s.buttons);
  }
  // The lock follows at once, as an operator's would: the barrier must drain what is queued.
  m_panel->sendLock();
  m_report.step(
      QStringLiteral("operator setup"),
      QStringLiteral("%1: %2 events sent, then lock").arg(m_script->summary()).arg(m_panel->counts().sent));
  if (!waitConsole([&] { return phaseSeen(QStringLiteral("CAPTURING")); }, kStepMs, QStringLiteral("lock")))
    return false;
  // A keystroke after the lock must be refused at the gate and never reach the guest.
  m_panel->sendKey(0x1E, true);
  waitConsole([&] { return m_panel->counts().refused > 0; }, kStepMs,
              QStringLiteral("input after the lock refused"));
  m_report.step(
      QStringLiteral("key after the lock"),
      QStringLiteral("refused: %1").arg(m_panel->counts().refusedByCode.keys().join(QLatin1Char(','))));
  return true;
}

bool DemoRun::viewerSetup() {
  if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY")) {
    m_report.fail(QStringLiteral("viewer"),
                  QStringLiteral("--viewer needs a display (DISPLAY or WAYLAND_DISPLAY)"));
    return false;
  }
  const QJsonObject panelInfo = m_ready.value(QStringLiteral("panel")).toObject();
  m_viewer =
      spawn(QStringLiteral("viewer"), QDir(m_options.binDir).filePath(QStringLiteral("guest-console-viewer")),
            {QStringLiteral("--port"), QString::number(panelInfo.value(QStringLiteral("port")).toInt()),
             QStringLiteral("--run"), m_runId, QStringLiteral("--task"), m_taskId,
             QStringLiteral("--exit-on-close")});
  if (!m_viewer)
    return false;
  // The capability goes through the viewer's stdin, never its argv.
  QByteArray capability = str(panelInfo, "capability").toLatin1();
  m_viewer->writeLine(capability);
  capability.fill('\0');
  m_viewer->closeInput();
  m_script = std::nullopt;
  m_report.section(QStringLiteral("input"))
      .insert(QStringLiteral("script"), QStringLiteral("by hand in guest-console-viewer"));
  m_report.step(
      QStringLiteral("viewer opened"),
      QStringLiteral("pid %1 — prepare the guest in the window, then press Lock").arg(m_viewer->pid()));
  const bool locked = EventWait::until(
      [this] {
        return phaseSeen(QStringLiteral("CAPTURING")) || m_console->hasExited() || m_viewer->hasExited();
      },
      m_options.viewerTimeoutSeconds * 1000);
  if (!locked || !phaseSeen(QStringLiteral("CAPTURING"))) {
    m_report.fail(QStringLiteral("operator lock"), m_viewer->hasExited()
                                                       ? QStringLiteral("the viewer was closed")
                                                       : QStringLiteral("no lock"));
    return false;
  }
  return true;
}

bool DemoRun::captureAndAct() {
  if (EventWait::interrupted())
    return false;
  m_relay = spawn(QStringLiteral("mcp"), QDir(m_options.binDir).filePath(QStringLiteral("guest-console")),
                  QStringList{QStringLiteral("mcp"), QStringLiteral("--run"), m_runId} + consoleArgs());
  if (!m_relay)
    return false;
  McpClient mcp(m_relay);
  const auto init = mcp.waitForResponse(mcp.initialize(), kStepMs);
  if (!init || !init->contains(QStringLiteral("result"))) {
    m_report.fail(QStringLiteral("MCP initialize"),
                  init ? QString::fromUtf8(QJsonDocument(*init).toJson(QJsonDocument::Compact))
                       : bytesToString(m_relay->stderrTail().right(400)));
    return false;
  }
  mcp.notify(QStringLiteral("notifications/initialized"));
  const QJsonObject serverInfo =
      init->value(QStringLiteral("result")).toObject().value(QStringLiteral("serverInfo")).toObject();
  m_report.step(QStringLiteral("MCP initialized"),
                QStringLiteral("relay pid %1, server \"%2\", protocol %3")
                    .arg(m_relay->pid())
                    .arg(str(serverInfo, "name"),
                         str(init->value(QStringLiteral("result")).toObject(), "protocolVersion")));

  // Capture Desktop.
  const auto shot = mcp.waitForResponse(mcp.callTool(QStringLiteral("capture_desktop")), kStepMs);
  const QJsonObject shotResult = shot ? shot->value(QStringLiteral("result")).toObject() : QJsonObject();
  if (shotResult.isEmpty() || shotResult.value(QStringLiteral("isError")).toBool()) {
    m_report.fail(QStringLiteral("capture_desktop"),
                  shot ? QString::fromUtf8(QJsonDocument(*shot).toJson(QJsonDocument::Compact)).left(400)
                       : QStringLiteral("no answer"));
    return false;
  }
  QByteArray png;
  for (const QJsonValue& v : shotResult.value(QStringLiteral("content")).toArray())
    if (str(v.toObject(), "type") == QLatin1String("image"))
      png = QByteArray::fromBase64(v.toObject().value(QStringLiteral("data")).toString().toLatin1());
  const QJsonObject structured = shotResult.value(QStringLiteral("structuredContent")).toObject();
  const QString sha = QString::fromLatin1(QCryptographicHash::hash(png, QCryptographicHash::Sha256).toHex());
  QImage image;
  image.loadFromData(png, "PNG");
  image = image.convertToFormat(QImage::Format_RGB32); // BGRX in memory on little-endian
  const std::optional<uint32_t> marker =
      image.isNull() ? std::nullopt
                     : testguest::findMarker(image.constBits(), int(image.bytesPerLine()), image.width(),
                                             image.height());
  const QString expectedMarker = str(m_guestReady, "marker");
  const QString foundMarker =
      marker ? QStringLiteral("0x%1").arg(*marker, 8, 16, QLatin1Char('0')) : QString();
  m_width = image.width();
  m_height = image.height();
  m_report.setSection(QStringLiteral("capture"),
                      QJsonObject{{QStringLiteral("width"), image.width()},
                                  {QStringLiteral("height"), image.height()},
                                  {QStringLiteral("png_bytes"), png.size()},
                                  {QStringLiteral("sha256"), sha},
                                  {QStringLiteral("sha256_matches"), sha == str(structured, "sha256")},
                                  {QStringLiteral("marker_expected"), expectedMarker},
                                  {QStringLiteral("marker"), foundMarker},
                                  {QStringLiteral("marker_found"), foundMarker == expectedMarker}});
  png.fill('\0'); // the capture lives in memory only, and only as long as needed
  m_report.step(QStringLiteral("desktop captured"),
                QStringLiteral("%1x%2, sha256 %3…, marker %4")
                    .arg(image.width())
                    .arg(image.height())
                    .arg(sha.left(16), foundMarker.isEmpty() ? QStringLiteral("not found") : foundMarker));
  m_report.check(QStringLiteral("identity marker on the capture"), foundMarker == expectedMarker,
                 QStringLiteral("expected %1, found %2")
                     .arg(expectedMarker, foundMarker.isEmpty() ? QStringLiteral("none") : foundMarker));
  m_report.check(QStringLiteral("capture hash as reported"), sha == str(structured, "sha256"), sha.left(16));
  image = QImage();
  if (!waitConsole([&] { return phaseSeen(QStringLiteral("REVIEWING")); }, kStepMs,
                   QStringLiteral("reviewing")))
    return false;

  // The one action: a click in the middle of the desktop.
  m_actionX = m_width / 2;
  m_actionY = m_height / 2;
  const auto acted = mcp.waitForResponse(
      mcp.callTool(m_mcpTool, QJsonObject{{QStringLiteral("action"),
                                           QJsonObject{{QStringLiteral("type"), QStringLiteral("click")},
                                                       {QStringLiteral("x"), m_actionX},
                                                       {QStringLiteral("y"), m_actionY}}}}),
      kStepMs);
  const QJsonObject actResult = acted ? acted->value(QStringLiteral("result")).toObject() : QJsonObject();
  m_report.step(
      QStringLiteral("action performed"),
      QStringLiteral("perform_action click(%1,%2): %3")
          .arg(m_actionX)
          .arg(m_actionY)
          .arg(actResult.isEmpty() ? QStringLiteral("no answer")
               : actResult.value(QStringLiteral("isError")).toBool()
                   ? str(actResult.value(QStringLiteral("structuredContent")).toObject(), "code")
                   : str(actResult.value(QStringLiteral("structuredContent")).toObject(), "outcome")));
  const QJsonObject toolReceipt = actResult.value(QStringLiteral("structuredContent")).toObject();
  waitConsole([&] { return !m_receipt.isEmpty(); }, kStepMs,
              QStringLiteral("receipt on the control channel"));
  m_report.setSection(QStringLiteral("receipt"), m_receipt.isEmpty() ? toolReceipt : m_receipt);
  m_report.check(QStringLiteral("receipt: action executed"),
                 !actResult.value(QStringLiteral("isError")).toBool(true) &&
                     str(toolReceipt, "outcome") == QLatin1String("executed") && toolReceipt == m_receipt &&
                     str(toolReceipt, "run") == m_runId && str(toolReceipt, "grant_digest") == m_grantDigest,
                 QStringLiteral("%1, %2 events sent; MCP result and control channel agree: %3")
                     .arg(str(toolReceipt, "outcome"))
                     .arg(toolReceipt.value(QStringLiteral("events_sent")).toInt())
                     .arg(toolReceipt == m_receipt ? QStringLiteral("yes") : QStringLiteral("no")));
  // The relay ends on stdin EOF, as when a model host disconnects.
  m_relay->closeInput();
  return true;
}

void DemoRun::finishConsole() {
  if (!m_console || m_console->hasExited())
    return;
  // The action closes the console; if the demo stopped earlier, close it as the extension would.
  const bool acted = !m_receipt.isEmpty();
  if (!EventWait::until([this] { return !m_closed.isEmpty(); }, acted ? kExitMs : 0)) {
    m_console->writeLine(QByteArrayLiteral("{\"cmd\":\"close\"}"));
    EventWait::until([this] { return !m_closed.isEmpty(); }, kExitMs);
  }
  if (m_closed.isEmpty())
    m_report.fail(QStringLiteral("console closed"), QStringLiteral("no closed event"));
  m_console->waitForExit(kExitMs);
}

void DemoRun::stopChildren() {
  if (m_panel)
    m_panel->close();
  if (m_guest && m_guest->isRunning()) {
    // Everything the guest received has been printed once it saw the client go.
    EventWait::until(
        [this] {
          return !m_guest->events(QStringLiteral("event"), QStringLiteral("client_disconnected")).isEmpty();
        },
        EventWait::interrupted() || !m_console || !m_console->hasExited() ? 0 : kExitMs);
    m_guest->writeLine(QByteArrayLiteral("{\"cmd\":\"quit\"}"));
  }
  // Reverse start order: the relay and the viewer before the console, the guest last.
  for (auto it = m_children.rbegin(); it != m_children.rend(); ++it)
    (*it)->stop(kExitMs / 3);
}

void DemoRun::collectGuestInput() {
  if (!m_guest || !m_console)
    return;
  QStringList received;
  for (const QJsonObject& e : m_guest->events(QStringLiteral("event"), QStringLiteral("input")))
    received.append(OperatorScript::token(e));
  const QStringList expectedAction =
      m_receipt.isEmpty() ? QStringList() : OperatorScript::expectedForClick(m_actionX, m_actionY);
  // The action is the last input the guest ever gets; everything before it is the setup.
  const qsizetype setupCount = std::max<qsizetype>(0, received.size() - expectedAction.size());
  const QStringList setup = received.mid(0, setupCount);
  const QStringList action = received.mid(setupCount);
  QJsonObject& input = m_report.section(QStringLiteral("input"));
  input.insert(QStringLiteral("guest_received"), received.size());
  input.insert(QStringLiteral("guest_setup_count"), setup.size());
  input.insert(QStringLiteral("guest_action_count"), action.size());
  input.insert(QStringLiteral("guest_setup"), QJsonArray::fromStringList(setup));
  input.insert(QStringLiteral("guest_action"), QJsonArray::fromStringList(action));
  input.insert(QStringLiteral("expected_action"), QJsonArray::fromStringList(expectedAction));
  input.insert(QStringLiteral("action_matches"), !expectedAction.isEmpty() && action == expectedAction);
  if (m_script) {
    const QStringList expectedSetup = m_script->expectedGuestInput();
    input.insert(QStringLiteral("script"), m_script->summary());
    input.insert(QStringLiteral("expected_setup"), QJsonArray::fromStringList(expectedSetup));
    input.insert(QStringLiteral("setup_matches"), setup == expectedSetup);
    m_report.check(QStringLiteral("guest received exactly the setup"), setup == expectedSetup,
                   QStringLiteral("%1 of %2 expected").arg(setup.size()).arg(expectedSetup.size()));
  }
  if (m_panel) {
    const PanelClient::Counts& c = m_panel->counts();
    input.insert(QStringLiteral("sent"), qint64(c.sent));
    input.insert(QStringLiteral("acknowledged"), qint64(c.acknowledged));
    input.insert(QStringLiteral("refused"), qint64(c.refused));
    QJsonObject byCode;
    for (auto it = c.refusedByCode.begin(); it != c.refusedByCode.end(); ++it)
      byCode.insert(it.key(), qint64(it.value()));
    input.insert(QStringLiteral("refused_by_code"), byCode);
    input.insert(QStringLiteral("drained_upto"), qint64(c.drainedUpto));
    input.insert(QStringLiteral("frames"), qint64(c.frames));
    const quint64 setupSent = m_script ? quint64(m_script->steps().size()) : 0;
    input.insert(QStringLiteral("setup_sent"), qint64(setupSent));
    m_report.check(QStringLiteral("every setup event acknowledged and drained before the lock"),
                   c.acknowledged == setupSent && c.drainedUpto == setupSent,
                   QStringLiteral("sent %1, acknowledged %2, drained upto %3")
                       .arg(setupSent)
                       .arg(c.acknowledged)
                       .arg(c.drainedUpto));
    m_report.check(QStringLiteral("input after the lock refused"), c.refused == 1 && c.sent == setupSent + 1,
                   QStringLiteral("refused %1").arg(c.refused));
  }
  m_report.check(QStringLiteral("guest received exactly the one action"),
                 action == expectedAction && !action.isEmpty(), action.join(QStringLiteral(" · ")));
}

void DemoRun::verifyEvidence() {
  QJsonObject& cleanup = m_report.section(QStringLiteral("cleanup"));
  if (m_console) {
    cleanup.insert(QStringLiteral("console_exit"), m_console->exitCode());
    cleanup.insert(QStringLiteral("closed_reason"), str(m_closed, "reason"));
    cleanup.insert(QStringLiteral("closed_message"), str(m_closed, "message"));
    m_report.check(QStringLiteral("console closed normally"),
                   m_console->hasExited() && m_console->exitCode() == 0 && !m_closed.isEmpty(),
                   QStringLiteral("%1, %2").arg(m_console->howEnded(), str(m_closed, "reason")));
    // The console's own input counts, from its evidence (no payloads there, counts only).
    QFile log(m_evidencePath);
    if (log.open(QIODevice::ReadOnly)) {
      for (const QByteArray& line : log.readAll().split('\n')) {
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        if (str(o, "event") == QLatin1String("input_counts"))
          m_report.section(QStringLiteral("input"))
              .insert(QStringLiteral("console_counts"),
                      QJsonObject{{QStringLiteral("accepted"), o.value(QStringLiteral("accepted"))},
                                  {QStringLiteral("delivered"), o.value(QStringLiteral("delivered"))},
                                  {QStringLiteral("refused"), o.value(QStringLiteral("refused"))}});
      }
    }
  }
  QStringList phases;
  for (const QJsonValue& p : m_report.phases())
    phases.append(str(p.toObject(), "phase"));
  m_report.check(QStringLiteral("phases in order"), phases == kPhaseOrder,
                 phases.join(QStringLiteral(" > ")));
  if (m_evidencePath.isEmpty() || EventWait::interrupted())
    return;
  cleanup.insert(QStringLiteral("evidence_file"), QFileInfo(m_evidencePath).fileName());
  ChildProcess* verify =
      spawn(QStringLiteral("evidence"), QDir(m_options.binDir).filePath(QStringLiteral("guest-console")),
            {QStringLiteral("evidence"), QStringLiteral("verify"), m_evidencePath});
  if (!verify)
    return;
  verify->closeInput();
  verify->waitForExit(kExitMs);
  const QString output =
      verify->textLines().isEmpty() ? QString() : QString::fromUtf8(verify->textLines().first());
  // "evidence: ok, N lines, head H"
  const QString head = output.section(QStringLiteral("head "), 1).trimmed();
  const bool headMatches = !head.isEmpty() && head == str(m_closed, "evidence_head");
  cleanup.insert(QStringLiteral("evidence_output"), output);
  cleanup.insert(QStringLiteral("evidence_verified"), verify->exitCode() == 0);
  cleanup.insert(QStringLiteral("evidence_head_matches"), headMatches);
  m_report.check(QStringLiteral("evidence chain verified"), verify->exitCode() == 0 && headMatches, output);
  m_report.step(QStringLiteral("evidence verified"), output);
}

void DemoRun::checkCleanup() {
  QJsonObject& cleanup = m_report.section(QStringLiteral("cleanup"));
  stopChildren(); // the verifier, if it still ran
  if (!m_runId.isEmpty()) {
    const QString runDir = QDir(m_runtimeDir).filePath(QStringLiteral("guest-console/runs/") + m_runId);
    const bool gone = !QFileInfo::exists(runDir);
    cleanup.insert(QStringLiteral("run_dir"), QStringLiteral("<runtime>/guest-console/runs/") + m_runId);
    cleanup.insert(QStringLiteral("run_dir_gone"), gone);
    m_report.check(QStringLiteral("run dir removed by the console"), gone, runDir);
  }
  QJsonObject children;
  bool allGone = true;
  for (ChildProcess* child : std::as_const(m_children)) {
    const bool gone = pidGone(child->pid()) || child->pid() == 0;
    allGone = allGone && gone;
    children.insert(child->label(),
                    QStringLiteral("%1 %2%3")
                        .arg(child->pid())
                        .arg(child->howEnded(), gone ? QString() : QStringLiteral(" (STILL THERE)")));
  }
  const int left = livingChildren();
  cleanup.insert(QStringLiteral("children"), children);
  cleanup.insert(QStringLiteral("children_left"), left);
  m_report.check(QStringLiteral("no child process left"), allGone && left == 0,
                 QStringLiteral("%1 started, %2 still running").arg(m_children.size()).arg(left));
  if (m_temp) {
    const QString path = m_temp->path();
    const bool removed = m_temp->remove() && !QFileInfo::exists(path);
    cleanup.insert(QStringLiteral("temp_removed"), removed);
    m_report.check(QStringLiteral("temporary files removed"), removed, path);
  }
  m_report.step(QStringLiteral("cleaned up"),
                QStringLiteral("%1 children ended, temp dir %2")
                    .arg(m_children.size())
                    .arg(cleanup.value(QStringLiteral("temp_removed")).toBool() ? "removed" : "NOT removed"));
}

} // namespace gc::tools
