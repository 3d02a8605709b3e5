// SPDX-License-Identifier: MIT
#pragma once
// Human-readable numbers for tables, tooltips and axis labels (one place, so every view agrees).
#include <string>

#include <QString>

namespace vtrain::ui {

QString formatCount(double n);          // 1,234,567
QString formatDollars(double usd);      // $412.5k, $12.3M
QString formatDays(double days);        // 23.4 d
QString formatSeconds(double seconds);  // 850 µs, 12.3 ms, 4.21 s
QString formatGiB(double gib);          // 61.2 GiB
QString formatPercent(double fraction); // 41.2 %
// A change in percent with its sign, "+6.1 %", "-12 %"; one that rounds to zero is "0.0 %" (never "-0.0 %").
QString formatPercentChange(double percent, int decimals = 1);
QString formatDuration(double seconds); // 1 h 04 min, 12 s (time left)
QString formatTokens(double tokens);    // 270B, 15T
QString formatDollarsExact(double usd); // $2,812,345 (tables: enough digits that sorting reads right)

// Free text (a model name) cut to `maxChars` with "…": window titles, chart titles.
QString elidedText(const QString& text, int maxChars = 60);
QString elidedName(const std::string& name, int maxChars = 60);

} // namespace vtrain::ui
