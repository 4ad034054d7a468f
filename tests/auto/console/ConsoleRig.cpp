#include "ConsoleRig.h"

#include "bridge/frames/FrameReader.h"
#include "tools/issuegrant/GrantSigner.h"
#include "vm/LibvirtConnection.h"

#include <QDateTime>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QSocketNotifier>
#include <QTest>
#include <QUuid>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace gc;

ConsoleRig::ConsoleRig(GrantSpec s) : spec(std::move(s)) {
  ::chmod(QFile::encodeName(dir.path()).constData(), 0700);
  uuid = QUuid::createUuid().toString(QUuid::WithoutBraces);
  runId = QStringLiteral("run-%1").arg(QUuid::createUuid().toString(QUuid::Id128).left(12));
  ledgerDir = dir.filePath(QStringLiteral("ledger"));
  if (Outcome<tools::GrantSigner::KeyPair> keys = tools::GrantSigner::generate(); keys.ok()) {
    m_issuerPrivatePem = keys->privatePem;
    issuerPublicPem = keys->publicPem;
  }
  int toConsole[2], fromConsole[2];
  if (::pipe2(toConsole, O_CLOEXEC) == 0 && ::pipe2(fromConsole, O_CLOEXEC | O_NONBLOCK) == 0) {
    m_consoleRead = toConsole[0];
    m_parentWrite = toConsole[1];
    m_parentRead = fromConsole[0];
    m_consoleWrite = fromConsole[1];
  }
  QObject::connect(&panel, &QWebSocket::textMessageReceived, [this](const QString& m) {
    panelReceived.append(QJsonDocument::fromJson(m.toUtf8()).object());
  });
  QObject::connect(&panel, &QWebSocket::binaryMessageReceived, [this](const QByteArray& packet) {
    // Decoded as a panel does (the viewer's parser): every rectangle applied, then acked.
    const Outcome<FrameReader> update = FrameReader::parse(packet);
    if (!update.ok())
      return;
    if (Outcome<QImage> next = update->apply(canvas); next.ok())
      canvas = next.value();
    ++framesReceived;
    QRegion covered;
    for (const auto& rect : update->rects())
      covered += rect.area;
    frameRegions.append(covered);
    lastFrameId = update->frameId();
    if (ackFrames)
      panel.sendTextMessage(QStringLiteral("{\"type\":\"frame_ack\",\"frame\":%1}").arg(update->frameId()));
  });
}

ConsoleRig::~ConsoleRig() {
  m_issuerPrivatePem.fill('\0');
  console.reset();
  control.reset();
  if (events)
    events->stop();
  for (int fd : {m_parentWrite, m_parentRead, m_consoleRead, m_consoleWrite})
    if (fd >= 0)
      ::close(fd);
}

bool ConsoleRig::startGuest(const QStringList& extraArgs) {
  return guest.start(
      QStringList{QStringLiteral("--port"), QStringLiteral("0")} + extraArgs, QStringLiteral("op"),
      spec.password == QLatin1String("wrong") ? QStringLiteral("throwaway-pw") : spec.password);
}

QString ConsoleRig::writeGrant() {
  const QString xml =
      QStringLiteral("<node><domain type='test'><name>demo-vm</name><uuid>%1</uuid><memory>1024</memory>"
                     "<os><type>hvm</type></os><devices><interface type='user'><portForward proto='tcp' "
                     "address='127.0.0.1'><range start='%2' to='3389'/></portForward></interface></devices>"
                     "</domain></node>")
          .arg(uuid)
          .arg(guest.port());
  QFile node(dir.filePath(QStringLiteral("node.xml")));
  if (!node.open(QIODevice::WriteOnly) || node.write(xml.toUtf8()) < 0)
    return {};
  node.close();
  const QDateTime now = QDateTime::currentDateTimeUtc();
  QJsonObject rdp{{QStringLiteral("host"), QStringLiteral("127.0.0.1")},
                  {QStringLiteral("port"), guest.port()},
                  {QStringLiteral("guest_port"), 3389},
                  {QStringLiteral("cert_sha256"), spec.pin.isEmpty() ? guest.sha256() : spec.pin}};
  if (spec.desktop.isValid()) {
    QJsonObject desktop{{QStringLiteral("width"), spec.desktop.width()},
                        {QStringLiteral("height"), spec.desktop.height()}};
    if (!spec.sizeFrom.isEmpty())
      desktop.insert(QStringLiteral("size_from"), spec.sizeFrom);
    rdp.insert(QStringLiteral("desktop"), desktop);
  }
  if (!spec.keyboardLayout.isEmpty())
    rdp.insert(QStringLiteral("keyboard_layout"), spec.keyboardLayout);
  QJsonObject grant{
      {QStringLiteral("version"), 1},
      {QStringLiteral("grant_id"), QUuid::createUuid().toString(QUuid::WithoutBraces)},
      {QStringLiteral("run_id"), runId},
      {QStringLiteral("task_id"), QStringLiteral("task-1")},
      {QStringLiteral("issued_at"),
       now.addSecs(std::min(-1, spec.lifetimeSeconds - 10)).toString(Qt::ISODate)},
      {QStringLiteral("expires_at"), now.addSecs(spec.lifetimeSeconds).toString(Qt::ISODate)},
      {QStringLiteral("vm"),
       QJsonObject{{QStringLiteral("uuid"), uuid},
                   {QStringLiteral("name"), QStringLiteral("demo-vm")},
                   {QStringLiteral("libvirt_uri"), QStringLiteral("test://") + node.fileName()}}},
      {QStringLiteral("rdp"), rdp},
      {QStringLiteral("panel"), QJsonObject{{QStringLiteral("title"), QStringLiteral("Console test")},
                                            {QStringLiteral("username"), QStringLiteral("op")}}},
      {QStringLiteral("mcp"), QJsonObject{{QStringLiteral("server"), QStringLiteral("guest-console")},
                                          {QStringLiteral("tool"), QStringLiteral("perform_action")}}}};
  if (!spec.lockConfirmation.isEmpty())
    grant.insert(QStringLiteral("lock"),
                 QJsonObject{{QStringLiteral("confirmation"), spec.lockConfirmation}});
  if (!spec.action.isEmpty())
    grant.insert(QStringLiteral("action"), spec.action);
  if (!spec.capture.isEmpty())
    grant.insert(QStringLiteral("capture"), spec.capture);
  grantPath = dir.filePath(QStringLiteral("grant.json"));
  QFile f(grantPath);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
    return {};
  const QByteArray bytes = QJsonDocument(grant).toJson(QJsonDocument::Compact);
  if (f.write(bytes) != bytes.size())
    return {};
  f.close();
  QFile::remove(grantPath + QStringLiteral(".sig"));
  if (spec.signGrant) {
    const Outcome<QByteArray> signature = tools::GrantSigner::sign(bytes, m_issuerPrivatePem);
    QFile sig(grantPath + QStringLiteral(".sig"));
    if (!signature.ok() || !sig.open(QIODevice::WriteOnly) ||
        sig.write(tools::GrantSigner::detached(signature.value())) < 0)
      return {};
  }
  return grantPath;
}

bool ConsoleRig::prepare(const QStringList& guestArgs) {
  if (!startGuest(guestArgs)) {
    failure = QStringLiteral("the test guest did not start");
    return false;
  }
  if (writeGrant().isEmpty()) {
    failure = QStringLiteral("the grant could not be written");
    return false;
  }
  return true;
}

bool ConsoleRig::openSession(Reach reach, const QStringList& guestArgs) {
  if (!prepare(guestArgs))
    return false;
  if (const Status opened = openConsole(); !opened.ok()) {
    failure = QStringLiteral("open: ") + opened.failure().toString();
    return false;
  }
  if (reach == Reach::Opened)
    return true;
  if (!connectGuest()) {
    failure = QStringLiteral("no guest session after the credentials");
    return false;
  }
  if (reach == Reach::Panel && !connectPanel()) {
    failure = QStringLiteral("the panel got no welcome");
    return false;
  }
  return true;
}

gc::Status ConsoleRig::openConsole() {
  events = std::make_unique<LibvirtEventLoop>();
  if (Status s = events->start(); !s.ok())
    return s;
  control = std::make_unique<ControlChannel>(m_consoleRead, m_consoleWrite);
  if (!control->start())
    return Status(Refusal::PrivacyViolation, QStringLiteral("control channel"));
  ConsoleOptions options;
  options.grantPath = grantPath;
  options.stateDir = dir.filePath(QStringLiteral("state"));
  options.ledgerDir = ledgerDir;
  options.policy.issuerPublicKeyPem = issuerPublicPem;
  options.policy.allowUnsigned = spec.allowUnsigned;
  options.runtimeDir = dir.path();
  options.connectTimeoutMs = 15000;
  console = std::make_unique<Console>(options, control.get());
  QObject::connect(console.get(), &Console::finished, [this] { finished = true; });
  if (spec.readWriteLibvirt) {
    Outcome<LibvirtConnection> rw = LibvirtConnection::openReadWrite(
        QStringLiteral("test://") + dir.filePath(QStringLiteral("node.xml")));
    if (!rw.ok())
      return Status(rw.failure());
    console->useConnectionForTest(std::move(rw).value());
  }
  // The pipe is drained whenever the event loop runs.
  auto* notifier = new QSocketNotifier(m_parentRead, QSocketNotifier::Read, console.get());
  QObject::connect(notifier, &QSocketNotifier::activated, [this] { readControl(); });
  return console->open();
}

void ConsoleRig::readControl() {
  char buf[4096];
  for (ssize_t n; (n = ::read(m_parentRead, buf, sizeof buf)) > 0;)
    m_pending.append(buf, n);
  for (qsizetype nl; (nl = m_pending.indexOf('\n')) >= 0;) {
    m_control.append(QJsonDocument::fromJson(m_pending.left(nl)).object());
    m_pending.remove(0, nl + 1);
  }
}

void ConsoleRig::sendControl(const QByteArray& line) {
  const QByteArray bytes = line + '\n';
  QCOMPARE(::write(m_parentWrite, bytes.constData(), size_t(bytes.size())), bytes.size());
}

void ConsoleRig::closeControlInput() {
  ::close(m_parentWrite);
  m_parentWrite = -1;
}

QList<QJsonObject> ConsoleRig::controlEvents(const QString& name) const {
  QList<QJsonObject> out;
  for (const auto& o : m_control)
    if (o.value(QStringLiteral("event")).toString() == name)
      out.append(o);
  return out;
}

bool ConsoleRig::waitControl(const QString& name, int count, int timeoutMs) {
  QDeadlineTimer deadline(timeoutMs);
  while (controlEvents(name).size() < count && !deadline.hasExpired()) {
    readControl();
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
  }
  return controlEvents(name).size() >= count;
}

bool ConsoleRig::waitPhase(const QString& phase, int timeoutMs) {
  QDeadlineTimer deadline(timeoutMs);
  auto seen = [&] {
    for (const auto& o : controlEvents(QStringLiteral("phase")))
      if (o.value(QStringLiteral("phase")).toString() == phase)
        return true;
    return false;
  };
  while (!seen() && !deadline.hasExpired()) {
    readControl();
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
  }
  return seen();
}

bool ConsoleRig::connectGuest() {
  if (!waitControl(QStringLiteral("credentials_required")))
    return false;
  sendControl(QByteArrayLiteral("{\"cmd\":\"credentials\",\"username\":\"op\",\"password\":\"") +
              spec.password.toUtf8() + QByteArrayLiteral("\",\"domain\":\"\"}"));
  QSignalSpy connected(console.get(), &Console::rdpConnected);
  return connected.wait(20000);
}

bool ConsoleRig::connectPanel() {
  const QJsonObject ready = controlEvents(QStringLiteral("ready")).value(0);
  const QJsonObject p = ready.value(QStringLiteral("panel")).toObject();
  QSignalSpy opened(&panel, &QWebSocket::connected);
  panel.open(QUrl(QStringLiteral("ws://127.0.0.1:%1").arg(p.value(QStringLiteral("port")).toInt())));
  if (!opened.wait(5000))
    return false;
  panel.sendTextMessage(
      QStringLiteral("{\"type\":\"hello\",\"run\":\"%1\",\"task\":\"task-1\",\"capability\":\"%2\","
                     "\"client\":{\"kind\":\"test\",\"version\":\"1\"}}")
          .arg(runId, p.value(QStringLiteral("capability")).toString()));
  QDeadlineTimer deadline(10000);
  while (panelMessages(QStringLiteral("welcome")).isEmpty() && !deadline.hasExpired())
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
  return !panelMessages(QStringLiteral("welcome")).isEmpty();
}

QList<QJsonObject> ConsoleRig::panelMessages(const QString& type) const {
  QList<QJsonObject> out;
  for (const auto& o : panelReceived)
    if (o.value(QStringLiteral("type")).toString() == type)
      out.append(o);
  return out;
}

QString evidenceFile(const ConsoleRig& rig) {
  QDirIterator it(rig.dir.filePath(QStringLiteral("state/evidence")), {QStringLiteral("*.jsonl")});
  return it.hasNext() ? it.next() : QString();
}

QList<QJsonObject> evidenceEntries(const ConsoleRig& rig, const QString& event) {
  QList<QJsonObject> out;
  QFile f(evidenceFile(rig));
  if (!f.open(QIODevice::ReadOnly))
    return out;
  for (const QByteArray& line : f.readAll().split('\n')) {
    const QJsonObject o = QJsonDocument::fromJson(line).object();
    if (o.value(QStringLiteral("event")).toString() == event)
      out.append(o);
  }
  return out;
}
