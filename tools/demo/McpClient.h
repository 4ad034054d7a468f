// McpClient: the demo's stand-in for a model host. It speaks MCP's JSON-RPC 2.0 over the
// stdio of `guest-console mcp --run RUN` (one message per line, docs/mcp.md): initialize,
// notifications/initialized, tools/call. Requests get fresh integer ids (a replayed id would
// be refused); responses are kept by id.
//
// Thread: the main thread.
#pragma once

#include <QHash>
#include <QJsonObject>
#include <QObject>

#include <optional>

namespace gc::tools {

class ChildProcess;

class McpClient : public QObject {
  Q_OBJECT
public:
  static constexpr const char* kProtocolVersion = "2025-11-25";

  // `relay` is the running `guest-console mcp` process; not owned.
  explicit McpClient(ChildProcess* relay, QObject* parent = nullptr);

  // Sends a request and returns its id.
  qint64 request(const QString& method, const QJsonObject& params);
  void notify(const QString& method);
  qint64 initialize();
  qint64 callTool(const QString& name, const QJsonObject& arguments = {});

  // The whole response object ({"jsonrpc","id","result"|"error"}) once it came.
  std::optional<QJsonObject> response(qint64 id) const;
  // Waits for it (EventWait); empty when the relay ended or the time ran out.
  std::optional<QJsonObject> waitForResponse(qint64 id, int timeoutMs);

private:
  void onLine(const QJsonObject& line);

  ChildProcess* m_relay;
  qint64 m_nextId = 1;
  QHash<qint64, QJsonObject> m_responses;
};

} // namespace gc::tools
