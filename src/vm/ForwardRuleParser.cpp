#include "vm/ForwardRuleParser.h"

#include <QStringList>
#include <QXmlStreamReader>

namespace gc {

namespace {

const QLatin1String kQemuNs("http://libvirt.org/schemas/domain/qemu/1.0");

Failure unreadable(const QString& why) {
  return Failure{Refusal::RdpRuleAmbiguous,
                 QStringLiteral("the domain's forwards cannot be determined: ") + why};
}

// A decimal port 0..65535, digits only (QString::toUInt would accept "+1" and spaces).
bool parsePort(QStringView text, quint16* port) {
  if (text.isEmpty() || text.size() > 5)
    return false;
  uint value = 0;
  for (QChar c : text) {
    if (c < QLatin1Char('0') || c > QLatin1Char('9'))
      return false;
    value = value * 10 + uint(c.unicode() - '0');
  }
  if (value > 65535)
    return false;
  *port = quint16(value);
  return true;
}

bool isIpv4(QStringView text) {
  const auto parts = text.split(QLatin1Char('.'));
  if (parts.size() != 4)
    return false;
  for (QStringView part : parts) {
    quint16 octet = 0;
    if (part.size() > 3 || !parsePort(part, &octet) || octet > 255)
      return false;
  }
  return true;
}

// QEMU option lists escape a literal comma as ",,".
QStringList splitOptionList(const QString& value) {
  QStringList items;
  QString current;
  for (qsizetype i = 0; i < value.size(); ++i) {
    const QChar c = value.at(i);
    if (c == QLatin1Char(',')) {
      if (i + 1 < value.size() && value.at(i + 1) == QLatin1Char(',')) {
        current += c;
        ++i;
        continue;
      }
      items.append(current);
      current.clear();
      continue;
    }
    current += c;
  }
  items.append(current);
  return items;
}

class DomainXmlReader {
public:
  explicit DomainXmlReader(const QString& xml) : m_reader(xml) {}

  Outcome<QList<ForwardRule>> read() {
    QList<QString> stack; // "ns|name" of open elements
    bool sawRoot = false;
    while (!m_reader.atEnd()) {
      switch (m_reader.readNext()) {
      case QXmlStreamReader::DTD:
        return unreadable(QStringLiteral("a DTD is not accepted in domain XML"));
      case QXmlStreamReader::EntityReference:
        return unreadable(QStringLiteral("entity references are not accepted in domain XML"));
      case QXmlStreamReader::StartElement: {
        const QString ns = m_reader.namespaceUri().toString();
        const QString name = m_reader.name().toString();
        if (stack.isEmpty()) {
          if (sawRoot || !ns.isEmpty() || name != QLatin1String("domain"))
            return unreadable(QStringLiteral("the root element is not <domain>"));
          sawRoot = true;
        }
        if (stack.size() >= ForwardRuleParser::kMaxDepth)
          return unreadable(QStringLiteral("elements are nested too deeply"));
        const QString parent = stack.isEmpty() ? QString() : stack.last();
        stack.append(ns + QLatin1Char('|') + name);
        if (ns.isEmpty() && name == QLatin1String("portForward") && parent == QLatin1String("|interface")) {
          if (auto status = readPortForward(); !status)
            return status.failure();
          stack.removeLast(); // readPortForward consumed the end element
        } else if (ns == kQemuNs && name == QLatin1String("arg")) {
          auto rules =
              ForwardRuleParser::parseQemuArg(m_reader.attributes().value(QLatin1String("value")).toString());
          if (!rules)
            return rules.failure();
          m_rules.append(rules.value());
        }
        break;
      }
      case QXmlStreamReader::EndElement:
        if (!stack.isEmpty())
          stack.removeLast();
        break;
      default:
        break;
      }
    }
    if (m_reader.hasError())
      return unreadable(QStringLiteral("malformed XML at line %1: %2")
                            .arg(QString::number(m_reader.lineNumber()), m_reader.errorString()));
    if (!sawRoot)
      return unreadable(QStringLiteral("no <domain> element"));
    return m_rules;
  }

private:
  // At the <portForward> start element; reads up to and including its end element.
  Status readPortForward() {
    const QXmlStreamAttributes attrs = m_reader.attributes();
    // libvirt accepts only "tcp" and "udp"; anything but "udp" is counted as TCP (fail closed).
    const bool udp = attrs.value(QLatin1String("proto")) == QLatin1String("udp");
    const QString address = attrs.value(QLatin1String("address")).toString();
    const QString device = attrs.value(QLatin1String("dev")).toString();
    int depth = 1;
    while (depth > 0 && !m_reader.atEnd()) {
      const auto token = m_reader.readNext();
      if (token == QXmlStreamReader::DTD || token == QXmlStreamReader::EntityReference)
        return unreadable(QStringLiteral("unexpected markup inside <portForward>"));
      if (token == QXmlStreamReader::EndElement) {
        --depth;
        continue;
      }
      if (token != QXmlStreamReader::StartElement)
        continue;
      if (++depth > 4)
        return unreadable(QStringLiteral("elements are nested too deeply in <portForward>"));
      if (depth != 2 || !m_reader.namespaceUri().isEmpty() || m_reader.name() != QLatin1String("range"))
        continue;
      const QXmlStreamAttributes range = m_reader.attributes();
      // An excluded range forwards nothing by itself.
      if (range.value(QLatin1String("exclude")) == QLatin1String("yes"))
        continue;
      ForwardRule rule;
      rule.source = ForwardRule::Source::PortForward;
      rule.address = address;
      rule.device = device;
      if (!parsePort(range.value(QLatin1String("start")), &rule.hostPortFirst))
        return unreadable(QStringLiteral("<range> has no valid start port"));
      rule.hostPortLast = rule.hostPortFirst;
      if (range.hasAttribute(QLatin1String("end")) &&
          (!parsePort(range.value(QLatin1String("end")), &rule.hostPortLast) ||
           rule.hostPortLast < rule.hostPortFirst))
        return unreadable(QStringLiteral("<range> has an invalid end port"));
      // Without to=, each host port reaches the same guest port.
      rule.guestPortFirst = rule.hostPortFirst;
      if (range.hasAttribute(QLatin1String("to")) &&
          !parsePort(range.value(QLatin1String("to")), &rule.guestPortFirst))
        return unreadable(QStringLiteral("<range> has an invalid to port"));
      if (uint(rule.guestPortFirst) + (rule.hostPortLast - rule.hostPortFirst) > 65535)
        return unreadable(QStringLiteral("<range> maps beyond guest port 65535"));
      if (!udp)
        m_rules.append(rule);
    }
    return success();
  }

  QXmlStreamReader m_reader;
  QList<ForwardRule> m_rules;
};

} // namespace

Outcome<QList<ForwardRule>> ForwardRuleParser::parseHostFwd(const QString& spec) {
  const auto bad = [&spec](const char* why) {
    return unreadable(QStringLiteral("hostfwd '%1' %2").arg(spec.left(200), QLatin1String(why)));
  };
  // protocol
  const qsizetype protoEnd = spec.indexOf(QLatin1Char(':'));
  if (protoEnd < 0)
    return bad("has no protocol separator");
  const QStringView proto = QStringView(spec).left(protoEnd);
  bool udp = false;
  if (proto == QLatin1String("udp"))
    udp = true;
  else if (!proto.isEmpty() && proto != QLatin1String("tcp")) // QEMU reads an empty protocol as tcp
    return bad("has an unknown protocol");
  // host address, possibly [bracketed] IPv6
  qsizetype pos = protoEnd + 1;
  QString address;
  if (pos < spec.size() && spec.at(pos) == QLatin1Char('[')) {
    const qsizetype close = spec.indexOf(QLatin1Char(']'), pos);
    if (close < 0 || close + 1 >= spec.size() || spec.at(close + 1) != QLatin1Char(':'))
      return bad("has an unterminated IPv6 address");
    address = spec.mid(pos + 1, close - pos - 1);
    pos = close + 2;
  } else {
    const qsizetype colon = spec.indexOf(QLatin1Char(':'), pos);
    if (colon < 0)
      return bad("has no host port");
    address = spec.mid(pos, colon - pos);
    pos = colon + 1;
    if (!address.isEmpty() && !isIpv4(address))
      return bad("has an invalid host address");
  }
  // host port, then "-"
  const qsizetype dash = spec.indexOf(QLatin1Char('-'), pos);
  if (dash < 0)
    return bad("has no guest part");
  ForwardRule rule;
  rule.source = ForwardRule::Source::HostFwd;
  rule.address = address;
  if (!parsePort(QStringView(spec).mid(pos, dash - pos), &rule.hostPortFirst))
    return bad("has an invalid host port");
  rule.hostPortLast = rule.hostPortFirst;
  // [guestaddr]:guestport — QEMU has no port ranges, so a second '-' makes the guest address invalid.
  const QStringView guest = QStringView(spec).mid(dash + 1);
  const qsizetype guestColon = guest.lastIndexOf(QLatin1Char(':'));
  if (guestColon < 0)
    return bad("has no guest port");
  const QStringView guestAddress = guest.left(guestColon);
  if (!guestAddress.isEmpty() && !isIpv4(guestAddress))
    return bad("has an invalid guest address");
  if (!parsePort(guest.mid(guestColon + 1), &rule.guestPortFirst))
    return bad("has an invalid guest port");
  if (udp)
    return QList<ForwardRule>{};
  return QList<ForwardRule>{rule};
}

Outcome<QList<ForwardRule>> ForwardRuleParser::parseQemuArg(const QString& value) {
  QList<ForwardRule> rules;
  if (!value.contains(QLatin1String("hostfwd")))
    return rules;
  for (const QString& item : splitOptionList(value)) {
    if (!item.contains(QLatin1String("hostfwd")))
      continue;
    const qsizetype eq = item.indexOf(QLatin1Char('='));
    const QStringView key = QStringView(item).left(eq < 0 ? 0 : eq);
    // "hostfwd=…" in -netdev/-nic/-net, or "netdev.ID.hostfwd=…" in -set.
    if (eq < 0 || (key != QLatin1String("hostfwd") && !key.endsWith(QLatin1String(".hostfwd"))))
      return unreadable(QStringLiteral("unrecognised hostfwd syntax in qemu:arg '%1'").arg(value.left(200)));
    auto parsed = parseHostFwd(item.mid(eq + 1));
    if (!parsed)
      return parsed.failure();
    rules.append(parsed.value());
  }
  return rules;
}

Outcome<QList<ForwardRule>> ForwardRuleParser::parseAll(const QString& domainXml) {
  if (domainXml.size() > kMaxXmlChars)
    return unreadable(QStringLiteral("the domain XML is larger than %1 characters").arg(kMaxXmlChars));
  return DomainXmlReader(domainXml).read();
}

Outcome<QList<ForwardRule>> ForwardRuleParser::parse(const QString& domainXml, quint16 guestPort) {
  auto all = parseAll(domainXml);
  if (!all)
    return all.failure();
  QList<ForwardRule> reaching;
  for (const ForwardRule& rule : all.value())
    if (rule.reachesGuestPort(guestPort))
      reaching.append(rule);
  return reaching;
}

} // namespace gc
