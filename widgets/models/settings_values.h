// SPDX-License-Identifier: MIT
#pragma once
// Reading back QSettings values that anyone may have edited by hand: every restored value is range-checked
// and falls back to its default (a "[Pareto] ColorBy=99" once crashed the window at start).
#include <QByteArray>
#include <QString>

namespace vtrain::ui::settings_values {

// The stored whole number when it is one and lies in [min, max], else `fallback`.
int intIn(const char* key, int fallback, int min, int max);
// The stored number when it is finite and in [min, max], else `fallback`.
double numberIn(const char* key, double fallback, double min, double max);
// "true"/"false" (or 1/0); anything else gives `fallback`.
bool flag(const char* key, bool fallback);
// One of `choices` (exact match), else `fallback`.
QString oneOf(const char* key, const QString& fallback, const QStringList& choices);

} // namespace vtrain::ui::settings_values
