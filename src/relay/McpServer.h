// McpServer: the MCP side of `guest-console mcp` (spec 2025-11-25, tools only). Handles
// initialize, ping, tools/list, tools/call and notifications; every tool call is relayed to
// the console through a ConsoleLink, which decides. Tool failures come back as isError
// results with structuredContent {code, message}; malformed messages as JSON-RPC errors.
//
// The served name and the action tool's name are the ones the console reports from the
// grant (mcp.server / mcp.tool). As defence in depth the relay itself also refuses a second
// perform_action of its session (ALREADY_ACTED) without asking the console.
//
// Thread: one instance per relay process, used from one thread.
#pragma once

#include "relay/ConsoleLink.h"
#include "relay/McpJsonRpc.h"

#include <QJsonArray>
#include <QLatin1StringView>
#include <QStringList>

namespace gc {

class McpServer {
public:
  static constexpr QLatin1StringView kProtocolVersion{"2025-11-25"};

  struct Identity {
    QString serverName;       // the grant's mcp.server
    QString serverVersion;    // the application's version
    QString actionTool;       // the grant's mcp.tool (always "perform_action" once bound)
    QStringList candidateIds; // the grant's candidates; empty: a free action
  };

  McpServer(Identity identity, ConsoleLink* console);

  // One line from the client (without its newline). Returns the lines to write back:
  // empty for notifications and responses.
  QByteArray handleLine(const QByteArray& line);

  // The tools/list entries, with input and output JSON Schemas.
  static QJsonArray toolDefinitions(const Identity& identity);

private:
  QByteArray handleRequest(const McpJsonRpc::Message& request);
  QByteArray callTool(const QJsonValue& id, const QJsonObject& params);
  static QJsonObject toolResult(const QJsonObject& structured);
  static QJsonObject toolError(const Failure& failure, const QJsonObject& receipt = {});

  Identity m_identity;
  ConsoleLink* m_console;
  McpJsonRpc m_rpc;
  bool m_initialized = false;
  bool m_actionRelayed = false;
};

} // namespace gc
