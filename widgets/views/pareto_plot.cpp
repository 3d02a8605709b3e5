// SPDX-License-Identifier: MIT
#include "views/pareto_plot.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "models/format.h"
#include "models/plan_table_model.h"
#include "views/plot_style.h"

namespace vtrain::ui {
namespace {

// Dollar tick labels ($200k, $1.5M) on linear and logarithmic axes.
class DollarTicker : public QCPAxisTicker {
protected:
    QString getTickLabel(double tick, const QLocale&, QChar, int) override { return formatDollars(tick); }
};
class DollarLogTicker : public QCPAxisTickerLog {
protected:
    QString getTickLabel(double tick, const QLocale&, QChar, int) override { return formatDollars(tick); }
};

} // namespace

ParetoPlot::ParetoPlot(QWidget* parent) : QWidget(parent)
{
    auto* controls = new QHBoxLayout;
    controls->setContentsMargins(4, 2, 4, 2);
    controls->addWidget(new QLabel(tr("Colour by:"), this));
    m_colorBy = new QComboBox(this);
    m_colorBy->setObjectName(QStringLiteral("colorBy"));
    m_colorBy->addItems(colorDimensionNames());
    controls->addWidget(m_colorBy);
    m_logBox = new QCheckBox(tr("Log axes"), this);
    m_logBox->setObjectName(QStringLiteral("logAxes"));
    m_logBox->setIcon(QIcon(QStringLiteral(":/icons/log-axes.svg")));
    controls->addWidget(m_logBox);
    controls->addStretch();
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("paretoSummary"));
    controls->addWidget(m_summary);

    m_plot = new QCustomPlot(this);
    m_plot->setObjectName(QStringLiteral("paretoCustomPlot"));
    m_plot->setMinimumSize(320, 200);
    m_plot->setMouseTracking(true);
    m_plot->installEventFilter(this);

    m_staleNote = new QLabel(this);
    m_staleNote->setObjectName(QStringLiteral("paretoStaleNote"));
    m_staleNote->setWordWrap(true);
    m_staleNote->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_staleNote->setStyleSheet(QStringLiteral("QLabel { background: #fff3cd; color: #5c4400; padding: 3px; }"));
    m_staleNote->setVisible(false);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addLayout(controls);
    layout->addWidget(m_staleNote);
    layout->addWidget(m_plot, 1);

    setupPlot();

    m_refresh.setSingleShot(true);
    m_refresh.setInterval(250);
    connect(&m_refresh, &QTimer::timeout, this, [this] {
        appendPending();
        rescaleIfNotZoomed();
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    });
    connect(m_colorBy, &QComboBox::currentIndexChanged, this, [this](int index) { setColorDimension(static_cast<ColorDimension>(index)); });
    connect(m_colorBy, &QComboBox::activated, this, [this](int index) { Q_EMIT colorDimensionChosen(static_cast<ColorDimension>(index)); });
    connect(m_logBox, &QCheckBox::toggled, this, &ParetoPlot::setLogAxes);
}

ParetoPlot::~ParetoPlot() = default;

void ParetoPlot::setupPlot()
{
    m_plot->setNoAntialiasingOnDrag(true);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->plotLayout()->insertRow(0);
    m_title = new QCPTextElement(m_plot, tr("Training time vs cost"), plot_style::titleFont());
    m_plot->plotLayout()->addElement(0, 0, m_title);
    m_plot->xAxis->setLabel(tr("Training time (days)"));
    m_plot->yAxis->setLabel(tr("Training cost"));
    m_plot->xAxis->setLabelFont(plot_style::labelFont());
    m_plot->yAxis->setLabelFont(plot_style::labelFont());
    m_plot->xAxis->setTickLabelFont(plot_style::tickFont());
    m_plot->yAxis->setTickLabelFont(plot_style::tickFont());

    // Layers: points on "main", the front above them, hover and selection marks on a buffered overlay.
    m_plot->addLayer(QStringLiteral("front"), m_plot->layer(QStringLiteral("main")), QCustomPlot::limAbove);
    m_plot->addLayer(QStringLiteral("marks"), m_plot->layer(QStringLiteral("front")), QCustomPlot::limAbove);
    m_plot->layer(QStringLiteral("marks"))->setMode(QCPLayer::lmBuffered);

    m_frontGraph = m_plot->addGraph();
    m_frontGraph->setLayer(QStringLiteral("front"));
    m_frontGraph->setName(tr("Pareto front"));
    m_frontGraph->setLineStyle(QCPGraph::lsStepLeft); // cost stays until the next faster plan: the attainable region
    m_frontGraph->setPen(QPen(QColor(0x20, 0x20, 0x20), 2.2));
    m_frontGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(QColor(0x20, 0x20, 0x20), 1.6), Qt::white, 8));

    m_selectedGraph = m_plot->addGraph();
    m_selectedGraph->setLayer(QStringLiteral("marks"));
    m_selectedGraph->setLineStyle(QCPGraph::lsNone);
    m_selectedGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(QColor(0xd6, 0x27, 0x28), 3), Qt::NoBrush, 16));
    m_selectedGraph->removeFromLegend();

    // Time and cost both scale with the iteration time, so the band is a segment along the ray through
    // the plan's point.
    m_selectedBandGraph = m_plot->addGraph();
    m_selectedBandGraph->setLayer(QStringLiteral("marks"));
    m_selectedBandGraph->setName(tr("selected plan, 80% band"));
    m_selectedBandGraph->setLineStyle(QCPGraph::lsLine);
    m_selectedBandGraph->setPen(QPen(QColor(0xd6, 0x27, 0x28, 170), 4, Qt::SolidLine, Qt::FlatCap));
    m_selectedBandGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
    m_selectedBandGraph->removeFromLegend();

    m_pinnedGraph = m_plot->addGraph();
    m_pinnedGraph->setLayer(QStringLiteral("marks"));
    m_pinnedGraph->setName(tr("A (pinned in Compare)"));
    m_pinnedGraph->setLineStyle(QCPGraph::lsNone);
    m_pinnedGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, QPen(QColor(0x6a, 0x1b, 0x9a), 2.5), QColor(0xce, 0x93, 0xd8), 14));
    m_pinnedGraph->removeFromLegend();

    m_hoverGraph = m_plot->addGraph();
    m_hoverGraph->setLayer(QStringLiteral("marks"));
    m_hoverGraph->setLineStyle(QCPGraph::lsNone);
    m_hoverGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(QColor(0x20, 0x20, 0x20), 1.5), Qt::NoBrush, 12));
    m_hoverGraph->removeFromLegend();

    // The legend gets its own row between title and chart: inside the axis rect it once hid the fastest
    // front point and the selected plan (fast and expensive is where the front starts).
    m_plot->legend->setVisible(true);
    m_plot->legend->setFont(plot_style::tickFont());
    m_plot->legend->setBrush(Qt::NoBrush);
    m_plot->legend->setBorderPen(Qt::NoPen);
    m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    m_plot->legend->setWrap(6);
    m_plot->legend->setRowSpacing(0);
    m_plot->legend->setColumnSpacing(10);
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    auto* legendRow = new QCPLayoutGrid;
    m_plot->plotLayout()->insertRow(1);
    m_plot->plotLayout()->addElement(1, 0, legendRow);
    legendRow->addElement(0, 0, new QCPLayoutElement(m_plot)); // spacers centre the legend
    legendRow->addElement(0, 1, m_plot->legend);
    legendRow->addElement(0, 2, new QCPLayoutElement(m_plot));
    legendRow->setColumnStretchFactor(1, 0.001);
    legendRow->setMargins(QMargins(0, 0, 0, 0));
    m_plot->plotLayout()->setRowStretchFactor(1, 0.001);
    m_plot->plotLayout()->setRowSpacing(0);
    applyAxisScale();
    applyPalette();
}

void ParetoPlot::setModel(PlanTableModel* model)
{
    if (m_model) {
        disconnect(m_model, nullptr, this, nullptr);
    }
    m_model = model;
    clearPoints();
    if (!model) {
        return;
    }
    connect(model, &QAbstractItemModel::rowsInserted, this, [this] {
        if (!m_refresh.isActive()) {
            m_refresh.start();
        }
    });
    connect(model, &QAbstractItemModel::modelReset, this, [this] {
        clearPoints();
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    });
    connect(model, &PlanTableModel::frontChanged, this, [this] {
        // The sweep is over: the remaining rows, categories in order (legend and colours), then the front.
        appendPending();
        sortCategories();
        updateFront();
        updateMarkers();
        rescaleIfNotZoomed();
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    });
    flush();
}

void ParetoPlot::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    fitLegend();
}

void ParetoPlot::fitLegend()
{
    QCPLegend* legend = m_plot->legend;
    int widest = 1;
    int items = 0;
    for (int i = 0; i < legend->elementCount(); ++i) {
        if (QCPLayoutElement* item = legend->elementAt(i)) { // a wrapped grid has empty cells
            widest = std::max(widest, item->minimumOuterSizeHint().width());
            ++items;
        }
    }
    const int width = std::max(1, m_plot->width() - 20);
    const int columns = std::clamp(width / (widest + legend->columnSpacing()), 1, std::max(1, items));
    if (legend->wrap() != columns) {
        legend->setWrap(columns);
        legend->setFillOrder(legend->fillOrder(), true); // re-flows the entries into the new column count
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

QString ParetoPlot::title() const
{
    return m_title->text();
}

void ParetoPlot::setStaleNote(const QString& note)
{
    m_staleNote->setText(note);
    m_staleNote->setVisible(!note.isEmpty());
}

QString ParetoPlot::staleNote() const
{
    return m_staleNote->text();
}

QRect ParetoPlot::legendRect() const
{
    return m_plot->legend->outerRect();
}

QRect ParetoPlot::dataRect() const
{
    return m_plot->axisRect()->rect();
}

void ParetoPlot::setPlanFilter(std::function<bool(const PlanRow&)> filter)
{
    m_filter = std::move(filter);
    rebuildCategories();
    rescaleIfNotZoomed();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void ParetoPlot::setPinned(std::optional<QPointF> daysAndCost)
{
    m_pinned = daysAndCost;
    m_pinnedGraph->data()->clear();
    if (m_pinned) {
        m_pinnedGraph->addData(m_pinned->x(), m_pinned->y());
        m_pinnedGraph->addToLegend();
    } else {
        m_pinnedGraph->removeFromLegend();
    }
    fitLegend();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void ParetoPlot::setTitle(const QString& title)
{
    m_title->setText(title);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void ParetoPlot::setColorDimension(ColorDimension dimension)
{
    if (m_colorBy->currentIndex() != static_cast<int>(dimension)) {
        m_colorBy->setCurrentIndex(static_cast<int>(dimension)); // comes back here through the signal
        return;
    }
    if (dimension == m_dimension && !m_categories.empty()) {
        return;
    }
    m_dimension = dimension;
    rebuildCategories();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    Q_EMIT colorDimensionChanged(dimension);
}

void ParetoPlot::setLogAxes(bool log)
{
    if (m_logBox->isChecked() != log) {
        m_logBox->setChecked(log);
        return;
    }
    if (m_log == log) {
        return;
    }
    m_log = log;
    applyAxisScale();
    m_userZoomed = false;
    rescaleIfNotZoomed();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    Q_EMIT logAxesChanged(log);
}

void ParetoPlot::applyAxisScale()
{
    m_plot->xAxis->setScaleType(m_log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    m_plot->yAxis->setScaleType(m_log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    if (m_log) {
        m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
        m_plot->yAxis->setTicker(QSharedPointer<DollarLogTicker>::create());
    } else {
        m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
        m_plot->yAxis->setTicker(QSharedPointer<DollarTicker>::create());
    }
}

void ParetoPlot::applyPalette()
{
    plot_style::applyPalette(m_plot, palette());
    // The front and the hover ring in the text colour: dark on light, light on dark.
    const QColor ink = palette().color(QPalette::WindowText);
    m_frontGraph->setPen(QPen(ink, 2.2));
    m_frontGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(ink, 1.6), palette().color(QPalette::Base), 8));
    m_hoverGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(ink, 1.5), Qt::NoBrush, 12));
}

void ParetoPlot::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange) {
        applyPalette();
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    }
    QWidget::changeEvent(event);
}

void ParetoPlot::clearPoints()
{
    for (Category& c : m_categories) {
        m_plot->removeGraph(c.graph);
    }
    m_categories.clear();
    m_points.clear();
    m_pointsSorted = true;
    m_appended = 0;
    m_selectedRow = -1;
    m_hoverRow = -1;
    m_userZoomed = false;
    m_frontGraph->data()->clear();
    m_selectedGraph->data()->clear();
    m_hoverGraph->data()->clear();
    m_summary->clear();
}

ParetoPlot::Category& ParetoPlot::categoryFor(const QString& name, double order)
{
    for (Category& c : m_categories) {
        if (c.name == name) {
            return c;
        }
    }
    Category c;
    c.name = name;
    c.order = order;
    c.graph = m_plot->addGraph();
    c.graph->setName(name);
    c.graph->setLineStyle(QCPGraph::lsNone);
    c.graph->setAntialiased(false); // dense scatter: antialiasing costs much and shows little
    c.graph->setAntialiasedScatters(false);
    const QColor color = plot_style::categoryColor(static_cast<int>(m_categories.size()));
    c.graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, color, 5));
    m_categories.push_back(c);
    return m_categories.back();
}

void ParetoPlot::appendPending()
{
    if (!m_model) {
        return;
    }
    const int n = m_model->rowCount();
    if (m_appended >= n) {
        return;
    }
    std::map<QCPGraph*, std::pair<QVector<double>, QVector<double>>> batches;
    for (int row = m_appended; row < n; ++row) {
        const PlanRow& r = m_model->planRow(row);
        if (m_filter && !m_filter(r)) {
            continue; // filtered out in the table: not on the chart either
        }
        Category& c = categoryFor(categoryOf(r, m_dimension), categoryOrder(r, m_dimension));
        auto& [keys, values] = batches[c.graph];
        keys.push_back(r.training_days);
        values.push_back(r.cost_usd);
        m_points.push_back(Point{r.training_days, r.cost_usd, row});
    }
    m_pointsSorted = false;
    for (auto& [graph, batch] : batches) {
        graph->addData(batch.first, batch.second);
    }
    m_appended = n;
    // Small markers once the cloud gets dense, so the front and clusters stay readable.
    const double size = n > 20000 ? 3 : n > 2000 ? 4 : 6;
    for (Category& c : m_categories) {
        QCPScatterStyle style = c.graph->scatterStyle();
        style.setSize(size);
        c.graph->setScatterStyle(style);
    }
    m_summary->setText(m_filter ? tr("%1 of %2 feasible plans (filtered)").arg(formatCount(pointCount())).arg(formatCount(n))
                                : tr("%1 feasible plans").arg(formatCount(n)));
}

void ParetoPlot::rebuildCategories()
{
    for (Category& c : m_categories) {
        m_plot->removeGraph(c.graph);
    }
    m_categories.clear();
    m_points.clear();
    m_appended = 0;
    if (!m_model || m_model->rowCount() == 0) {
        m_summary->clear();
        return;
    }
    appendPending();
    sortCategories();
    updateMarkers();
}

void ParetoPlot::sortCategories()
{
    std::stable_sort(m_categories.begin(), m_categories.end(),
                     [](const Category& a, const Category& b) { return a.order != b.order ? a.order < b.order : a.name < b.name; });
    for (std::size_t i = 0; i < m_categories.size(); ++i) {
        QCPGraph* graph = m_categories[i].graph;
        QCPScatterStyle style = graph->scatterStyle();
        const QColor color = plot_style::categoryColor(static_cast<int>(i));
        style.setPen(color);
        style.setBrush(color);
        graph->setScatterStyle(style);
        graph->removeFromLegend();
        graph->addToLegend();
    }
    fitLegend();
}

void ParetoPlot::updateFront()
{
    m_frontGraph->data()->clear();
    if (!m_model) {
        return;
    }
    QVector<double> keys;
    QVector<double> values;
    for (int row : m_model->frontRows()) {
        const PlanRow& r = m_model->planRow(row);
        keys.push_back(r.training_days);
        values.push_back(r.cost_usd);
    }
    m_frontGraph->setData(keys, values, true); // frontRows() is ordered by training time
    if (!keys.isEmpty()) {
        m_summary->setText(tr("%1 feasible plans · %2 on the front").arg(formatCount(m_model->rowCount())).arg(keys.size()));
    }
}

void ParetoPlot::setSelectedRow(int row)
{
    m_selectedRow = (m_model && row >= 0 && row < m_appended) ? row : -1;
    updateMarkers();
    if (m_legendChanged) {
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    } else {
        m_plot->layer(QStringLiteral("marks"))->replot();
    }
}

QVector<QPointF> ParetoPlot::selectedBand() const
{
    QVector<QPointF> points;
    for (auto it = m_selectedBandGraph->data()->constBegin(); it != m_selectedBandGraph->data()->constEnd(); ++it) {
        points.push_back({it->key, it->value});
    }
    return points;
}

void ParetoPlot::updateMarkers()
{
    m_selectedGraph->data()->clear();
    m_selectedBandGraph->data()->clear();
    bool band = false;
    if (m_model && m_selectedRow >= 0 && m_selectedRow < m_model->rowCount()) {
        const PlanRow& r = m_model->planRow(m_selectedRow);
        m_selectedGraph->addData(r.training_days, r.cost_usd);
        if (r.iteration_time_s > 0 && r.iteration_time_high_s > r.iteration_time_low_s) {
            const double low = r.iteration_time_low_s / r.iteration_time_s;
            const double high = r.iteration_time_high_s / r.iteration_time_s;
            m_selectedBandGraph->setData({r.training_days * low, r.training_days * high}, {r.cost_usd * low, r.cost_usd * high}, true);
            band = true;
        }
    }
    // true when the legend entry came or went: the legend layer needs a replot then, not only the marks
    m_legendChanged = band ? m_selectedBandGraph->addToLegend() : m_selectedBandGraph->removeFromLegend();
    if (m_legendChanged) {
        fitLegend();
    }
    m_hoverGraph->data()->clear();
    if (m_model && m_hoverRow >= 0 && m_hoverRow < m_model->rowCount()) {
        const PlanRow& r = m_model->planRow(m_hoverRow);
        m_hoverGraph->addData(r.training_days, r.cost_usd);
    }
}

void ParetoPlot::rescaleIfNotZoomed()
{
    if (m_userZoomed || m_points.empty()) {
        return;
    }
    double x0 = m_points.front().days, x1 = x0, y0 = m_points.front().cost, y1 = y0;
    for (const Point& p : m_points) {
        x0 = std::min(x0, p.days);
        x1 = std::max(x1, p.days);
        y0 = std::min(y0, p.cost);
        y1 = std::max(y1, p.cost);
    }
    if (m_log) {
        // A margin of a few percent in log space, and never a range that touches zero.
        x0 = std::max(x0, 1e-9);
        y0 = std::max(y0, 1e-9);
        m_plot->xAxis->setRange(x0 / 1.15, x1 * 1.15);
        m_plot->yAxis->setRange(y0 / 1.15, y1 * 1.15);
    } else {
        const double dx = std::max((x1 - x0) * 0.05, std::abs(x1) * 0.02 + 1e-9);
        const double dy = std::max((y1 - y0) * 0.05, std::abs(y1) * 0.02 + 1e-9);
        m_plot->xAxis->setRange(std::max(0.0, x0 - dx), x1 + dx);
        m_plot->yAxis->setRange(std::max(0.0, y0 - dy), y1 + dy);
    }
}

void ParetoPlot::flush()
{
    m_refresh.stop();
    appendPending();
    updateMarkers();
    rescaleIfNotZoomed();
    m_plot->replot();
}

int ParetoPlot::pointCount() const
{
    int n = 0;
    for (const Category& c : m_categories) {
        n += c.graph->dataCount();
    }
    return n;
}

int ParetoPlot::frontPointCount() const
{
    return m_frontGraph->dataCount();
}

} // namespace vtrain::ui
