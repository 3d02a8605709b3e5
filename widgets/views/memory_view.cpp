// SPDX-License-Identifier: MIT
#include "views/memory_view.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <QMouseEvent>
#include <QToolTip>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "models/format.h"
#include "views/plot_style.h"
#include "vtrain/simulation_result.h"

namespace vtrain::ui {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct Part {
    const char* name;
    QColor color;
    double (*bytes)(const StageMemory&);
};

// Bottom to top. Expert parts are lighter shades of their dense counterparts.
const std::vector<Part>& parts()
{
    static const std::vector<Part> list{
        {"weights", QColor(0x4e, 0x79, 0xa7), [](const StageMemory& m) { return m.weights_bytes - m.expert_weights_bytes; }},
        {"expert weights", QColor(0xa0, 0xcb, 0xe8), [](const StageMemory& m) { return m.expert_weights_bytes; }},
        {"gradients", QColor(0xf2, 0x8e, 0x2b), [](const StageMemory& m) { return m.gradients_bytes - m.expert_gradients_bytes; }},
        {"optimizer states", QColor(0x59, 0xa1, 0x4f), [](const StageMemory& m) { return m.optimizer_bytes - m.expert_optimizer_bytes; }},
        {"expert gradients + optimizer", QColor(0x8c, 0xd1, 0x7d),
         [](const StageMemory& m) { return m.expert_gradients_bytes + m.expert_optimizer_bytes; }},
        {"activations", QColor(0xb0, 0x7a, 0xa1), [](const StageMemory& m) { return m.activations_bytes; }},
        {"working buffers", QColor(0xba, 0xb0, 0xac), [](const StageMemory& m) { return m.working_bytes; }},
    };
    return list;
}

bool isExpertPart(const Part& p)
{
    return QLatin1String(p.name).startsWith(QLatin1String("expert"));
}

} // namespace

QStringList MemoryView::partNames()
{
    QStringList names;
    for (const Part& p : parts()) {
        names << tr(p.name);
    }
    return names;
}

MemoryView::MemoryView(QWidget* parent) : QWidget(parent)
{
    m_plot = new QCustomPlot(this);
    m_plot->setObjectName(QStringLiteral("memoryPlot"));
    // Its layout asks for its legend's full height (143 px), which set the selected-plan dock's minimum
    // and took the Pareto chart's room at 1280x720; the default dock gives it more than this anyway.
    m_plot->setMinimumHeight(120);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);

    m_plot->plotLayout()->insertRow(0);
    m_title = new QCPTextElement(m_plot, tr("Memory per stage (one GPU)"), plot_style::titleFont());
    m_plot->plotLayout()->addElement(0, 0, m_title);
    m_plot->xAxis->setLabel(tr("Pipeline stage"));
    m_plot->yAxis->setLabel(tr("GiB"));
    m_plot->xAxis->setLabelFont(plot_style::labelFont());
    m_plot->yAxis->setLabelFont(plot_style::labelFont());
    m_plot->xAxis->grid()->setVisible(false);

    QCPBars* below = nullptr;
    for (const Part& part : parts()) {
        auto* bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
        bars->setName(tr(part.name));
        bars->setBrush(part.color);
        bars->setPen(QPen(part.color.darker(130)));
        bars->setWidthType(QCPBars::wtPlotCoords);
        bars->setWidth(0.7);
        if (below) {
            bars->moveAbove(below);
        }
        below = bars;
        m_parts.push_back(bars);
    }
    m_capacity = new QCPItemStraightLine(m_plot);
    m_capacity->setPen(QPen(QColor(0xd6, 0x27, 0x28), 2, Qt::DashLine));
    m_capacityLabel = new QCPItemText(m_plot);
    m_capacityLabel->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
    m_capacityLabel->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
    m_capacityLabel->position->setTypeY(QCPItemPosition::ptPlotCoords);
    m_capacityLabel->setColor(QColor(0xd6, 0x27, 0x28));
    m_capacityLabel->setPadding(QMargins(0, 0, 0, 4)); // above the dashed line, not struck through by it
    m_capacity->setVisible(false);
    m_capacityLabel->setVisible(false);

    // The legend sits right of the bars, in its own column: inside the axis rect it would hide stages.
    m_plot->legend->setVisible(true);
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    auto* side = new QCPLayoutGrid;
    m_plot->plotLayout()->addElement(1, 1, side);
    side->addElement(0, 0, m_plot->legend);
    side->addElement(1, 0, new QCPLayoutElement(m_plot)); // spacer: keeps the legend at the top
    side->setRowStretchFactor(0, 0.01);
    m_plot->plotLayout()->setColumnStretchFactor(1, 0.01);
    m_plot->legend->setBorderPen(Qt::NoPen);
    m_plot->legend->setBrush(Qt::NoBrush);
    plot_style::applyPalette(m_plot, palette());
    m_plot->setMouseTracking(true);
    m_plot->installEventFilter(this);
}

int MemoryView::stageAt(const QPoint& pos) const
{
    if (!m_result || !m_plot->axisRect()->rect().contains(pos)) {
        return -1;
    }
    const double x = m_plot->xAxis->pixelToCoord(pos.x());
    const int stage = qRound(x);
    if (stage < 0 || stage >= stageCount() || std::abs(x - stage) > 0.4) {
        return -1;
    }
    const double y = m_plot->yAxis->pixelToCoord(pos.y());
    return y >= 0 && y <= m_result->stages[static_cast<std::size_t>(stage)].memory.total_bytes() / kGiB * 1.02 ? stage : -1;
}

QString MemoryView::describeStage(int stage) const
{
    if (!m_result || stage < 0 || stage >= stageCount()) {
        return {};
    }
    const StageMemory& m = m_result->stages[static_cast<std::size_t>(stage)].memory;
    const double total = m.total_bytes();
    QString text = tr("Stage %1 (one GPU): %2").arg(stage).arg(formatGiB(total / kGiB));
    for (const Part& part : parts()) {
        const double bytes = part.bytes(m);
        if (isExpertPart(part) && bytes <= 0) {
            continue; // a dense model, or a stage without MoE layers
        }
        text += QStringLiteral("\n  %1: %2 (%3)").arg(tr(part.name), formatGiB(bytes / kGiB), formatPercent(total > 0 ? bytes / total : 0));
    }
    const double usable = m_result->usable_memory_gib;
    if (usable > 0) {
        const double left = usable - total / kGiB;
        text += left >= 0 ? tr("\n%1 of %2 usable left").arg(formatGiB(left), formatGiB(usable))
                          : tr("\n%1 over the %2 usable").arg(formatGiB(-left), formatGiB(usable));
    }
    return text;
}

bool MemoryView::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_plot && event->type() == QEvent::MouseMove) {
        auto* e = static_cast<QMouseEvent*>(event);
        const int stage = stageAt(e->position().toPoint());
        if (stage >= 0) {
            QToolTip::showText(e->globalPosition().toPoint(), describeStage(stage), m_plot);
        } else {
            QToolTip::hideText();
        }
    }
    return QWidget::eventFilter(watched, event);
}

int MemoryView::stageCount() const
{
    return m_result ? static_cast<int>(m_result->stages.size()) : 0;
}

void MemoryView::clear()
{
    setResult(nullptr);
}

void MemoryView::setResult(std::shared_ptr<const SimulationResult> result)
{
    m_result = std::move(result);
    QVector<double> keys;
    std::vector<QVector<double>> values(m_parts.size());
    double peak = 0;
    if (m_result) {
        for (std::size_t s = 0; s < m_result->stages.size(); ++s) {
            const StageMemory& m = m_result->stages[s].memory;
            keys.push_back(static_cast<double>(s));
            for (std::size_t i = 0; i < parts().size(); ++i) {
                values[i].push_back(parts()[i].bytes(m) / kGiB);
            }
            peak = std::max(peak, m.total_bytes() / kGiB);
        }
    }
    for (std::size_t i = 0; i < m_parts.size(); ++i) {
        m_parts[i]->setData(keys, values[i], true);
        // Expert parts in the legend only when there are experts: a dense model's legend stays as it was.
        const bool shown = !isExpertPart(parts()[i]) || std::any_of(values[i].begin(), values[i].end(), [](double v) { return v > 0; });
        m_parts[i]->setVisible(shown);
        if (shown) {
            m_parts[i]->addToLegend();
        } else {
            m_parts[i]->removeFromLegend();
        }
    }
    // Seven entries are taller than the dock on a laptop: then two columns of four.
    m_plot->legend->setWrap(m_plot->legend->itemCount() > 5 ? 4 : 0);
    m_plot->legend->setFillOrder(QCPLayoutGrid::foRowsFirst, true);
    const double usable = m_result ? m_result->usable_memory_gib : 0;
    m_capacity->setVisible(usable > 0);
    m_capacityLabel->setVisible(usable > 0);
    m_capacity->point1->setCoords(0, usable);
    m_capacity->point2->setCoords(1, usable);
    m_capacityLabel->position->setCoords(0.99, usable);
    m_capacityLabel->setText(tr("usable capacity %1").arg(formatGiB(usable)));
    m_title->setText(
        m_result ? tr("Memory per stage (one GPU): peak %1 of %2 usable%3")
                       .arg(formatGiB(m_result->peak_memory_gib), formatGiB(usable), m_result->fits_memory ? QString() : tr(" (does not fit)"))
                 : tr("Memory per stage (one GPU)"));

    // Integer stage ticks, thinned out for deep pipelines.
    auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
    const int n = static_cast<int>(keys.size());
    ticker->setTickStep(n > 40 ? 5.0 : n > 16 ? 2.0 : 1.0);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssNone);
    m_plot->xAxis->setTicker(ticker);
    m_plot->xAxis->setRange(-0.6, std::max(1, n) - 0.4);
    // Room above the capacity line for its label (about 15% of a dock-high plot), else it is clipped.
    m_plot->yAxis->setRange(0, std::max({peak * 1.08, usable / 0.85, 1.0}));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void MemoryView::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange) {
        plot_style::applyPalette(m_plot, palette());
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    }
    QWidget::changeEvent(event);
}

} // namespace vtrain::ui
