// SPDX-License-Identifier: MIT
#pragma once
// Errors are data: every failure names the field (a JSON-pointer-like path) and the reason.
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace vtrain {

struct Diagnostic {
    std::string field;   // e.g. "plan.tp" or "model.heads"
    std::string message; // why the value is refused
    std::string to_string() const { return field.empty() ? message : field + ": " + message; }
};

using Diagnostics = std::vector<Diagnostic>;

// A value or the diagnostics explaining why there is none (std::expected is C++23).
template <typename T>
class Expected {
public:
    Expected(T value) : m_state(std::move(value)) {}
    Expected(Diagnostic error) : m_state(Diagnostics{std::move(error)}) {}
    Expected(Diagnostics errors) : m_state(std::move(errors)) {}

    bool ok() const { return std::holds_alternative<T>(m_state); }
    explicit operator bool() const { return ok(); }
    const T& value() const& { return std::get<T>(m_state); }
    T& value() & { return std::get<T>(m_state); }
    T&& value() && { return std::get<T>(std::move(m_state)); }
    const T* operator->() const { return &value(); }
    const T& operator*() const { return value(); }
    const Diagnostics& errors() const { return std::get<Diagnostics>(m_state); }
    std::string first_error() const { return ok() || errors().empty() ? std::string{} : errors().front().to_string(); }

private:
    std::variant<T, Diagnostics> m_state;
};

} // namespace vtrain
