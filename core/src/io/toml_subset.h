// SPDX-License-Identifier: MIT
#pragma once
// A small, bounded reader of the TOML that job configs use (internal; no TOML library is a dependency of
// the core): [table] and [a.b] headers, [[array.of.tables]], key = value with bare, quoted and dotted keys,
// basic and literal strings (one-line and multi-line), integers (decimal, 0x, 0o, 0b, with underscores),
// floats, booleans, arrays and inline tables, dates and times (kept as strings), # comments. Values come
// back as JSON (tables as objects). Hostile input is refused with the line and the reason: nesting deeper
// than kMaxTomlDepth, keys longer than kMaxTomlKeyChars, more than kMaxTomlValues values, inf and nan,
// integers beyond 64 bits, a key defined twice, control characters outside strings.
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "vtrain/diagnostic.h"

namespace vtrain::import_detail {

constexpr int kMaxTomlDepth = 32;
constexpr std::size_t kMaxTomlKeyChars = 256;
constexpr std::size_t kMaxTomlValues = 1'000'000;

// Parses `text`. A refusal's diagnostic names "line N" as its field.
Expected<nlohmann::json> parse_toml(const std::string& text);

} // namespace vtrain::import_detail
