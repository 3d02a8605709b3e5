// SPDX-License-Identifier: MIT
#pragma once
// Numbers as users type them into the case-study forms: "3360", "3,360", "30.5", "1.5e6", "$10M", "250k".
#include <optional>

#include <QString>

namespace vtrain::ui {

// A finite number; thousands separators, a leading "$" and a k/M/B suffix are accepted.
std::optional<double> parseNumberText(const QString& text);
// A whole number in [min, max].
std::optional<long long> parseWholeText(const QString& text, long long min, long long max);

} // namespace vtrain::ui
