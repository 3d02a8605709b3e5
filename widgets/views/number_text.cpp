// SPDX-License-Identifier: MIT
#include "views/number_text.h"

#include <cmath>

namespace vtrain::ui {

std::optional<double> parseNumberText(const QString& text)
{
    QString t = text.trimmed();
    t.remove(QLatin1Char(',')).remove(QLatin1Char('_')).remove(QLatin1Char(' '));
    if (t.startsWith(QLatin1Char('$'))) {
        t.remove(0, 1);
    }
    double factor = 1;
    if (!t.isEmpty()) {
        const QChar last = t.back().toUpper();
        factor = last == u'K' ? 1e3 : last == u'M' ? 1e6 : last == u'B' ? 1e9 : 1;
        if (factor != 1) {
            t.chop(1);
        }
    }
    bool ok = false;
    const double v = t.toDouble(&ok) * factor;
    return ok && std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

std::optional<long long> parseWholeText(const QString& text, long long min, long long max)
{
    const auto v = parseNumberText(text);
    if (!v || *v != std::floor(*v) || *v < static_cast<double>(min) || *v > static_cast<double>(max)) {
        return std::nullopt;
    }
    return static_cast<long long>(*v);
}

} // namespace vtrain::ui
