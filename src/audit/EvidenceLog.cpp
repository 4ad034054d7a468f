#include "audit/EvidenceLog.h"

#include "common/SystemError.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gc {
namespace {

const QByteArray kGenesis(64, '0');
const QByteArray kHashKey = QByteArrayLiteral(",\"hash\":\"");

QByteArray chainHash(const QByteArray& prev, const QByteArray& body) {
  QCryptographicHash h(QCryptographicHash::Sha256);
  h.addData(prev);
  h.addData(body);
  return h.result().toHex();
}

QByteArray jsonString(const QString& s) {
  // QJsonDocument has no scalar serializer; wrap in an array and strip the brackets.
  QByteArray a = QJsonDocument(QJsonArray{s}).toJson(QJsonDocument::Compact);
  return a.mid(1, a.size() - 2);
}

} // namespace

EvidenceLog::EvidenceLog(QObject* parent) : QObject(parent), m_prev(kGenesis) {}

EvidenceLog::~EvidenceLog() {
  close();
}

Status EvidenceLog::open(const QString& dir, const QString& name) {
  if (m_fd >= 0 || m_syncer.joinable())
    return Status(Refusal::Internal, QStringLiteral("the evidence log is open already"));
  if (name.isEmpty() || name.contains(QLatin1Char('/')) || name.startsWith(QLatin1Char('.')))
    return Status(Refusal::Internal, QStringLiteral("bad evidence name"));
  if (!QDir().mkpath(dir) || ::chmod(QFile::encodeName(dir).constData(), 0700) != 0)
    return Status(Refusal::Internal, QStringLiteral("cannot create the evidence directory"));
  m_path = QDir(dir).filePath(name + QStringLiteral(".jsonl"));
  m_fd = ::open(QFile::encodeName(m_path).constData(),
                O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (m_fd < 0)
    return Status(Refusal::Internal, QStringLiteral("cannot create %1: %2").arg(m_path, errnoText()));
  // A new file: a chain of its own.
  m_prev = kGenesis;
  m_seq = 0;
  m_linesWritten = m_linesSynced = 0;
  m_syncFailed = m_stopping = false;
  m_syncer = std::thread([this] { syncLoop(); });
  return success();
}

void EvidenceLog::syncLoop() {
  std::unique_lock lock(m_syncMutex);
  while (true) {
    m_syncWake.wait(lock, [this] { return m_stopping || m_linesWritten > m_linesSynced; });
    if (m_linesWritten == m_linesSynced)
      return; // stopping, and nothing is left to sync
    const quint64 upto = m_linesWritten;
    lock.unlock();
    const bool ok = ::fsync(m_fd) == 0;
    lock.lock();
    m_syncFailed = m_syncFailed || !ok;
    m_linesSynced = upto;
    m_synced.notify_all();
  }
}

Status EvidenceLog::sync() {
  std::unique_lock lock(m_syncMutex);
  m_synced.wait(lock, [this] { return m_linesSynced >= m_linesWritten; });
  if (m_syncFailed)
    return Status(Refusal::Internal, QStringLiteral("evidence sync failed"));
  return success();
}

Status EvidenceLog::append(const QString& event, const QJsonObject& fields) {
  if (m_fd < 0)
    return Status(Refusal::Internal, QStringLiteral("evidence log is not open"));
  QByteArray line = "{\"seq\":" + QByteArray::number(m_seq + 1) +
                    ",\"time\":" + jsonString(QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)) +
                    ",\"event\":" + jsonString(event);
  for (auto it = fields.begin(); it != fields.end(); ++it) {
    static const QStringList reserved{QStringLiteral("seq"), QStringLiteral("time"), QStringLiteral("event"),
                                      QStringLiteral("prev"), QStringLiteral("hash")};
    if (reserved.contains(it.key()))
      return Status(Refusal::Internal, QStringLiteral("reserved evidence key %1").arg(it.key()));
    QByteArray value = QJsonDocument(QJsonArray{it.value()}).toJson(QJsonDocument::Compact);
    line += ',' + jsonString(it.key()) + ':' + value.mid(1, value.size() - 2);
  }
  line += ",\"prev\":\"" + m_prev + '"';
  const QByteArray hash = chainHash(m_prev, line);
  line += kHashKey + hash + "\"}\n";
  const ssize_t written = ::write(m_fd, line.constData(), static_cast<size_t>(line.size()));
  if (written != line.size())
    return Status(Refusal::Internal, QStringLiteral("evidence write failed"));
  m_prev = hash;
  ++m_seq;
  bool syncFailed = false;
  {
    std::lock_guard lock(m_syncMutex);
    m_linesWritten = m_seq;
    syncFailed = m_syncFailed;
  }
  m_syncWake.notify_one();
  if (syncFailed)
    return Status(Refusal::Internal, QStringLiteral("evidence sync failed"));
  return success();
}

void EvidenceLog::close() {
  if (m_syncer.joinable()) {
    {
      std::lock_guard lock(m_syncMutex);
      m_stopping = true; // the syncer syncs what is left, then ends
    }
    m_syncWake.notify_one();
    m_syncer.join();
  }
  if (m_fd >= 0) {
    ::close(m_fd);
    m_fd = -1;
  }
}

EvidenceLog::Verification EvidenceLog::verifyFile(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) {
    Verification v;
    v.error = QStringLiteral("cannot read %1").arg(path);
    return v;
  }
  return verify(f.readAll());
}

EvidenceLog::Verification EvidenceLog::verify(const QByteArray& contents) {
  Verification v;
  QByteArray prev = kGenesis;
  if (!contents.isEmpty() && !contents.endsWith('\n')) {
    v.error = QStringLiteral("the last line is incomplete");
    return v;
  }
  const QList<QByteArray> lines = contents.split('\n');
  for (qsizetype i = 0; i + 1 < lines.size(); ++i) {
    const QByteArray& line = lines[i];
    const QString where = QStringLiteral("line %1: ").arg(i + 1);
    const qsizetype at = line.lastIndexOf(kHashKey);
    if (at < 0 || !line.endsWith("\"}")) {
      v.error = where + QStringLiteral("no hash");
      return v;
    }
    const QByteArray body = line.left(at);
    const QByteArray claimed = line.mid(at + kHashKey.size(), line.size() - at - kHashKey.size() - 2);
    QJsonParseError err{};
    const QJsonObject obj = QJsonDocument::fromJson(line, &err).object();
    if (err.error != QJsonParseError::NoError) {
      v.error = where + QStringLiteral("not JSON");
      return v;
    }
    if (obj.value(QStringLiteral("seq")).toInteger() != i + 1) {
      v.error = where + QStringLiteral("sequence broken");
      return v;
    }
    if (obj.value(QStringLiteral("prev")).toString().toLatin1() != prev) {
      v.error = where + QStringLiteral("prev does not match the line before");
      return v;
    }
    if (chainHash(prev, body) != claimed) {
      v.error = where + QStringLiteral("hash does not match its content");
      return v;
    }
    prev = claimed;
    v.hashes.append(claimed);
    ++v.lines;
  }
  v.ok = true;
  v.head = prev;
  return v;
}

} // namespace gc
