// StateTable: the one idiom of the house's state machines (the run's Phase, the console's
// Lifecycle, RdpSession's and RdpReader's State): an enum class, its names in enum order,
// and the table of legal edges, each with the reason it exists. Each machine has exactly one
// setter that asks its table before it changes state and refuses any other edge.
//
// Thread: constant data and pure functions; any thread.
#pragma once

#include <QString>
#include <QStringView>

#include <array>
#include <cstddef>
#include <optional>

namespace gc {

template <typename S> struct StateEdge {
  S from;
  S to;
  const char* why;
};

template <typename S, std::size_t N, std::size_t E> struct StateTable {
  std::array<const char*, N> names; // in enum order
  std::array<StateEdge<S>, E> edges;

  QString name(S state) const {
    const auto i = std::size_t(state);
    return i < N ? QString::fromLatin1(names[i]) : QString();
  }
  std::optional<S> fromName(QStringView name) const {
    for (std::size_t i = 0; i < N; ++i)
      if (name == QLatin1StringView(names[i]))
        return S(i);
    return std::nullopt;
  }
  const StateEdge<S>* edge(S from, S to) const {
    for (const StateEdge<S>& e : edges)
      if (e.from == from && e.to == to)
        return &e;
    return nullptr;
  }
  bool allows(S from, S to) const { return edge(from, to) != nullptr; }
};

// makeStateTable<State>({"idle", ...}, {{State::Idle, State::Connecting, "why"}, ...}): the
// counts come from the lists.
template <typename S, std::size_t N, std::size_t E>
constexpr StateTable<S, N, E> makeStateTable(const char* const (&names)[N], const StateEdge<S> (&edges)[E]) {
  StateTable<S, N, E> t{};
  for (std::size_t i = 0; i < N; ++i)
    t.names[i] = names[i];
  for (std::size_t i = 0; i < E; ++i)
    t.edges[i] = edges[i];
  return t;
}

} // namespace gc
