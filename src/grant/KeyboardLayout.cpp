#include "grant/KeyboardLayout.h"

#include <QRegularExpression>

namespace gc {

namespace {

constexpr quint32 kPrimaryJapanese = 0x11;
constexpr quint32 kPrimaryKorean = 0x12;

quint32 primaryLanguage(quint32 klid) {
  return klid & 0x3ffu;
}

} // namespace

std::optional<quint32> KeyboardLayout::parse(const QString& text) {
  static const QRegularExpression form(QStringLiteral("\\A0[xX][0-9a-fA-F]{8}\\z"));
  if (!form.match(text).hasMatch())
    return std::nullopt;
  bool ok = false;
  const quint32 value = text.mid(2).toUInt(&ok, 16);
  if (!ok)
    return std::nullopt;
  return value;
}

bool KeyboardLayout::isLayout(quint32 klid) {
  const quint32 primary = primaryLanguage(klid);
  const quint32 variant = klid >> 16;
  // 0x000 neutral, 0x07f invariant, 0x3ff private-use/custom placeholder: no layout names them.
  if (primary == 0 || primary == 0x7f || primary == 0x3ff)
    return false;
  return variant <= 0x00ffu || (variant >= 0xa000u && variant <= 0xa0ffu) ||
         (variant >= 0xe000u && variant <= 0xe0ffu);
}

QString KeyboardLayout::toString(quint32 klid) {
  return QStringLiteral("0x%1").arg(klid, 8, 16, QLatin1Char('0'));
}

quint32 KeyboardLayout::keyboardType(quint32 klid) {
  switch (primaryLanguage(klid)) {
  case kPrimaryJapanese:
    return 7;
  case kPrimaryKorean:
    return 8;
  default:
    return 4;
  }
}

quint32 KeyboardLayout::keyboardSubType(quint32 klid) {
  switch (primaryLanguage(klid)) {
  case kPrimaryJapanese:
    return 2;
  case kPrimaryKorean:
    return 3;
  default:
    return 0;
  }
}

quint32 KeyboardLayout::functionKeys(quint32) {
  return 12;
}

} // namespace gc
