// The shapes of the console's evidence entries (DESIGN.md §10): one function per entry, so
// Console.cpp says when an entry is written and this file says what it holds. Counts, names
// and hashes only: never a payload, a pixel or a secret.
//
// Thread: pure functions; any thread.
#pragma once

#include "common/Outcome.h"
#include "grant/Grant.h"
#include "privacy/ResidueScrubber.h"
#include "readerhost/RdpReader.h"
#include "readerwire/ReaderTypes.h"
#include "vm/VmBinding.h"

#include <QJsonObject>
#include <QMap>
#include <QSize>

#include <optional>

namespace gc::entry {

// {code: count} for every refusal counted.
QJsonObject refusalCounts(const QMap<Refusal, quint64>& counts);
// The redacted guest identity (the ready event, the welcome, "opened"). `security` once
// connected (the negotiated protocol; "tls" = no NLA); empty before.
QJsonObject identity(const Grant& grant, bool unsignedGrantsAllowed,
                     const std::optional<QString>& security = std::nullopt);
// "refused": an open that was refused (with the grant's digest once it was read).
QJsonObject refused(const Failure& failure, const QByteArray& grantDigestHex);
// "opened": the grant, the run and the binding, once the grant is spent.
QJsonObject opened(const Grant& grant, const QJsonObject& identity, const VmBinding& binding,
                   bool unsignedGrantsAllowed);
// "reader": the RDP reader's sandbox and its shared desktop's size.
QJsonObject reader(quint32 sandbox, QSize maxDesktop);
// Counts only: how many copies of the password and of what NTLM derived from it FreeRDP had
// left and the scrub overwrote.
QJsonObject credentialResidue(const ScrubReport& report);
// "connected": the accepted desktop, the negotiated security and the channels.
QJsonObject connected(QSize desktop, const QString& security, const QJsonObject& channels,
                      const ScrubReport& residue);
// "connect_failed": one refused login attempt.
QJsonObject connectFailed(Refusal code, int attempt, const ScrubReport& residue);
// "desktop": what the guest presented against the grant's rdp.desktop, at "connect" or "resize".
QJsonObject desktop(const QString& when, const Grant::Desktop& grant, QSize presented);
// "protocol_violation": the rule the guest broke.
QJsonObject protocolViolation(const ProtocolViolation& violation);
// "guest_sync": only what happened (the answer counts only if it covered the whole area).
QJsonObject guestSync(const Outcome<SyncResult>& sync);
// The lock's confirmation as the receipt and the request_lock reply carry it.
QJsonObject lockConfirmation(const SyncResult& sync, Grant::Lock::Confirmation required);
// "rdp_finish": the reader's graceful finish after the action.
QJsonObject actionFinish(const RdpReader::Finish& finish);
// "cleanup" at close: the run dir and what the teardown zeroed (WipeLedger::toJson()).
QJsonObject cleanup(bool runDirRemoved, const QJsonObject& wipes);

} // namespace gc::entry
