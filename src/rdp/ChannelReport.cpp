#include "rdp/ChannelReport.h"

#include "common/Refusal.h"

#include <limits>

namespace gc {

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

void ChannelReport::setStaticChannels(QStringList requested, QStringList joined) {
  std::lock_guard lock(m_mutex);
  m_data.staticRequested = std::move(requested);
  m_data.staticJoined = std::move(joined);
}

void ChannelReport::setAdvertisedCodecs(QStringList codecs) {
  std::lock_guard lock(m_mutex);
  m_data.advertisedCodecs = std::move(codecs);
}

void ChannelReport::setGfxAdvertised(bool advertised) {
  std::lock_guard lock(m_mutex);
  m_data.gfxAdvertised = advertised;
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

void ChannelReport::noteGfxCommand(std::string_view name) {
  constexpr std::string_view kPrefix = "rdpgfx.";
  if (name.starts_with(kPrefix))
    name.remove_prefix(kPrefix.size());
  const QString key = sanitise(QByteArrayView(name.data(), qsizetype(name.size())));
  std::lock_guard lock(m_mutex);
  if (auto it = m_data.gfxCommands.find(key); it != m_data.gfxCommands.end()) {
    if (*it < std::numeric_limits<int>::max())
      ++*it;
  } else if (m_data.gfxCommands.size() < ChannelSnapshot::kMaxGfxCommands) {
    m_data.gfxCommands.insert(key, 1);
  }
}

ChannelReport::Snapshot ChannelReport::snapshot() const {
  std::lock_guard lock(m_mutex);
  return m_data;
}

} // namespace gc
