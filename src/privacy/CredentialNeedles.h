// CredentialNeedles: every form of the operator's password that the RDP login leaves in the
// process, held (locked, dump-excluded) only until the post-login scrub has overwritten the
// stale copies (ResidueScrubber), then wiped.
//
// Why the derived forms: FreeRDP 3.10's NLA runs NTLMv2 in winpr, which derives from the
// password the NT hash (MD4 of the UTF-16LE password; winpr/libwinpr/utils/ntlm.c NTOWFv1W,
// on the worker's stack in NTOWFv2W, never zeroed) and the NTLMv2 key (NTOWFv2 = HMAC-MD5
// keyed with the NT hash over UTF-16LE(UPPER(user)) + UTF-16LE(domain); kept in
// NTLM_CONTEXT::NtlmV2Hash, freed without zeroing; sspi/NTLM/ntlm_compute.c
// ntlm_compute_ntlm_v2_hash). Either one logs in as the operator (pass-the-hash), so they are
// as secret as the password; nobody holds a pointer to them, so they are scrubbed by value.
// The session keys NTLM derives further depend on the server's challenge too and die with
// the NLA context; they are not derivable here.
//
// Thread affinity: none; a value owned by one thread at a time (built on the main thread,
// scrubbed on the RDP worker).
#pragma once

#include "privacy/Credentials.h"
#include "privacy/ResidueScrubber.h"
#include "privacy/SecureBuffer.h"

#include <QByteArrayView>

#include <array>

namespace gc {

class CredentialNeedles {
public:
  // Index of each form in scrub()'s ScrubReport::copiesByNeedle, and its evidence name.
  enum Form { PasswordUtf8, PasswordUtf16le, NtHash, Ntowfv2, FormCount };
  static constexpr std::array<const char*, FormCount> kFormNames = {"password_utf8", "password_utf16le",
                                                                    "nt_hash", "ntowfv2"};

  CredentialNeedles() = default;

  // Every form of `credentials.password` (none for an empty password). PRIVACY_VIOLATION when
  // a form cannot be held in locked memory; INTERNAL for invalid UTF-8.
  static Outcome<CredentialNeedles> of(const Credentials& credentials);

  bool isEmpty() const { return m_forms[PasswordUtf8].isEmpty(); }
  const SecureBuffer& form(Form f) const { return m_forms[f]; }

  // Overwrites every stale copy of every form (ResidueScrubber::scrub), then wipes the forms.
  ScrubReport scrubAndWipe();
  void wipe();

  // MD4(UTF-16LE password): the NT hash (RFC 1320; OpenSSL 3 keeps MD4 in its legacy
  // provider, so it is computed here, in locked memory).
  static Outcome<SecureBuffer> ntHashOf(QByteArrayView passwordUtf16le);
  // HMAC-MD5(ntHash, UTF-16LE(UPPER(user)) + UTF-16LE(domain)) as winpr's NTOWFv2FromHashW
  // computes it (upper case per UTF-16 unit).
  static Outcome<SecureBuffer> ntowfv2Of(const SecureBuffer& ntHash, QByteArrayView userUtf8,
                                         QByteArrayView domainUtf8);

private:
  std::array<SecureBuffer, FormCount> m_forms;
};

} // namespace gc
