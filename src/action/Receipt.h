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
  QJsonObject actionJson; // ActionSpec::redactedJson(): no text, its length and keyed hash
  QString dialect;        // "anthropic", "openai", "osworld", "ui_tars"; empty: the canonical form
  QJsonObject original;   // the dialect's arguments, canonical JSON, text redacted likewise
  QString eventId;        // a fresh UUID
  Result result = Result::Failed;
  std::optional<Failure> failure; // why the send failed (Result::Failed only)
  int eventsSent = 0;
  QSize desktop; // the session's desktop when the action ran (its frame's size)
  // Where the action's coordinates came from and went: the capture's space (or
  // UI-TARS' normalised one), the desktop, and each point's mapping (CoordinateMapping).
  QJsonObject coordinateSpace;
  QJsonObject mappedTo;
  QJsonObject mapping;
  QDateTime time; // UTC, when the send finished (and the guest confirmed, or did not)
  // What the release after a failed or interrupted send did.
  struct Release {
    bool attempted = false;
    bool ok = false;
    int keys = 0;
    int buttons = 0;
    std::optional<Failure> failure;
  } release;
  // The reader's graceful finish after the last input: the guest read everything and closed.
  enum class Confirmation { NotAttempted, Confirmed, Unconfirmed };
  Confirmation confirmation = Confirmation::NotAttempted;
  QDateTime confirmedAt;   // Confirmed only
  qint64 confirmMs = -1;   // how long the finish took, when attempted
  QByteArray evidenceHead; // evidence head hash after the receipt line was written
  // How the guest confirmed the setup's input at the lock (LockBarrier::confirmation()).
  QJsonObject lockConfirmation;

  static QString resultName(Result result);
  static QString confirmationName(Confirmation c);
  // Every field but evidence_head: the body written into the evidence log.
  QJsonObject body() const;
  // body() plus "evidence_head": what the caller and the control channel receive.
  QJsonObject toJson() const;
};

} // namespace gc
