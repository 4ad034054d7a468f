#include "readerwire/ReaderTypes.h"

#include <QJsonArray>

namespace gc {

namespace {

QString capsVersionName(quint32 version) {
  return version ? QStringLiteral("0x%1").arg(version, 8, 16, QLatin1Char('0')) : QString();
}

bool isSanitisedName(const QString& name) {
  if (name.isEmpty() || name.size() > ChannelSnapshot::kMaxNameLength + 1)
    return false;
  for (qsizetype i = 0; i < name.size(); ++i) {
    const char16_t c = name[i].unicode();
    const bool marker = c == u'~' && i == ChannelSnapshot::kMaxNameLength && i == name.size() - 1;
    if (!marker && (c < 0x20 || c >= 0x7F))
      return false;
  }
  return true;
}

bool allSanitised(const QStringList& names) {
  if (names.size() > ChannelSnapshot::kMaxDistinctNames)
    return false;
  for (const QString& n : names)
    if (!isSanitisedName(n))
      return false;
  return true;
}

} // namespace

QString syncConfirmationName(SyncConfirmation c) {
  switch (c) {
  case SyncConfirmation::RefreshRect:
    return QStringLiteral("refresh_rect");
  case SyncConfirmation::SuppressOutput:
    return QStringLiteral("suppress_output");
  case SyncConfirmation::GfxCaps:
    return QStringLiteral("gfx_caps");
  case SyncConfirmation::SettleOnly:
    break;
  }
  return QStringLiteral("settle_only");
}

QString pacingModeName(PacingMode mode) {
  switch (mode) {
  case PacingMode::Unpaced:
    return QStringLiteral("unpaced");
  case PacingMode::NoPanel:
    return QStringLiteral("no_panel");
  case PacingMode::Panel:
    return QStringLiteral("panel");
  }
  return QStringLiteral("unknown");
}

int ChannelSnapshot::refusedTotal() const {
  int total = refusedOverflow;
  for (int n : refused)
    total += n;
  return total;
}

QJsonObject ChannelSnapshot::connectedJson() const {
  return {{QStringLiteral("static_requested"), QJsonArray::fromStringList(staticRequested)},
          {QStringLiteral("static_joined"), QJsonArray::fromStringList(staticJoined)},
          {QStringLiteral("gfx_requested"), staticRequested.contains(QStringLiteral("drdynvc"))},
          {QStringLiteral("gfx_codecs_advertised"), QJsonArray::fromStringList(advertisedCodecs)},
          {QStringLiteral("gfx_advertised_by_server"), gfxAdvertised}};
}

QJsonObject ChannelSnapshot::closedJson() const {
  QJsonObject refusedJson;
  for (auto it = refused.cbegin(); it != refused.cend(); ++it)
    refusedJson.insert(it.key(), it.value());
  QJsonObject o = connectedJson();
  o.insert(QStringLiteral("gfx"), gfxOpened);
  o.insert(QStringLiteral("gfx_caps_version"), capsVersionName(gfxCapsVersion));
  o.insert(QStringLiteral("gfx_codecs_used"), QJsonArray::fromStringList(gfxCodecsUsed));
  o.insert(QStringLiteral("gfx_frames"), qint64(gfxFrames));
  QJsonObject commandsJson;
  for (auto it = gfxCommands.cbegin(); it != gfxCommands.cend(); ++it)
    commandsJson.insert(it.key(), it.value());
  o.insert(QStringLiteral("gfx_commands"), commandsJson);
  o.insert(QStringLiteral("dynamic_opened"), QJsonArray::fromStringList(dynamicOpened));
  o.insert(QStringLiteral("dynamic_refused"), refusedJson);
  o.insert(QStringLiteral("dynamic_refused_overflow"), refusedOverflow);
  o.insert(QStringLiteral("dynamic_refused_total"), refusedTotal());
  if (refusedTotal() > 0)
    o.insert(QStringLiteral("code"), refusalName(Refusal::RdpChannelRefused));
  return o;
}

QString ChannelSnapshot::sanitise(QByteArrayView raw) {
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

bool ChannelSnapshot::wellFormed() const {
  if (!allSanitised(staticRequested) || !allSanitised(staticJoined) || !allSanitised(advertisedCodecs) ||
      !allSanitised(gfxCodecsUsed) || !allSanitised(dynamicOpened) || refused.size() > kMaxDistinctNames ||
      refusedOverflow < 0)
    return false;
  for (auto it = refused.cbegin(); it != refused.cend(); ++it)
    if (!isSanitisedName(it.key()) || it.value() < 0)
      return false;
  if (gfxCommands.size() > kMaxGfxCommands)
    return false;
  for (auto it = gfxCommands.cbegin(); it != gfxCommands.cend(); ++it)
    if (!isSanitisedName(it.key()) || it.value() < 0)
      return false;
  return true;
}

} // namespace gc
