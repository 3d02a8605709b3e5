// SPDX-License-Identifier: MIT
#include "models/format.h"

#include <algorithm>
#include <cmath>

#include <QLocale>

namespace vtrain::ui {
namespace {

QString scaled(double value, const char* const* suffixes, int count, double step, int decimals)
{
    int i = 0;
    double v = value;
    while (std::abs(v) >= step && i + 1 < count) {
        v /= step;
        ++i;
    }
    const int places = (i == 0 && std::abs(v - std::round(v)) < 1e-9) ? 0 : decimals;
    return QString::number(v, 'f', places) + QLatin1String(suffixes[i]);
}

} // namespace

QString formatCount(double n)
{
    return QLocale(QLocale::English).toString(static_cast<qlonglong>(std::llround(n)));
}

QString formatDollars(double usd)
{
    static const char* const suffixes[] = {"", "k", "M", "B"};
    return QStringLiteral("$") + scaled(usd, suffixes, 4, 1000.0, usd >= 1e3 ? 1 : 2);
}

QString formatDays(double days)
{
    return QString::number(days, 'f', days < 10 ? 2 : 1) + QStringLiteral(" d");
}

QString formatSeconds(double s)
{
    const double a = std::abs(s);
    if (a < 1e-3) {
        return QString::number(s * 1e6, 'f', 1) + QStringLiteral(" µs");
    }
    if (a < 1.0) {
        return QString::number(s * 1e3, 'f', a < 0.1 ? 2 : 1) + QStringLiteral(" ms");
    }
    return QString::number(s, 'f', a < 100 ? 3 : 1) + QStringLiteral(" s");
}

QString formatGiB(double gib)
{
    return QString::number(gib, 'f', gib < 10 ? 2 : 1) + QStringLiteral(" GiB");
}

QString formatPercent(double fraction)
{
    return QString::number(fraction * 100.0, 'f', 1) + QStringLiteral(" %");
}

QString formatPercentChange(double percent, int decimals)
{
    const double scale = std::pow(10.0, decimals);
    const double rounded = std::round(percent * scale) / scale;
    if (rounded == 0 || !std::isfinite(rounded)) {
        return QString::number(0.0, 'f', decimals) + QStringLiteral(" %");
    }
    return (rounded > 0 ? QStringLiteral("+") : QStringLiteral("-")) + QString::number(std::abs(rounded), 'f', decimals) + QStringLiteral(" %");
}

QString formatDuration(double seconds)
{
    if (!std::isfinite(seconds) || seconds < 0) {
        return QStringLiteral("–");
    }
    const auto total = static_cast<long long>(std::llround(seconds));
    if (total < 60) {
        return QString::number(total) + QStringLiteral(" s");
    }
    if (total < 3600) {
        return QStringLiteral("%1 min %2 s").arg(total / 60).arg(total % 60, 2, 10, QLatin1Char('0'));
    }
    return QStringLiteral("%1 h %2 min").arg(total / 3600).arg((total % 3600) / 60, 2, 10, QLatin1Char('0'));
}

QString formatTokens(double tokens)
{
    static const char* const suffixes[] = {"", "K", "M", "B", "T"};
    int i = 0;
    double v = tokens;
    while (std::abs(v) >= 1000.0 && i < 4) {
        v /= 1000.0;
        ++i;
    }
    // 'g' drops trailing zeros: 270B, 15.6T (the form the editor's token field accepts back).
    return QString::number(v, 'g', 6) + QLatin1String(suffixes[i]);
}

} // namespace vtrain::ui

namespace vtrain::ui {

QString formatDollarsExact(double usd)
{
    if (!std::isfinite(usd)) {
        return QStringLiteral("–");
    }
    const QString digits = QLocale(QLocale::English).toString(static_cast<qlonglong>(std::llround(std::abs(usd))));
    return (usd < 0 ? QStringLiteral("-$") : QStringLiteral("$")) + digits;
}

QString elidedText(const QString& text, int maxChars)
{
    const QString line = text.section(QLatin1Char('\n'), 0, 0);
    if (line.size() <= maxChars && line.size() == text.size()) {
        return text;
    }
    return line.left(std::max(1, maxChars - 1)) + QStringLiteral("…");
}

QString elidedName(const std::string& name, int maxChars)
{
    // Only the start of a huge name is converted.
    const std::size_t keep = std::min<std::size_t>(name.size(), static_cast<std::size_t>(maxChars) * 4 + 4);
    QString text = QString::fromUtf8(name.data(), static_cast<qsizetype>(keep));
    if (keep < name.size()) {
        text += QStringLiteral("……"); // forces the ellipsis below
    }
    return elidedText(text, maxChars);
}

} // namespace vtrain::ui
