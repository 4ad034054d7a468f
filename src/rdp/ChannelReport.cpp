#include "rdp/ChannelReport.h"

#include "common/Refusal.h"

#include <QJsonArray>

namespace gc {

namespace {

QString capsVersionName(quint32 version) {
  return version ? QStringLiteral("0x%1").arg(version, 8, 16, QLatin1Char('0')) : QString();
}

} // namespace

// FreeRDP's RDPGFX_CODECID_* values (this file stays free of FreeRDP headers).
QString ChannelReport::codecName(int id) {
  switch (id) {
  case 0x0000:
    return QStringLiteral("uncompressed");
  case 0x0003:
    return QStringLiteral("remotefx");
  case 0x0008:
    return QStringLiteral("clearcodec");
  case 0x0009:
    return QStringLiteral("progressive");
  case 0x000A:
    return QStringLiteral("planar");
  case 0x000B:
    return QStringLiteral("avc420");
  case 0x000C:
    return QStringLiteral("alpha");
  case 0x000D:
    return QStringLiteral("progressive_v2");
  case 0x000E:
    return QStringLiteral("avc444");
  case 0x000F:
    return QStringLiteral("avc444v2");
  default:
    return QStringLiteral("0x%1").arg(id, 4, 16, QLatin1Char('0'));
  }
}

int ChannelReport::Snapshot::refusedTotal() const {
  int total = refusedOverflow;
  for (int n : refused)
    total += n;
  return total;
}

QJsonObject ChannelReport::Snapshot::connectedJson() const {
  return {{QStringLiteral("static_requested"), QJsonArray::fromStringList(staticRequested)},
          {QStringLiteral("static_joined"), QJsonArray::fromStringList(staticJoined)},
          {QStringLiteral("gfx_requested"), staticRequested.contains(QStringLiteral("drdynvc"))},
          {QStringLiteral("gfx_codecs_advertised"), QJsonArray::fromStringList(advertisedCodecs)}};
}

QJsonObject ChannelReport::Snapshot::closedJson() const {
  QJsonObject refusedJson;
  for (auto it = refused.cbegin(); it != refused.cend(); ++it)
    refusedJson.insert(it.key(), it.value());
  QJsonObject o = connectedJson();
  o.insert(QStringLiteral("gfx"), gfxOpened);
  o.insert(QStringLiteral("gfx_caps_version"), capsVersionName(gfxCapsVersion));
  o.insert(QStringLiteral("gfx_codecs_used"), QJsonArray::fromStringList(gfxCodecsUsed));
  o.insert(QStringLiteral("gfx_frames"), qint64(gfxFrames));
  o.insert(QStringLiteral("dynamic_opened"), QJsonArray::fromStringList(dynamicOpened));
  o.insert(QStringLiteral("dynamic_refused"), refusedJson);
  o.insert(QStringLiteral("dynamic_refused_overflow"), refusedOverflow);
  o.insert(QStringLiteral("dynamic_refused_total"), refusedTotal());
  if (refusedTotal() > 0)
    o.insert(QStringLiteral("code"), refusalName(Refusal::RdpChannelRefused));
  return o;
}

QString ChannelReport::sanitise(QByteArrayView raw) {
  QString name;
  const qsizetype n = std::min<qsizetype>(raw.size(), kMaxNameLength);
  name.reserve(n + 1);
  for (qsizetype i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(raw[i]);
    name.append(c >= 0x20 && c < 0x7F ? QChar(c) : QChar(u'?'));
  }
  if (raw.size() > kMaxNameLength)
    name.append(u'~');
  return name;
}

void ChannelReport::setStaticChannels(QStringList requested, QStringList joined) {
  std::lock_guard lock(m_mutex);
  m_data.staticRequested = std::move(requested);
  m_data.staticJoined = std::move(joined);
}

void ChannelReport::setAdvertisedCodecs(QStringList codecs) {
  std::lock_guard lock(m_mutex);
  m_data.advertisedCodecs = std::move(codecs);
}

void ChannelReport::noteDynamicOpened(const QString& name) {
  std::lock_guard lock(m_mutex);
  if (m_data.dynamicOpened.size() < kMaxDistinctNames && !m_data.dynamicOpened.contains(name))
    m_data.dynamicOpened.append(name);
}

void ChannelReport::noteRefused(QByteArrayView rawName) {
  const QString name = sanitise(rawName);
  std::lock_guard lock(m_mutex);
  if (auto it = m_data.refused.find(name); it != m_data.refused.end())
    ++*it;
  else if (m_data.refused.size() < kMaxDistinctNames)
    m_data.refused.insert(name, 1);
  else
    ++m_data.refusedOverflow;
}

void ChannelReport::noteGfxOpened(bool opened) {
  std::lock_guard lock(m_mutex);
  m_data.gfxOpened = m_data.gfxOpened || opened;
}

void ChannelReport::noteGfxCapsVersion(quint32 version) {
  std::lock_guard lock(m_mutex);
  m_data.gfxCapsVersion = version;
}

void ChannelReport::noteGfxCodec(quint16 codecId) {
  std::lock_guard lock(m_mutex);
  const quint32 bit = codecId < 32 ? (1u << codecId) : 0;
  if (bit && !(m_codecBits & bit)) {
    m_codecBits |= bit;
    m_data.gfxCodecsUsed.append(codecName(codecId));
  } else if (!bit && m_data.gfxCodecsUsed.size() < kMaxDistinctNames &&
             !m_data.gfxCodecsUsed.contains(codecName(codecId))) {
    m_data.gfxCodecsUsed.append(codecName(codecId));
  }
}

void ChannelReport::noteGfxFrame() {
  std::lock_guard lock(m_mutex);
  ++m_data.gfxFrames;
}

ChannelReport::Snapshot ChannelReport::snapshot() const {
  std::lock_guard lock(m_mutex);
  return m_data;
}

} // namespace gc
