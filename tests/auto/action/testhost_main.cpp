// gc-action-testhost: the console's action side without RDP, for the MCP SDK test. Hosts
// ActionService + ActionSocketServer over a real run directory, a real phase controller,
// input gate, lock barrier and evidence log, a synthetic frame and a recording sink.
//
//   gc-action-testhost --runtime DIR --run RUN [--candidates] [--tool NAME] [--server NAME]
//                      [--fail-send N]
// stdout (JSON lines): {"event":"ready",...}, {"event":"phase",...}, {"event":"input",...}
// per event that reaches the "guest", {"event":"receipt",...}, {"event":"error",...}.
// stdin (JSON lines): {"cmd":"lock"} (the operator locks); EOF ends the host.
#include "ActionTestSupport.h"
#include "action/ActionService.h"
#include "action/ActionSocketServer.h"
#include "audit/EvidenceLog.h"
#include "privacy/RunDirectory.h"
#include "session/InputGate.h"
#include "session/LockBarrier.h"
#include "session/PhaseController.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QJsonDocument>
#include <QSocketNotifier>

#include <cstdio>
#include <unistd.h>

using namespace gc;

namespace {

void emitLine(const QString& event, QJsonObject fields) {
  QJsonObject line{{QStringLiteral("event"), event}};
  for (auto it = fields.begin(); it != fields.end(); ++it)
    line.insert(it.key(), it.value());
  const QByteArray bytes = QJsonDocument(line).toJson(QJsonDocument::Compact) + '\n';
  std::fwrite(bytes.constData(), 1, size_t(bytes.size()), stdout);
  std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  QCommandLineParser parser;
  const QCommandLineOption runtime(QStringLiteral("runtime"), QStringLiteral("runtime dir"),
                                   QStringLiteral("DIR"));
  const QCommandLineOption run(QStringLiteral("run"), QStringLiteral("run id"), QStringLiteral("RUN"));
  const QCommandLineOption candidates(QStringLiteral("candidates"), QStringLiteral("grant lists candidates"));
  const QCommandLineOption tool(QStringLiteral("tool"), QStringLiteral("grant's mcp.tool"),
                                QStringLiteral("NAME"), QStringLiteral("perform_action"));
  const QCommandLineOption server(QStringLiteral("server"), QStringLiteral("grant's mcp.server"),
                                  QStringLiteral("NAME"), QStringLiteral("guest-console-test"));
  const QCommandLineOption failSend(QStringLiteral("fail-send"),
                                    QStringLiteral("fail the Nth send (0-based)"), QStringLiteral("N"));
  parser.addOptions({runtime, run, candidates, tool, server, failSend});
  parser.process(app);

  test::GrantOptions options;
  options.runId = parser.value(run);
  options.candidates = parser.isSet(candidates);
  options.tool = parser.value(tool);
  options.server = parser.value(server);
  const Grant grant = test::makeGrant(options);

  RunDirectory runDir;
  if (Status s = runDir.create(parser.value(runtime), grant.runId, QString::fromLatin1(grant.digestHex));
      !s.ok()) {
    emitLine(QStringLiteral("error"), {{QStringLiteral("code"), refusalName(s.code())},
                                       {QStringLiteral("message"), s.failure().message}});
    return 1;
  }
  EvidenceLog evidence;
  if (Status s = evidence.open(QDir(parser.value(runtime)).filePath(QStringLiteral("evidence")), grant.runId);
      !s.ok()) {
    emitLine(QStringLiteral("error"), {{QStringLiteral("code"), refusalName(s.code())},
                                       {QStringLiteral("message"), s.failure().message}});
    return 1;
  }

  PhaseController phases;
  test::RecordingSink sink;
  if (parser.isSet(failSend)) {
    sink.mode = test::RecordingSink::Mode::FailAt;
    sink.failAt = parser.value(failSend).toInt();
  }
  sink.onEvent = [](const InputEvent& e) { emitLine(QStringLiteral("input"), test::eventJson(e)); };
  InputGate gate(&phases, &sink);
  const QImage frame = test::makeFrame();
  gate.setDesktopSize(frame.size());
  LockBarrier barrier(&phases, &gate);
  ActionService service(grant, {grant.vm.uuid, grant.vm.name}, &phases, &barrier, &evidence, &sink,
                        [&frame] { return frame; });
  ActionSocketServer socketServer(&service);

  QObject::connect(
      &phases, &PhaseController::phaseChanged, [&evidence](Phase from, Phase to, const QString& why) {
        (void)evidence.append(QStringLiteral("phase"), {{QStringLiteral("from"), phaseName(from)},
                                                        {QStringLiteral("to"), phaseName(to)},
                                                        {QStringLiteral("reason"), why}});
        emitLine(QStringLiteral("phase"), {{QStringLiteral("from"), phaseName(from)},
                                           {QStringLiteral("phase"), phaseName(to)},
                                           {QStringLiteral("reason"), why}});
      });
  QObject::connect(&service, &ActionService::receiptIssued,
                   [](const QJsonObject& receipt) { emitLine(QStringLiteral("receipt"), receipt); });

  if (!socketServer.listen(runDir.mcpSocketPath())) {
    emitLine(QStringLiteral("error"), {{QStringLiteral("code"), QStringLiteral("INTERNAL")},
                                       {QStringLiteral("message"), socketServer.errorString()}});
    return 1;
  }

  QByteArray pending;
  QSocketNotifier stdinNotifier(0, QSocketNotifier::Read);
  QObject::connect(&stdinNotifier, &QSocketNotifier::activated, [&] {
    char chunk[4096];
    const ssize_t n = ::read(0, chunk, sizeof(chunk));
    if (n <= 0) {
      stdinNotifier.setEnabled(false);
      QCoreApplication::quit();
      return;
    }
    pending.append(chunk, n);
    qsizetype newline;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const QJsonObject command = QJsonDocument::fromJson(pending.left(newline)).object();
      pending.remove(0, newline + 1);
      if (command.value(QStringLiteral("cmd")).toString() == u"lock") {
        const Status locked = barrier.requestLock(QStringLiteral("panel"));
        if (!locked.ok())
          emitLine(QStringLiteral("error"), {{QStringLiteral("code"), refusalName(locked.code())},
                                             {QStringLiteral("message"), locked.failure().message}});
      }
    }
  });

  emitLine(QStringLiteral("ready"), {{QStringLiteral("run"), grant.runId},
                                     {QStringLiteral("socket"), runDir.mcpSocketPath()},
                                     {QStringLiteral("evidence"), evidence.path()},
                                     {QStringLiteral("grant_digest"), QString::fromLatin1(grant.digestHex)}});
  const int rc = app.exec();
  socketServer.stop();
  evidence.close();
  const EvidenceLog::Verification v = EvidenceLog::verifyFile(evidence.path());
  emitLine(QStringLiteral("exit"),
           {{QStringLiteral("evidence_ok"), v.ok}, {QStringLiteral("lines"), int(v.lines)}});
  return rc;
}
