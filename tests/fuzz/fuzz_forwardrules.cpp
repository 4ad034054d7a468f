// ForwardRuleParser: domain XML as libvirt reports it (hostile or hand-written), and a
// QEMU option string with hostfwd=… items. Only crashes and sanitizer findings count, plus:
// rules reaching guest port 3389 are a subset of all rules.
#include "vm/ForwardRuleParser.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const QString text = QString::fromUtf8(reinterpret_cast<const char*>(data), qsizetype(size));
  const auto rdp = gc::ForwardRuleParser::parse(text, 3389);
  const auto all = gc::ForwardRuleParser::parseAll(text);
  if (rdp.ok() != all.ok())
    std::abort();
  if (rdp.ok()) {
    for (const gc::ForwardRule& rule : rdp.value())
      if (!all->contains(rule))
        std::abort();
  }
  const auto arg = gc::ForwardRuleParser::parseQemuArg(text);
  (void)arg.ok();
  return 0;
}
