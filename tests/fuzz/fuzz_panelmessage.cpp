// gc::panel::parse: every text message a panel sends. Only crashes and sanitizer findings
// count; refusals are the expected outcome for almost every input.
#include "bridge/panel/PanelMessage.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const QByteArray text(reinterpret_cast<const char*>(data), qsizetype(size));
  const auto message = gc::panel::parse(text);
  (void)message.ok();
  return 0;
}
