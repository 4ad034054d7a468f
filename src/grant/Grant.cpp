#include "grant/Grant.h"

namespace gc {

const Candidate* Grant::candidate(QStringView id) const {
  for (const Candidate& c : candidates) {
    if (c.id == id)
      return &c;
  }
  return nullptr;
}

QString Grant::certSha256Display() const {
  return QString::fromLatin1(rdp.certSha256.toHex(':'));
}

} // namespace gc
