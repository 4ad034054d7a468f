#include "session/ControlChannel.h"

#include "privacy/SecureZero.h"
#include "session/SecretJson.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QSocketNotifier>

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace gc {

Q_LOGGING_CATEGORY(lcControl, "gc.control")

ControlChannel::ControlChannel(int inFd, int outFd, QObject* parent)
    : QObject(parent), m_inFd(inFd), m_outFd(outFd) {}

ControlChannel::~ControlChannel() {
  m_buffer.clear();
}

bool ControlChannel::start() {
  Outcome<SecureBuffer> buffer = SecureBuffer::allocate(kMaxLineBytes);
  if (!buffer.ok()) {
    qCWarning(lcControl) << buffer.failure().toString();
    return false;
  }
  m_buffer = std::move(buffer).value();
  m_notifier = new QSocketNotifier(m_inFd, QSocketNotifier::Read, this);
  connect(m_notifier, &QSocketNotifier::activated, this, &ControlChannel::onReadable);
  return true;
}

void ControlChannel::onReadable() {
  if (m_eof)
    return;
  const std::size_t room = m_buffer.capacity() - m_buffer.size();
  const ssize_t n = ::read(m_inFd, m_buffer.data() + m_buffer.size(), room);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return;
  if (n <= 0) {
    m_eof = true;
    m_notifier->setEnabled(false);
    m_buffer.clear();
    emit parentGone();
    return;
  }
  if (!m_buffer.resize(m_buffer.size() + std::size_t(n)))
    return;

  // Take every complete line out of the buffer, then slide the rest to the front.
  std::size_t start = 0;
  for (;;) {
    const char* base = m_buffer.constData();
    const void* nl = std::memchr(base + start, '\n', m_buffer.size() - start);
    if (!nl)
      break;
    const std::size_t end = std::size_t(static_cast<const char*>(nl) - base);
    if (m_discarding)
      m_discarding = false;
    else
      processLine(QByteArrayView(base + start, qsizetype(end - start)));
    start = end + 1;
  }
  const std::size_t rest = m_buffer.size() - start;
  std::memmove(m_buffer.data(), m_buffer.data() + start, rest);
  secureZero(m_buffer.data() + rest, m_buffer.capacity() - rest);
  (void)m_buffer.resize(rest);

  if (m_buffer.size() == m_buffer.capacity()) { // a line longer than the bound
    m_buffer.clear();
    if (!m_discarding) {
      m_discarding = true;
      sendError(Refusal::ProtocolOversize, QStringLiteral("control line over %1 bytes").arg(kMaxLineBytes));
      emit refused(Refusal::ProtocolOversize, QStringLiteral("control line too long"));
    }
  }
}

void ControlChannel::processLine(QByteArrayView line) {
  while (!line.isEmpty() && (line.back() == '\r' || line.back() == ' '))
    line.chop(1);
  if (line.isEmpty())
    return;
  Outcome<SecretJson::Members> parsed = SecretJson::parseFlatStrings(line, qsizetype(kMaxLineBytes));
  if (!parsed.ok()) {
    sendError(parsed.code(), QStringLiteral("control line refused"));
    emit refused(parsed.code(), parsed.failure().message);
    return;
  }
  SecretJson::Members& m = parsed.value();
  const auto cmdIt = m.find(QStringLiteral("cmd"));
  const QByteArrayView cmd = cmdIt == m.end() ? QByteArrayView() : cmdIt->second.view();
  auto only = [&m](std::initializer_list<const char*> allowed) {
    for (const auto& [key, value] : m) {
      bool ok = false;
      for (const char* a : allowed)
        ok = ok || key == QLatin1String(a);
      if (!ok)
        return false;
    }
    return true;
  };

  if (cmd == "credentials" && only({"cmd", "username", "password", "domain"}) &&
      m.count(QStringLiteral("password"))) {
    Credentials creds;
    auto take = [&m](const char* key, SecureBuffer& into) {
      auto it = m.find(QString::fromLatin1(key));
      if (it != m.end())
        into = std::move(it->second);
    };
    take("username", creds.username);
    take("password", creds.password);
    take("domain", creds.domain);
    emit credentialsReceived(creds);
    return;
  }
  if (cmd == "close" && only({"cmd", "reason"})) {
    const auto reasonIt = m.find(QStringLiteral("reason"));
    if (reasonIt == m.end())
      return emit closeRequested(Refusal::OperatorClose);
    // Only the reasons a parent can know; anything else would rewrite why the run ended.
    const std::optional<Refusal> reason = refusalFromName(QString::fromUtf8(reasonIt->second.view()));
    if (reason == Refusal::OperatorClose || reason == Refusal::AuthCancelled ||
        reason == Refusal::WindowReload)
      return emit closeRequested(*reason);
    sendError(Refusal::ProtocolMalformed, QStringLiteral("close: unknown reason"));
    emit refused(Refusal::ProtocolMalformed, QStringLiteral("close: unknown reason"));
    return;
  }
  if (only({"cmd"})) {
    if (cmd == "lock")
      return emit lockRequested();
    if (cmd == "panic")
      return emit panicRequested();
  }
  sendError(Refusal::ProtocolUnknownType, QStringLiteral("unknown control command"));
  emit refused(Refusal::ProtocolUnknownType, QStringLiteral("unknown control command"));
}

void ControlChannel::send(const control::Event& message) {
  const QString& event = message.name;
  const QJsonObject& fields = message.fields;
  QByteArray line = QByteArrayLiteral("{\"event\":") +
                    QJsonDocument(QJsonArray{event}).toJson(QJsonDocument::Compact).mid(1).chopped(1);
  const QByteArray rest = QJsonDocument(fields).toJson(QJsonDocument::Compact);
  if (rest.size() > 2)
    line += ',' + rest.mid(1, rest.size() - 2);
  line += "}\n";
  const char* p = line.constData();
  qsizetype left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(m_outFd, p, std::size_t(left));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return; // the parent is gone; stdin EOF will tell us
    p += n;
    left -= n;
  }
}

} // namespace gc
