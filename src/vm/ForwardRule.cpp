#include "vm/ForwardRule.h"

namespace gc {

bool ForwardRule::isLoopbackOnly() const {
  return address == QLatin1String("127.0.0.1") && (device.isEmpty() || device == QLatin1String("lo"));
}

QString ForwardRule::sourceName() const {
  return source == Source::PortForward ? QStringLiteral("portForward") : QStringLiteral("hostfwd");
}

QString ForwardRule::describe() const {
  QString host = address.isEmpty() ? QStringLiteral("*") : address;
  if (address.contains(QLatin1Char(':')))
    host = QLatin1Char('[') + host + QLatin1Char(']');
  QString text = sourceName() + QLatin1Char(' ') + host + QLatin1Char(':') + QString::number(hostPortFirst);
  if (isRange())
    text += QLatin1Char('-') + QString::number(hostPortLast);
  if (!device.isEmpty())
    text += QStringLiteral(" dev ") + device;
  text += QStringLiteral(" -> guest ") + QString::number(guestPortFirst);
  if (isRange())
    text += QLatin1Char('-') + QString::number(guestPortLast());
  return text;
}

} // namespace gc
