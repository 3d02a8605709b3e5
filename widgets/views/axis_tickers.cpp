// SPDX-License-Identifier: MIT
#include "views/axis_tickers.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <QFontMetrics>
#include <QLocale>

namespace vtrain::ui {
namespace {

constexpr int kMaxTicks = 12;

// Decimals that show `step` exactly (2.5 -> 1, 0.25 -> 2, 50 -> 0), at most 4.
int decimalsFor(double step)
{
    int d = 0;
    double scaled = std::abs(step);
    while (d < 4 && scaled > 0 && std::abs(scaled - std::round(scaled)) > 1e-6 * std::max(1.0, scaled)) {
        scaled *= 10;
        ++d;
    }
    return d;
}

// The nice linear steps (1, 2, 2.5, 5 x 10^k) from the first giving at most kMaxTicks ticks upwards.
QVector<double> niceSteps(double span)
{
    QVector<double> steps;
    if (!(span > 0) || !std::isfinite(span)) {
        return steps;
    }
    double decade = std::pow(10.0, std::floor(std::log10(span / kMaxTicks)));
    while (steps.size() < 16) {
        for (const double m : {1.0, 2.0, 2.5, 5.0}) {
            const double step = m * decade;
            if (span / step <= kMaxTicks) {
                steps.push_back(step);
            }
        }
        decade *= 10;
    }
    return steps;
}

// Mantissas within a decade, densest first; the sparser sets are the 1-2-5 steps and then whole decades.
const QVector<QVector<double>>& logMantissas()
{
    static const QVector<QVector<double>> sets{
        {1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9}, {1, 1.5, 2, 3, 4, 5, 6, 8}, {1, 1.5, 2, 3, 5, 7}, {1, 2, 3, 5}, {1, 2, 5}, {1, 3}, {1},
    };
    return sets;
}

} // namespace

SpacedTicker::SpacedTicker(QCPAxis* axis, TickLabel label, bool logarithmic) : m_axis(axis), m_label(std::move(label)), m_log(logarithmic) {}

QVector<double> SpacedTicker::linearTicks(const QCPRange& range, double step) const
{
    QVector<double> ticks;
    const double first = std::ceil(range.lower / step - 1e-9);
    for (double k = first; k * step <= range.upper + 1e-9 * std::abs(step) && ticks.size() <= 4 * kMaxTicks; k += 1) {
        ticks.push_back(k * step);
    }
    return ticks;
}

QVector<double> SpacedTicker::logTicks(const QCPRange& range, const QVector<double>& mantissas, int decadeStride) const
{
    QVector<double> ticks;
    if (!(range.lower > 0)) {
        return ticks;
    }
    const int e0 = static_cast<int>(std::floor(std::log10(range.lower)));
    const int e1 = static_cast<int>(std::ceil(std::log10(range.upper)));
    for (int e = e0; e <= e1 && ticks.size() <= 4 * kMaxTicks; ++e) {
        if (((e % decadeStride) + decadeStride) % decadeStride != 0) {
            continue;
        }
        for (const double m : mantissas) {
            const double v = m * std::pow(10.0, e);
            if (v >= range.lower * (1 - 1e-9) && v <= range.upper * (1 + 1e-9)) {
                ticks.push_back(v);
            }
        }
    }
    return ticks;
}

void SpacedTicker::dropOverhanging(QVector<double>& ticks, QVector<QString>& labels) const
{
    const QFontMetrics fm(m_axis->tickLabelFont());
    const QRect rect = m_axis->axisRect()->rect();
    const bool horizontal = m_axis->orientation() == Qt::Horizontal;
    QVector<double> keptTicks;
    QVector<QString> keptLabels;
    for (int i = 0; i < ticks.size(); ++i) {
        const double pos = m_axis->coordToPixel(ticks[i]);
        const double half = horizontal ? fm.horizontalAdvance(labels[i]) / 2.0 : fm.height() / 2.0;
        const bool inside = horizontal ? pos - half >= rect.left() - 1 && pos + half <= rect.right() + 1
                                       : pos - half >= rect.top() - 1 && pos + half <= rect.bottom() + 1;
        if (inside) {
            keptTicks.push_back(ticks[i]);
            keptLabels.push_back(labels[i]);
        }
    }
    ticks = keptTicks;
    labels = keptLabels;
}

bool SpacedTicker::fits(const QVector<double>& ticks, const QVector<QString>& labels) const
{
    const QFontMetrics fm(m_axis->tickLabelFont());
    const bool horizontal = m_axis->orientation() == Qt::Horizontal;
    // A gap of about two characters between labels side by side, half a line between labels stacked.
    const double gap = horizontal ? 2.0 * fm.averageCharWidth() : fm.height() / 2.0;
    std::vector<std::pair<double, double>> spans; // pixel extents along the axis
    for (int i = 0; i < ticks.size(); ++i) {
        const double pos = m_axis->coordToPixel(ticks[i]);
        const double half = horizontal ? fm.horizontalAdvance(labels[i]) / 2.0 : fm.height() / 2.0;
        spans.emplace_back(pos - half, pos + half);
    }
    std::sort(spans.begin(), spans.end());
    for (std::size_t i = 1; i < spans.size(); ++i) {
        if (spans[i].first < spans[i - 1].second + gap) {
            return false;
        }
    }
    return true;
}

void SpacedTicker::generate(const QCPRange& range, const QLocale&, QChar, int, QVector<double>& ticks, QVector<double>* subTicks,
                            QVector<QString>* tickLabels)
{
    const bool horizontal = m_axis->orientation() == Qt::Horizontal;
    m_lengthUsed = horizontal ? m_axis->axisRect()->width() : m_axis->axisRect()->height();

    struct Candidate {
        QVector<double> ticks;
        QVector<QString> labels;
        QVector<double> subTicks;
    };
    QVector<Candidate> candidates;
    if (m_log) {
        for (int stride = 1; stride <= 4; ++stride) {
            for (const QVector<double>& mantissas : logMantissas()) {
                if (stride > 1 && mantissas.size() > 1) {
                    continue; // past whole decades: every second, third, ... decade
                }
                Candidate c;
                c.ticks = logTicks(range, mantissas, stride);
                if (c.ticks.size() > kMaxTicks) {
                    continue;
                }
                for (double t : c.ticks) {
                    c.labels.push_back(m_label(t, 0));
                }
                // Sub-ticks at the whole mantissas that carry no label, while they are not too many.
                const QVector<double> whole = logTicks(range, {1, 2, 3, 4, 5, 6, 7, 8, 9}, 1);
                if (whole.size() <= 60) {
                    for (double t : whole) {
                        if (!c.ticks.contains(t)) {
                            c.subTicks.push_back(t);
                        }
                    }
                }
                candidates.push_back(std::move(c));
            }
        }
    }
    // Linear steps: the linear axis' ticks, and a narrow logarithmic range's (a front within a few percent
    // of cost holds no 1-2-5 mantissa at all).
    for (const double step : niceSteps(range.size())) {
        Candidate c;
        c.ticks = linearTicks(range, step);
        for (double t : c.ticks) {
            c.labels.push_back(m_label(std::abs(t) < step * 1e-9 ? 0.0 : t, step));
        }
        const double mantissa = step / std::pow(10.0, std::floor(std::log10(step)));
        const double sub = step / (std::abs(mantissa - 2) < 1e-9 ? 4 : 5);
        for (double t = std::ceil(range.lower / sub) * sub; t <= range.upper; t += sub) {
            c.subTicks.push_back(t);
        }
        candidates.push_back(std::move(c));
    }

    // The densest candidate whose labels keep apart with at least two labels; else the first with one.
    const Candidate* chosen = nullptr;
    for (Candidate& c : candidates) {
        dropOverhanging(c.ticks, c.labels);
        if (!fits(c.ticks, c.labels)) {
            continue;
        }
        if (c.ticks.size() >= 2 || (!chosen && c.ticks.size() == 1)) {
            chosen = &c;
            if (c.ticks.size() >= 2) {
                break;
            }
        }
    }
    ticks.clear();
    if (subTicks) {
        subTicks->clear();
    }
    if (tickLabels) {
        tickLabels->clear();
    }
    if (!chosen) {
        return;
    }
    ticks = chosen->ticks;
    if (subTicks) {
        *subTicks = chosen->subTicks;
    }
    if (tickLabels) {
        *tickLabels = chosen->labels;
    }
}

void setSpacedTicker(QCPAxis* axis, TickLabel label)
{
    axis->setTicker(QSharedPointer<SpacedTicker>::create(axis, std::move(label), axis->scaleType() == QCPAxis::stLogarithmic));
}

void keepTickLabelsApart(QCustomPlot* plot)
{
    QObject::connect(plot, &QCustomPlot::afterLayout, plot, [plot] {
        for (int pass = 0; pass < 3; ++pass) {
            bool stale = false;
            for (QCPAxisRect* rect : plot->axisRects()) {
                for (QCPAxis* axis : rect->axes()) {
                    if (const auto* ticker = dynamic_cast<const SpacedTicker*>(axis->ticker().data()); ticker && axis->visible()) {
                        const double length = axis->orientation() == Qt::Horizontal ? rect->width() : rect->height();
                        stale = stale || std::abs(ticker->lengthUsed() - length) > 0.5;
                    }
                }
            }
            if (!stale) {
                return;
            }
            for (const auto phase : {QCPLayoutElement::upPreparation, QCPLayoutElement::upMargins, QCPLayoutElement::upLayout}) {
                plot->plotLayout()->update(phase);
            }
        }
    });
}

QString dayTickLabel(double days, double step)
{
    const int decimals = step > 0 ? decimalsFor(step) : (std::abs(days) >= 100 ? 0 : decimalsFor(days));
    if (std::abs(days) >= 1000) {
        return QLocale(QLocale::English).toString(days, 'f', decimals);
    }
    return QString::number(days, 'f', decimals);
}

QString dollarTickLabel(double usd, double step)
{
    static const char* const suffixes[] = {"", "k", "M", "B", "T"};
    int i = 0;
    double scale = 1;
    while (i < 4 && std::abs(usd) >= 1000 * scale) {
        scale *= 1000;
        ++i;
    }
    const int decimals = step > 0 ? decimalsFor(step / scale) : decimalsFor(usd / scale);
    return QStringLiteral("$") + QString::number(usd / scale, 'f', std::min(decimals, 3)) + QLatin1String(suffixes[i]);
}

} // namespace vtrain::ui
