// Outcome<T>: a value or a typed Failure (std::expected is C++23; we build as C++20).
#pragma once

#include "common/Refusal.h"

#include <utility>
#include <variant>

namespace gc {

template <typename T> class [[nodiscard]] Outcome {
public:
  Outcome(T value) : m_state(std::move(value)) {}
  Outcome(Failure failure) : m_state(std::move(failure)) {}
  Outcome(Refusal code, QString message) : m_state(Failure{code, std::move(message)}) {}

  bool ok() const { return std::holds_alternative<T>(m_state); }
  explicit operator bool() const { return ok(); }

  const T& value() const& { return std::get<T>(m_state); }
  T& value() & { return std::get<T>(m_state); }
  T&& value() && { return std::get<T>(std::move(m_state)); }
  const T* operator->() const { return &value(); }
  const T& operator*() const { return value(); }

  const Failure& failure() const { return std::get<Failure>(m_state); }
  Refusal code() const { return failure().code; }

private:
  std::variant<T, Failure> m_state;
};

// For operations with no value: Status ok = Status::success();
struct Done {};
using Status = Outcome<Done>;
inline Status success() {
  return Status(Done{});
}

} // namespace gc
