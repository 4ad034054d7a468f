// Reads the TCP forwards of a domain from its XML text, in both forms libvirt/QEMU accept:
//   <interface><portForward proto='tcp' address=… dev=…><range start=… end=… to=…/></portForward>
//   <qemu:commandline><qemu:arg value='…hostfwd=tcp:ADDR:HOSTPORT-:GUESTPORT…'/>
// Pure function on text (no libvirt), so hostile and hand-written XML can be tested directly.
// Fails closed: XML it cannot read with certainty (DTDs, entities, oversize, deep nesting,
// malformed numbers, a hostfwd it cannot parse) is a failure, never "no rules".
// Thread-safe (no state).
#pragma once

#include "common/Outcome.h"
#include "vm/ForwardRule.h"

#include <QList>
#include <QString>

namespace gc {

class ForwardRuleParser {
public:
  static constexpr qsizetype kMaxXmlChars = 4 * 1024 * 1024;
  static constexpr int kMaxDepth = 64;

  // Every TCP forward whose guest side reaches guestPort. Failure code: RDP_RULE_AMBIGUOUS
  // (the forwards cannot be determined).
  static Outcome<QList<ForwardRule>> parse(const QString& domainXml, quint16 guestPort);
  // Every TCP forward, whatever guest port it reaches (for host-port conflict checks).
  static Outcome<QList<ForwardRule>> parseAll(const QString& domainXml);
  // One hostfwd value as QEMU's slirp reads it: [tcp|udp]:[hostaddr]:hostport-[guestaddr]:guestport.
  // Returns an empty list for a UDP forward.
  static Outcome<QList<ForwardRule>> parseHostFwd(const QString& spec);
  // Every hostfwd in one qemu:arg value (an option list such as "user,id=n,hostfwd=…,hostfwd=…").
  static Outcome<QList<ForwardRule>> parseQemuArg(const QString& value);
};

} // namespace gc
