#include "relay/McpRelay.h"

#include "privacy/RunDirectory.h"
#include "privacy/SecureBytes.h"
#include "relay/McpServer.h"
#include "relay/RelayConnection.h"
#include "relay/RelayProtocol.h"

#include <QDir>
#include <QRegularExpression>

#include <cerrno>
#include <unistd.h>

#ifndef GC_VERSION
#define GC_VERSION "0"
#endif

namespace gc {
namespace {

bool writeAll(int fd, const QByteArray& bytes) {
  qsizetype done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.constData() + done, size_t(bytes.size() - done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += n;
  }
  return true;
}

int refuse(const McpRelayOptions& options, Refusal code, const QString& message) {
  (void)writeAll(options.errFd,
                 QStringLiteral("guest-console mcp: %1: %2\n").arg(refusalName(code), message).toUtf8());
  return exitStatus(ExitCode::Unavailable);
}

} // namespace

McpRelayOptions::McpRelayOptions() : expectedPeerUid(::geteuid()) {}

QString mcpSocketPath(const QString& runtimeDir, const QString& runId) {
  // The same rule RunDirectory::create applies to the run ids it accepts.
  static const QRegularExpression safe(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"));
  if (!safe.match(runId).hasMatch() || runId.contains(QStringLiteral("..")))
    return QString();
  return QDir(RunDirectory::runsRoot(runtimeDir)).filePath(runId + u'/' + relay::kSocketName);
}

int runMcpRelay(const QString& runtimeDir, const QString& runId) {
  return runMcpRelay(runtimeDir, runId, McpRelayOptions());
}

int runMcpRelay(const QString& runtimeDir, const QString& runId, const McpRelayOptions& options) {
  if (runtimeDir.isEmpty() || !QDir::isAbsolutePath(runtimeDir))
    return refuse(options, Refusal::RunNotFound, QStringLiteral("no runtime directory (XDG_RUNTIME_DIR)"));
  const QString socketPath = mcpSocketPath(runtimeDir, runId);
  if (socketPath.isEmpty())
    return refuse(options, Refusal::RunNotFound, QStringLiteral("the run id is not a safe path component"));

  RelayConnection console;
  console.setCallTimeout(options.callTimeout);
  if (Status s = console.open(socketPath, options.expectedPeerUid, options.connectTimeout); !s.ok())
    return refuse(options, s.code(), s.failure().message);

  McpServer server(McpServer::Identity{console.hello().server, QStringLiteral(GC_VERSION),
                                       console.hello().tool, console.hello().candidateIds},
                   &console);
  QByteArray buffer;
  bool discarding = false; // inside a line longer than any message we accept
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::read(options.inFd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return exitStatus(ExitCode::Ok); // the MCP host closed our stdin: the session is over
    buffer.append(chunk, n);
    qsizetype newline;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const QByteArray line = buffer.left(newline);
      buffer.remove(0, newline + 1);
      if (discarding) {
        discarding = false;
        continue;
      }
      if (line.trimmed().isEmpty())
        continue;
      QByteArray reply = server.handleLine(line);
      const bool written = reply.isEmpty() || writeAll(options.outFd, reply);
      secureWipe(reply); // a capture's reply carries the image (QJsonValue's own copies we cannot reach)
      if (!written)
        return exitStatus(ExitCode::Ok); // nobody reads our answers any more
    }
    if (buffer.size() > McpJsonRpc::kMaxMessageBytes) {
      buffer.clear();
      if (!discarding) {
        discarding = true;
        const QByteArray reply = McpJsonRpc::error(McpJsonRpc::Error{
            McpJsonRpc::InvalidRequest, QStringLiteral("message too large"), QJsonValue::Null});
        if (!writeAll(options.outFd, reply))
          return exitStatus(ExitCode::Ok);
      }
    }
  }
}

} // namespace gc
