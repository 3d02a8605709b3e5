// SPDX-License-Identifier: MIT
#include "models/scenario_fields.h"

#include <algorithm>
#include <cmath>

#include <QCoreApplication>
#include <QRegularExpression>

namespace vtrain::ui::fields {
namespace {

QString tr(const char* text)
{
    return QCoreApplication::translate("vtrain::ui::fields", text);
}

} // namespace

Parsed<int> parseInt(const QString& text, long long min, long long max)
{
    const QString t = text.trimmed();
    if (t.isEmpty()) {
        return {std::nullopt, tr("is required")};
    }
    bool ok = false;
    const long long v = t.toLongLong(&ok);
    if (!ok) {
        return {std::nullopt, tr("must be a whole number, not \"%1\"").arg(t)};
    }
    if (v < min) {
        return {std::nullopt, tr("must be at least %1").arg(min)};
    }
    if (v > max) {
        return {std::nullopt, tr("must be at most %1").arg(max)};
    }
    return {static_cast<int>(v), {}};
}

Parsed<int> parseOptionalInt(const QString& text, long long min, long long max)
{
    if (text.trimmed().isEmpty()) {
        return {0, {}};
    }
    return parseInt(text, min, max);
}

OptionalNumber parseOptionalPositive(const QString& text, double max)
{
    const QString t = text.trimmed();
    if (t.isEmpty()) {
        return {};
    }
    bool ok = false;
    const double v = t.toDouble(&ok);
    if (!ok || !std::isfinite(v)) {
        return {std::nullopt, tr("must be a number, not \"%1\"").arg(t)};
    }
    if (v <= 0) {
        return {std::nullopt, tr("must be more than 0")};
    }
    if (v > max) {
        return {std::nullopt, tr("must be at most %1").arg(max)};
    }
    return {v, {}};
}

Parsed<double> parseTokens(const QString& text)
{
    static const QRegularExpression re(QStringLiteral("^([0-9]*\\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\\s*([kKmMbBtT]|thousand|million|billion|trillion)?$"));
    const QString t = text.trimmed();
    if (t.isEmpty()) {
        return {std::nullopt, tr("is required (e.g. 270B or 2.7e11)")};
    }
    const QRegularExpressionMatch m = re.match(t);
    if (!m.hasMatch()) {
        return {std::nullopt, tr("must be a number of tokens such as 270B, 15T or 2.7e11, not \"%1\"").arg(t)};
    }
    double v = m.captured(1).toDouble();
    const QString unit = m.captured(2).toLower();
    if (unit == u"k" || unit == u"thousand") {
        v *= 1e3;
    } else if (unit == u"m" || unit == u"million") {
        v *= 1e6;
    } else if (unit == u"b" || unit == u"billion") {
        v *= 1e9;
    } else if (unit == u"t" || unit == u"trillion") {
        v *= 1e12;
    }
    if (!(v > 0)) {
        return {std::nullopt, tr("must be more than 0")};
    }
    if (v > 1e17) {
        return {std::nullopt, tr("must be at most 1e17")};
    }
    return {v, {}};
}

Parsed<std::vector<int>> parseGpuCounts(const QString& text)
{
    static const QRegularExpression range(QStringLiteral("^(\\d+)\\s*-\\s*(\\d+)\\s*(?::\\s*(\\d+))?$"));
    const QString t = text.trimmed();
    if (t.isEmpty()) {
        return {std::nullopt, tr("is required: one count (3360), a list (1024, 2048) or a range (2240-4480:280)")};
    }
    std::vector<long long> values;
    for (const QString& raw : t.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const QString item = raw.trimmed();
        if (const QRegularExpressionMatch m = range.match(item); m.hasMatch()) {
            const long long from = m.captured(1).toLongLong();
            const long long to = m.captured(2).toLongLong();
            if (m.captured(3).isEmpty()) {
                return {std::nullopt, tr("the range \"%1\" needs a step, e.g. %1:%2").arg(item).arg(std::max(1LL, from))};
            }
            const long long step = m.captured(3).toLongLong();
            if (step < 1) {
                return {std::nullopt, tr("the step of \"%1\" must be at least 1").arg(item)};
            }
            if (to < from) {
                return {std::nullopt, tr("the range \"%1\" ends before it starts").arg(item)};
            }
            if ((to - from) / step + 1 > kMaxGpuCountValues) {
                return {std::nullopt, tr("the range \"%1\" has more than %2 values").arg(item).arg(kMaxGpuCountValues)};
            }
            for (long long v = from; v <= to; v += step) {
                values.push_back(v);
            }
            continue;
        }
        bool ok = false;
        const long long v = item.toLongLong(&ok);
        if (!ok) {
            return {std::nullopt, tr("\"%1\" is not a GPU count (use 3360, 1024, 2048 or 2240-4480:280)").arg(item)};
        }
        values.push_back(v);
    }
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    if (values.empty()) {
        return {std::nullopt, tr("is required")};
    }
    if (values.front() < 1) {
        return {std::nullopt, tr("GPU counts must be at least 1")};
    }
    if (values.back() > 10'000'000) {
        return {std::nullopt, tr("GPU counts must be at most 10000000")};
    }
    if (values.size() > static_cast<std::size_t>(kMaxGpuCountValues)) {
        return {std::nullopt, tr("at most %1 GPU counts").arg(kMaxGpuCountValues)};
    }
    return {std::vector<int>(values.begin(), values.end()), {}};
}

QString formatGpuCounts(const std::vector<int>& counts)
{
    if (counts.size() >= 3) {
        const int step = counts[1] - counts[0];
        bool even = step > 0;
        for (std::size_t i = 2; i < counts.size() && even; ++i) {
            even = counts[i] - counts[i - 1] == step;
        }
        if (even) {
            return QStringLiteral("%1-%2:%3").arg(counts.front()).arg(counts.back()).arg(step);
        }
    }
    QStringList parts;
    for (int c : counts) {
        parts << QString::number(c);
    }
    return parts.join(QStringLiteral(", "));
}

} // namespace vtrain::ui::fields
