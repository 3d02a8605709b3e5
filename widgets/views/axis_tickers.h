// SPDX-License-Identifier: MIT
#pragma once
// Axis ticks whose labels never touch. QCustomPlot's tickers aim at a fixed tick count whatever the axis
// length, so a narrow chart printed "25003000" and a short log axis "$12.5k" over "$10.0k". These pick the
// densest nice steps (1-2-2.5-5 x 10^k on linear axes; 1-2-5 and finer steps within a decade on
// logarithmic ones) whose labels, measured in the axis' tick-label font, keep a gap at the axis' current
// length, and drop labels that would stick out past the axis' ends (into a corner or the legend).
#include <functional>

#include <QString>

#include <qcustomplot.h>

namespace vtrain::ui {

// A tick's label from its value and the step between ticks (0 on logarithmic axes: the value decides).
using TickLabel = std::function<QString(double value, double step)>;

class SpacedTicker : public QCPAxisTicker {
public:
    // `axis` is the axis this ticker serves (for its length and font); `label` formats a tick's value.
    SpacedTicker(QCPAxis* axis, TickLabel label, bool logarithmic);

    void generate(const QCPRange& range, const QLocale& locale, QChar formatChar, int precision, QVector<double>& ticks, QVector<double>* subTicks,
                  QVector<QString>* tickLabels) override;
    // The axis length (pixels) the last ticks were made for: QCustomPlot makes ticks before it lays the
    // chart out, so a changed length means the ticks need making again (keepTickLabelsApart()).
    double lengthUsed() const { return m_lengthUsed; }

private:
    bool fits(const QVector<double>& ticks, const QVector<QString>& labels) const;
    void dropOverhanging(QVector<double>& ticks, QVector<QString>& labels) const;
    QVector<double> linearTicks(const QCPRange& range, double step) const;
    QVector<double> logTicks(const QCPRange& range, const QVector<double>& mantissas, int decadeStride) const;

    QCPAxis* m_axis;
    TickLabel m_label;
    bool m_log;
    double m_lengthUsed = -1;
};

// Installs spaced tickers on `axis` (linear or logarithmic as the axis' scale type says).
void setSpacedTicker(QCPAxis* axis, TickLabel label);
// After each layout, makes the ticks again where an axis' length changed since they were made, so they
// fit the chart as drawn (a resize, an export at another size) and not the one before.
void keepTickLabelsApart(QCustomPlot* plot);

// Tick labels with as many decimals as the step needs: days ("15", "22.5", "1,500") and dollars
// ("$750k", "$6.25M"; "$6.2M" once stood for both $6.2M and $6.25M).
QString dayTickLabel(double days, double step);
QString dollarTickLabel(double usd, double step);

} // namespace vtrain::ui
