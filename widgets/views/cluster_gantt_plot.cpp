// SPDX-License-Identifier: MIT
#include "views/cluster_gantt_plot.h"

#include <algorithm>
#include <cmath>

#include <QEvent>
#include <QMouseEvent>
#include <QToolTip>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "models/format.h"
#include "models/plan_dimensions.h"
#include "views/category_palette.h"
#include "views/plot_style.h"

namespace vtrain::ui {
namespace {

constexpr double kBarHalf = 0.36; // of a row
const QColor kMet(0x30, 0x30, 0x30);
const QColor kMissed(0xd6, 0x27, 0x28);
const QColor kWaiting(0x9a, 0x9a, 0x9a);
const std::vector<JobSegment> kNoSegments;

QString gpusName(int gpus)
{
    return gpus == 1 ? QObject::tr("1 GPU") : QObject::tr("%1 GPUs").arg(formatCount(gpus));
}

} // namespace

QString policyTitle(SchedulePolicy policy)
{
    switch (policy) {
    case SchedulePolicy::SimulatorInformed: return QObject::tr("simulator-informed (vTrain)");
    case SchedulePolicy::Fixed: return QObject::tr("fixed allocation");
    case SchedulePolicy::ElasticFlow: return QObject::tr("ElasticFlow-style");
    }
    return {};
}

ClusterGanttPlot::ClusterGanttPlot(QWidget* parent) : QWidget(parent)
{
    m_plot = new QCustomPlot(this);
    m_plot->setObjectName(QStringLiteral("clusterGantt"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    setMinimumHeight(300);

    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->axisRect()->setRangeZoom(Qt::Horizontal); // rows stay put: zoom and pan in time
    m_plot->axisRect()->setRangeDrag(Qt::Horizontal);
    m_plot->plotLayout()->insertRow(0);
    m_title = new QCPTextElement(m_plot, tr("Shared cluster"), plot_style::titleFont());
    m_plot->plotLayout()->addElement(0, 0, m_title);
    m_plot->xAxis->setLabel(tr("Time (hours)"));
    m_plot->yAxis->setLabel(tr("Jobs, in arrival order"));
    for (QCPAxis* axis : {m_plot->xAxis, m_plot->yAxis}) {
        axis->setLabelFont(plot_style::labelFont());
        axis->setTickLabelFont(plot_style::tickFont());
    }
    m_plot->yAxis->setRangeReversed(true); // the first job at the top
    m_plot->yAxis->grid()->setVisible(false);
    m_plot->yAxis->setSubTicks(false);

    // The legend below the chart, in rows: it never covers a bar.
    m_plot->legend->setVisible(true);
    m_plot->legend->setFont(plot_style::tickFont());
    m_plot->legend->setBorderPen(Qt::NoPen);
    m_plot->legend->setBrush(Qt::NoBrush);
    m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    m_plot->legend->setWrap(6); // two rows at most: an export (laid out smaller, then magnified) still fits
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    m_plot->plotLayout()->addElement(2, 0, m_plot->legend);
    m_plot->plotLayout()->setRowStretchFactor(2, 0.001);
    m_plot->addLayer(QStringLiteral("marks"), m_plot->layer(QStringLiteral("main")), QCustomPlot::limAbove);
    plot_style::applyPalette(m_plot, palette());
    connect(m_plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent* event) {
        const QString tip = toolTipAt(event->position());
        if (tip.isEmpty()) {
            QToolTip::hideText();
        } else {
            QToolTip::showText(event->globalPosition().toPoint(), tip, m_plot);
        }
    });
    clear();
}

QString ClusterGanttPlot::toolTipAt(const QPointF& pos) const
{
    // Deadline marks sit on top of the bars: they win where both are.
    for (const QCPItemLine* line : m_deadlines) {
        if (line->selectTest(pos, false) >= 0 && line->selectTest(pos, false) < 4) {
            return m_tips.value(line);
        }
    }
    const QCPAbstractItem* item = m_plot->itemAt(pos, false);
    return item ? m_tips.value(item) : QString();
}

void ClusterGanttPlot::clear()
{
    m_plot->clearItems();
    m_plot->clearGraphs();
    m_deadlines.clear();
    m_tips.clear();
    m_rows = 0;
    m_segments = 0;
    m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTickerText));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void ClusterGanttPlot::addLegendEntry(const QString& name, const QColor& color, bool line)
{
    // An empty graph stands for the items in the legend (items have no legend entries of their own).
    QCPGraph* g = m_plot->addGraph();
    g->setName(name);
    g->setLineStyle(line ? QCPGraph::lsLine : QCPGraph::lsNone);
    g->setPen(line ? QPen(color, 2.5) : QPen(color.darker(130)));
    if (!line) {
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare, color.darker(130), color, 10));
    }
}

std::vector<QPointF> ClusterGanttPlot::deadlineMarks() const
{
    std::vector<QPointF> marks;
    for (const QCPItemLine* line : m_deadlines) {
        const QPointF a = line->start->coords();
        const QPointF b = line->end->coords();
        marks.emplace_back(a.x(), (a.y() + b.y()) / 2);
    }
    return marks;
}

void ClusterGanttPlot::setSchedule(const std::vector<ClusterJob>& jobs, const PolicyResult& result, const std::vector<int>& gpuCounts,
                                   const QString& title)
{
    clear();
    m_title->setText(title);
    m_rows = static_cast<int>(jobs.size());
    // Keyed to the GPU count itself (category_palette.h): 64 GPUs look alike under every policy and seed.
    const auto colorOf = [](int gpus) { return palette::entry(palette::indexOfPowerOfTwo(gpus)); };
    double end = result.makespan_h;
    std::vector<bool> used(gpuCounts.size(), false);
    for (int row = 0; row < m_rows; ++row) {
        const ClusterJob& job = jobs[static_cast<std::size_t>(row)];
        const JobOutcome* outcome = row < static_cast<int>(result.jobs.size()) ? &result.jobs[static_cast<std::size_t>(row)] : nullptr;
        end = std::max(end, job.deadline_h);
        // Waiting: from arrival to the first start (to the deadline when the job never started).
        const double waitEnd = outcome && outcome->first_start_h >= 0 ? outcome->first_start_h : std::max(job.deadline_h, result.makespan_h);
        if (waitEnd > job.arrival_h) {
            auto* wait = new QCPItemLine(m_plot);
            wait->start->setCoords(job.arrival_h, row);
            wait->end->setCoords(waitEnd, row);
            wait->setPen(QPen(kWaiting, 1.2, outcome && outcome->first_start_h >= 0 ? Qt::SolidLine : Qt::DashLine));
            m_tips.insert(wait,
                          outcome && outcome->first_start_h >= 0
                              ? tr("%1 waited %2 h for GPUs").arg(QString::fromStdString(job.name), QString::number(waitEnd - job.arrival_h, 'f', 1))
                              : tr("%1 never got GPUs").arg(QString::fromStdString(job.name)));
        }
        for (const JobSegment& s : outcome ? outcome->segments : kNoSegments) {
            auto* bar = new QCPItemRect(m_plot);
            bar->topLeft->setCoords(s.start_h, row - kBarHalf);
            bar->bottomRight->setCoords(s.end_h, row + kBarHalf);
            const QColor c = colorOf(s.gpus);
            bar->setBrush(c);
            bar->setPen(QPen(c.darker(140), 0.8));
            m_tips.insert(bar, tr("<b>%1</b> · %2<br>%3 from %4 h to %5 h<br>%6<br>%7 tokens/s")
                                   .arg(QString::fromStdString(job.name), QString::fromStdString(job.model.name).toHtmlEscaped(), gpusName(s.gpus),
                                        QString::number(s.start_h, 'f', 1), QString::number(s.end_h, 'f', 1), planSummary(s.plan),
                                        formatCount(s.tokens_per_s)));
            const auto it = std::lower_bound(gpuCounts.begin(), gpuCounts.end(), s.gpus);
            if (it != gpuCounts.end()) {
                used[static_cast<std::size_t>(it - gpuCounts.begin())] = true;
            }
            ++m_segments;
        }
        auto* deadline = new QCPItemLine(m_plot);
        deadline->setLayer(QStringLiteral("marks"));
        deadline->start->setCoords(job.deadline_h, row - 0.5);
        deadline->end->setCoords(job.deadline_h, row + 0.5);
        deadline->setPen(QPen(outcome && outcome->met_deadline ? kMet : kMissed, 2.4));
        m_tips.insert(deadline,
                      outcome && outcome->completed
                          ? tr("%1: deadline %2 h, finished at %3 h (%4)")
                                .arg(QString::fromStdString(job.name), QString::number(job.deadline_h, 'f', 1),
                                     QString::number(outcome->finish_h, 'f', 1), outcome->met_deadline ? tr("met") : tr("missed"))
                          : tr("%1: deadline %2 h, not finished").arg(QString::fromStdString(job.name), QString::number(job.deadline_h, 'f', 1)));
        m_deadlines.push_back(deadline);
    }

    for (std::size_t i = 0; i < gpuCounts.size(); ++i) {
        if (used[i]) {
            addLegendEntry(gpusName(gpuCounts[i]), colorOf(gpuCounts[i]), false);
        }
    }
    addLegendEntry(tr("waiting"), kWaiting, true);
    addLegendEntry(tr("deadline met"), kMet, true);
    addLegendEntry(tr("deadline missed"), kMissed, true);

    // Job names on the y axis, thinned so they never overlap (about 28 labels at most).
    auto ticker = QSharedPointer<QCPAxisTickerText>(new QCPAxisTickerText);
    const int step = std::max(1, static_cast<int>(std::ceil(m_rows / 28.0)));
    for (int row = 0; row < m_rows; row += step) {
        ticker->addTick(row, QString::fromStdString(jobs[static_cast<std::size_t>(row)].name));
    }
    m_plot->yAxis->setTicker(ticker);
    m_plot->yAxis->setRange(-0.7, std::max(1, m_rows) - 0.3);
    m_plot->xAxis->setRange(0, std::max(1.0, end * 1.02));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void ClusterGanttPlot::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange) {
        plot_style::applyPalette(m_plot, palette());
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    }
    QWidget::changeEvent(event);
}

} // namespace vtrain::ui
