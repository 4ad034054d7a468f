#include "console/ConsoleEvidence.h"

#include "grant/KeyboardLayout.h"
#include "privacy/CredentialNeedles.h"
#include "readerwire/SandboxReport.h"

#include <QJsonArray>

namespace gc::entry {

QJsonObject refusalCounts(const QMap<Refusal, quint64>& counts) {
  QJsonObject o;
  for (auto it = counts.begin(); it != counts.end(); ++it)
    o.insert(refusalName(it.key()), qint64(it.value()));
  return o;
}

QJsonObject identity(const Grant& grant, bool unsignedGrantsAllowed, const std::optional<QString>& security) {
  QJsonObject id{{QStringLiteral("vm_name"), grant.vm.name},
                 {QStringLiteral("vm_uuid_prefix"), grant.vm.uuid.left(8)},
                 {QStringLiteral("grant_digest"), QString::fromLatin1(grant.digestHex.left(16))},
                 {QStringLiteral("cert_fingerprint"), grant.certSha256Display().left(23)},
                 {QStringLiteral("cert_pin"), !grant.rdp.unpinned},
                 {QStringLiteral("signed"), grant.signed_},
                 {QStringLiteral("unsigned_grants_allowed"), unsignedGrantsAllowed}};
  if (security) {
    id.insert(QStringLiteral("security"), *security);
    // What the console sent in the Client Core Data (servers do not echo the layout back).
    id.insert(QStringLiteral("keyboard_layout"), KeyboardLayout::toString(grant.rdp.desktop.keyboardLayout));
  }
  return id;
}

QJsonObject refused(const Failure& failure, const QByteArray& grantDigestHex) {
  QJsonObject fields{{QStringLiteral("code"), refusalName(failure.code)},
                     {QStringLiteral("message"), failure.message}};
  if (!grantDigestHex.isEmpty())
    fields.insert(QStringLiteral("grant_digest"), QString::fromLatin1(grantDigestHex));
  return fields;
}

QJsonObject opened(const Grant& grant, const QJsonObject& identity, const VmBinding& binding,
                   bool unsignedGrantsAllowed) {
  return {{QStringLiteral("grant_digest"), QString::fromLatin1(grant.digestHex)},
          {QStringLiteral("grant_id"), grant.grantId},
          {QStringLiteral("run"), grant.runId},
          {QStringLiteral("task"), grant.taskId},
          {QStringLiteral("guest"), identity},
          {QStringLiteral("rule"), binding.ruleSource},
          {QStringLiteral("port"), binding.hostPort},
          {QStringLiteral("signed"), grant.signed_},
          {QStringLiteral("unsigned_grants_allowed"), unsignedGrantsAllowed}};
}

QJsonObject reader(quint32 sandbox, QSize maxDesktop) {
  return {{QStringLiteral("sandbox"), SandboxReport::describe(sandbox)},
          {QStringLiteral("desktop_bytes"), qint64(maxDesktop.width()) * maxDesktop.height() * 4}};
}

QJsonObject credentialResidue(const ScrubReport& r) {
  QJsonObject byForm;
  for (int f = 0; f < CredentialNeedles::FormCount; ++f)
    byForm.insert(QLatin1StringView(CredentialNeedles::kFormNames[std::size_t(f)]),
                  r.copiesByNeedle[std::size_t(f)]);
  return {{QStringLiteral("scanned"), r.ok},
          {QStringLiteral("copies_by_form"), byForm},
          {QStringLiteral("copies_wiped"), r.copiesWiped},
          {QStringLiteral("copies_unwritable"), r.copiesUnwritable},
          {QStringLiteral("needles_too_short"), r.needlesTooShort},
          {QStringLiteral("regions_skipped"), r.regionsSkipped},
          {QStringLiteral("mib_scanned"), double(r.bytesScanned / 1024) / 1024.0},
          {QStringLiteral("ms"), double(r.elapsedUs / 100) / 10.0}};
}

QJsonObject connected(QSize desktop, const QString& security, const QJsonObject& channels,
                      const ScrubReport& residue) {
  return {{QStringLiteral("width"), desktop.width()},
          {QStringLiteral("height"), desktop.height()},
          {QStringLiteral("security"), security},
          {QStringLiteral("channels"), channels},
          {QStringLiteral("credential_residue"), credentialResidue(residue)}};
}

QJsonObject connectFailed(Refusal code, int attempt, const ScrubReport& residue) {
  return {{QStringLiteral("code"), refusalName(code)},
          {QStringLiteral("attempt"), attempt},
          {QStringLiteral("credential_residue"), credentialResidue(residue)}};
}

QJsonObject desktop(const QString& when, const Grant::Desktop& grant, QSize presented) {
  const QSize requested(grant.width, grant.height);
  const bool fromServer = grant.sizeFrom == Grant::Desktop::SizeFrom::Server;
  const bool matches = presented == requested;
  const auto size = [](QSize s) {
    return QJsonObject{{QStringLiteral("width"), s.width()}, {QStringLiteral("height"), s.height()}};
  };
  return {{QStringLiteral("when"), when},
          {QStringLiteral("requested"), size(requested)},
          {QStringLiteral("presented"), size(presented)},
          {QStringLiteral("keyboard_layout"), KeyboardLayout::toString(grant.keyboardLayout)},
          {QStringLiteral("size_from"), Grant::Desktop::sizeFromName(grant.sizeFrom)},
          {QStringLiteral("result"), matches      ? QStringLiteral("requested")
                                     : fromServer ? QStringLiteral("server")
                                                  : refusalName(Refusal::RdpDesktopMismatch)}};
}

QJsonObject protocolViolation(const ProtocolViolation& v) {
  return {{QStringLiteral("code"), refusalName(v.code)},
          {QStringLiteral("pdu"), v.pdu},
          {QStringLiteral("rule"), v.rule}};
}

QJsonObject guestSync(const Outcome<SyncResult>& sync) {
  QJsonObject entry{{QStringLiteral("result"), sync.ok() ? QStringLiteral("ok") : refusalName(sync.code())}};
  if (sync.ok()) {
    entry.insert(QStringLiteral("confirmed_by"), syncConfirmationName(sync->confirmedBy));
    // Each rung: what it did in this sync.
    QJsonObject rungs;
    for (const SyncConfirmation rung :
         {SyncConfirmation::RefreshRect, SyncConfirmation::SuppressOutput, SyncConfirmation::GfxCaps}) {
      const quint8 bit = syncRungBit(rung);
      rungs.insert(syncConfirmationName(rung),
                   !(sync->rungsOffered & bit)                   ? QStringLiteral("not_supported")
                   : sync->answered && sync->confirmedBy == rung ? QStringLiteral("answered")
                   : sync->rungsAsked & bit                      ? QStringLiteral("unanswered")
                   : sync->rungsSkipped & bit                    ? QStringLiteral("skipped_unanswered_before")
                                                                 : QStringLiteral("not_asked"));
    }
    entry.insert(QStringLiteral("rungs"), rungs);
    entry.insert(QStringLiteral("refresh_rect"), rungs.value(QStringLiteral("refresh_rect")));
    if (sync->answered)
      entry.insert(QStringLiteral("answer_ms"), sync->answerMs);
    entry.insert(QStringLiteral("settled"), sync->settled);
    entry.insert(QStringLiteral("ms"), sync->elapsedMs);
  }
  return entry;
}

QJsonObject lockConfirmation(const SyncResult& sync, Grant::Lock::Confirmation required) {
  QJsonArray asked;
  for (const SyncConfirmation rung :
       {SyncConfirmation::RefreshRect, SyncConfirmation::SuppressOutput, SyncConfirmation::GfxCaps}) {
    if (sync.rungsAsked & syncRungBit(rung))
      asked.append(syncConfirmationName(rung));
  }
  QJsonObject confirmation{{QStringLiteral("by"), syncConfirmationName(sync.confirmedBy)},
                           {QStringLiteral("asked"), asked},
                           {QStringLiteral("required"), Grant::Lock::confirmationName(required)},
                           {QStringLiteral("settled"), sync.settled},
                           {QStringLiteral("ms"), sync.elapsedMs}};
  if (sync.answered)
    confirmation.insert(QStringLiteral("answer_ms"), sync.answerMs);
  return confirmation;
}

QJsonObject actionFinish(const RdpReader::Finish& finish) {
  return {{QStringLiteral("guest_closed_after_reading"), finish.confirmed},
          {QStringLiteral("ms"), finish.elapsedMs},
          {QStringLiteral("writes_not_sent"), finish.writesDropped}};
}

QJsonObject cleanup(bool runDirRemoved, const QJsonObject& wipes) {
  return {{QStringLiteral("run_dir_removed"), runDirRemoved},
          {QStringLiteral("buffers_wiped"), wipes.value(QStringLiteral("buffers_wiped"))},
          {QStringLiteral("wiped"), wipes.value(QStringLiteral("wiped"))},
          {QStringLiteral("not_wiped"), wipes.value(QStringLiteral("not_wiped"))}};
}

} // namespace gc::entry
