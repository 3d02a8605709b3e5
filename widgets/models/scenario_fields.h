// SPDX-License-Identifier: MIT
#pragma once
// Parsing of the scenario editor's text fields, each with the reason a value is refused (shown at the
// field before anything runs). Qt-only and widget-free so the rules are tested directly.
#include <optional>
#include <vector>

#include <QString>

namespace vtrain::ui::fields {

template <typename T>
struct Parsed {
    std::optional<T> value;
    QString error; // empty when value is set
    bool ok() const { return value.has_value(); }
};

// A whole number in [min, max].
Parsed<int> parseInt(const QString& text, long long min, long long max);
// Empty means "not given" (value 0); otherwise a whole number in [min, max].
Parsed<int> parseOptionalInt(const QString& text, long long min, long long max);
// A positive number; empty means "not given" (nullopt value but ok()).
struct OptionalNumber {
    std::optional<double> value;
    QString error;
    bool ok() const { return error.isEmpty(); }
};
OptionalNumber parseOptionalPositive(const QString& text, double max);
// Training tokens: "270e9", "2.7e11", "270B", "15T", "300 billion"; must be > 0.
Parsed<double> parseTokens(const QString& text);
// GPU counts: "3360", "1024, 2048, 4096" or "2240-4480:280" (from-to:step); sorted, without duplicates.
Parsed<std::vector<int>> parseGpuCounts(const QString& text);
// The inverse of parseGpuCounts: evenly spaced lists come back as a range.
QString formatGpuCounts(const std::vector<int>& counts);

inline constexpr int kMaxGpuCountValues = 256; // keeps a typo like 1-1000000:1 from making a billion plans

} // namespace vtrain::ui::fields
