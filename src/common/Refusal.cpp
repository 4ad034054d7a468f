#include "common/Refusal.h"

#include <QHash>
#include <QList>

namespace gc {
namespace {

struct Entry {
  Refusal code;
  const char* name;
  const char* text;
};

constexpr Entry kEntries[] = {
#define GC_REFUSAL_ENTRY(e, name, text) {Refusal::e, name, text},
    GC_REFUSAL_CODES(GC_REFUSAL_ENTRY)
#undef GC_REFUSAL_ENTRY
};

const Entry& entryFor(Refusal code) {
  const auto index = static_cast<std::size_t>(code);
  Q_ASSERT(index < std::size(kEntries));
  return kEntries[index];
}

} // namespace

QString refusalName(Refusal code) {
  return QString::fromLatin1(entryFor(code).name);
}

QString refusalText(Refusal code) {
  return QString::fromUtf8(entryFor(code).text);
}

std::optional<Refusal> refusalFromName(QStringView name) {
  static const QHash<QString, Refusal> byName = [] {
    QHash<QString, Refusal> map;
    for (const Entry& e : kEntries)
      map.insert(QString::fromLatin1(e.name), e.code);
    return map;
  }();
  const auto it = byName.constFind(name.toString());
  if (it == byName.constEnd())
    return std::nullopt;
  return *it;
}

const QList<Refusal>& allRefusals() {
  static const QList<Refusal> all = [] {
    QList<Refusal> list;
    for (const Entry& e : kEntries)
      list.append(e.code);
    return list;
  }();
  return all;
}

} // namespace gc
