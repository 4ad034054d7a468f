// StrictJson::parseObject: the gate for every untrusted JSON text. Besides crashes and
// sanitizer findings, checks that the structural check and the full parse agree.
#include "common/StrictJson.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const QByteArray bytes(reinterpret_cast<const char*>(data), qsizetype(size));
  constexpr qsizetype kMaxBytes = 64 * 1024;
  const auto object = gc::StrictJson::parseObject(bytes, kMaxBytes, 8);
  const auto valid = gc::StrictJson::validate(bytes, kMaxBytes, 8);
  if (object.ok() && !valid.ok())
    std::abort(); // parseObject accepted what its own structural check refuses
  return 0;
}
