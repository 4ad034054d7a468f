#include "privacy/WipeLedger.h"

namespace gc {

void WipeLedger::wiped(const QString& owner, qint64 bytes) {
  m_wiped.insert(owner, m_wiped.value(owner).toInteger() + bytes);
}

void WipeLedger::notWiped(const QString& owner, qint64 bytes, const QString& reason) {
  m_notWiped.insert(owner, QJsonObject{{QStringLiteral("bytes"), bytes}, {QStringLiteral("reason"), reason}});
}

QJsonObject WipeLedger::toJson() const {
  return QJsonObject{{QStringLiteral("buffers_wiped"), complete()},
                     {QStringLiteral("wiped"), m_wiped},
                     {QStringLiteral("not_wiped"), m_notWiped}};
}

} // namespace gc
