// Receipt: the run-bound record of the one action (DESIGN.md §8). Issued exactly once per
// console, by ActionService only; written to the evidence log and returned to the MCP
// caller. A candidate's label is carried verbatim as data, never interpreted.
//
// Thread: a value type; use from any thread.
#pragma once

#include "common/Refusal.h"

#include <QDateTime>
#include <QJsonObject>
#include <QSize>
#include <QString>

#include <optional>

namespace gc {

struct Receipt {
  enum class Result { Executed, Failed };

  QString grantDigest;
  QString runId;
  QString taskId;
  QString vmUuid;
  QString vmName;
  QString mcpServer;
  QString mcpTool;
  bool hasCandidate = false;
  QString candidateId;    // when hasCandidate
  QString candidateLabel; // when hasCandidate, verbatim
  QString action;         // ActionSpec::canonical()
  QJsonObject actionJson; // ActionSpec::toJson()
  QString eventId;        // a fresh UUID
  Result result = Result::Failed;
  std::optional<Failure> failure; // why the send failed (Result::Failed only)
  int eventsSent = 0;
  QSize desktop;           // the session's desktop when the action ran (its frame's size)
  QDateTime time;          // UTC, when the send finished
  QByteArray evidenceHead; // evidence head hash after the receipt line was written
  // How the guest confirmed the setup's input at the lock (LockBarrier::confirmation()).
  QJsonObject lockConfirmation;

  static QString resultName(Result result);
  // Every field but evidence_head: the body written into the evidence log.
  QJsonObject body() const;
  // body() plus "evidence_head": what the caller and the control channel receive.
  QJsonObject toJson() const;
};

} // namespace gc
