// SecretJson::parseFlatStrings: the credentials line, decoded straight into locked memory.
// Accepted input must also pass the structural check it promises to run first.
#include "common/StrictJson.h"
#include "session/SecretJson.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr qsizetype kMaxBytes = 4096;
  const QByteArrayView text(reinterpret_cast<const char*>(data), qsizetype(size));
  const auto members = gc::SecretJson::parseFlatStrings(text, kMaxBytes);
  if (members.ok()) {
    if (!gc::StrictJson::validate(text.toByteArray(), kMaxBytes).ok())
      std::abort();
    for (const auto& [key, value] : members.value())
      if (key.toUtf8().size() > 32 || value.size() > std::size_t(size))
        std::abort(); // keys are bounded; a value cannot decode longer than its input
  }
  return 0;
}
