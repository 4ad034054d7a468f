// The events of the control channel (console → parent), one builder per event. Their names,
// fields and kinds are resources/protocol/control-channel.json; tst_controlchannel checks
// each builder's output against it, and the extension's protocolSync test checks
// shared/protocol.ts against the same file. Every send site uses a builder, so the wire
// cannot drift from the schema one send() at a time.
//
// Thread: value types and pure functions; any thread.
#pragma once

#include "common/Refusal.h"
#include "session/Phase.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QString>

namespace gc::control {

// One line on stdout: {"event":<name>, …fields}.
struct Event {
  QString name;
  QJsonObject fields;
};

// The panel socket listens; `capabilityHex` is the 64 hex digits of its 256-bit capability.
Event ready(const QString& run, const QString& task, const QString& vm, const QJsonObject& identity,
            quint16 panelPort, const QByteArray& capabilityHex);
// Before each login attempt. `username`/`domain` come from the grant's panel metadata; an
// undefined value leaves the field out.
Event credentialsRequired(const QJsonValue& username, const QJsonValue& domain, int attempt, int maxAttempts);
Event phase(Phase phase, const QString& reason);
// The lock barrier delivered every accepted event up to `upto`.
Event drained(quint64 upto);
// The receipt's own fields (Receipt::toJson, docs/mcp.md).
Event receipt(const QJsonObject& receipt);
// `evidencePath`: the log that recorded a refusal that ends the open ("" leaves it out).
Event error(Refusal code, const QString& message, const QString& evidencePath = {});
// After teardown: the close reason, the evidence log's head hash and its path.
Event closed(Refusal reason, const QString& message, const QByteArray& evidenceHead,
             const QString& evidencePath);

} // namespace gc::control
