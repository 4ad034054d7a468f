// `guest-console mcp --run RUN`: the whole subcommand. Connects to the running console's
// socket in the run's private directory, takes the grant's MCP server and tool from it and
// then serves MCP on stdin/stdout (one JSON-RPC message per line) until stdin ends.
//
// Refuses to start — exit status ExitCode::Unavailable (common/ExitCode.h), one line
// "guest-console mcp: CODE: message" on stderr, nothing on stdout — when the run id is not a safe path
// component or no console runs for it (RUN_NOT_FOUND), or the console, its directory or the grant's
// server/tool are not authorized (MCP_NOT_AUTHORIZED).
//
// Thread: runs on the calling thread, blocking; needs no Qt event loop.
#pragma once

#include "common/ExitCode.h"

#include <QString>

#include <chrono>
#include <sys/types.h>

namespace gc {

struct McpRelayOptions {
  int inFd = 0;
  int outFd = 1;
  int errFd = 2;
  uid_t expectedPeerUid; // the console process's uid; our effective uid (tests change it)
  std::chrono::milliseconds connectTimeout{5000};
  std::chrono::milliseconds callTimeout{60000};
  McpRelayOptions();
};

// <runtimeDir>/guest-console/runs/<runId>/mcp.sock, or an empty string for an unsafe run id.
QString mcpSocketPath(const QString& runtimeDir, const QString& runId);

int runMcpRelay(const QString& runtimeDir, const QString& runId);
int runMcpRelay(const QString& runtimeDir, const QString& runId, const McpRelayOptions& options);

} // namespace gc
