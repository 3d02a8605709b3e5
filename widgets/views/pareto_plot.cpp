// SPDX-License-Identifier: MIT
#include "views/pareto_plot.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include <QCheckBox>
#include <QComboBox>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "models/format.h"
#include "models/pareto_frame.h"
#include "models/plan_table_model.h"
#include "views/axis_tickers.h"
#include "views/category_palette.h"
#include "views/plot_style.h"

namespace vtrain::ui {
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
    m_showAllBox = new QCheckBox(tr("Show all plans"), this);
    m_showAllBox->setObjectName(QStringLiteral("showAllPlans"));
    m_showAllBox->setToolTip(tr("Axes over every plan; unchecked, they frame the Pareto front and the plans near it "
                                "(up to %1x the fastest time and %2x the cheapest cost)")
                                 .arg(kTimeReach)
                                 .arg(kCostReach));
    controls->addWidget(m_showAllBox);
    controls->addStretch(); // the counts are under the chart (its note), so this row stays narrow at 1280 px

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
    connect(m_showAllBox, &QCheckBox::toggled, this, &ParetoPlot::setShowAll);
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

    // Layers: points on "main", hover and selection marks on a buffered layer above them, the front on
    // top of everything: the selected plan's ring once hid the front points beside it.
    m_plot->addLayer(QStringLiteral("marks"), m_plot->layer(QStringLiteral("main")), QCustomPlot::limAbove);
    m_plot->layer(QStringLiteral("marks"))->setMode(QCPLayer::lmBuffered);
    m_plot->addLayer(QStringLiteral("front"), m_plot->layer(QStringLiteral("marks")), QCustomPlot::limAbove);

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

    // Under the chart: how many plans, how many on the front, and how many lie beyond the axes and how far,
    // with arrows at the edges they lie past. A layout row of its own, so it never covers a point or a label;
    // exports carry it too.
    QFont small = plot_style::tickFont();
    small.setPointSizeF(small.pointSizeF() * 0.9);
    m_footnote = new QCPTextElement(m_plot, QString(), small);
    m_footnote->setObjectName(QStringLiteral("chartNote"));
    m_footnote->setMargins(QMargins(4, 2, 4, 4));
    for (QCPItemLine*& arrow : m_offChartArrows) {
        arrow = new QCPItemLine(m_plot);
        arrow->setLayer(QStringLiteral("marks"));
        arrow->setHead(QCPLineEnding(QCPLineEnding::esSpikeArrow, 10, 12));
        arrow->setClipToAxisRect(false);
        arrow->setVisible(false);
        for (QCPItemPosition* p : {arrow->start, arrow->end}) {
            p->setType(QCPItemPosition::ptAxisRectRatio);
        }
    }
    m_offChartArrows[0]->start->setCoords(0.955, 0.5); // slower plans: at the right edge
    m_offChartArrows[0]->end->setCoords(0.995, 0.5);
    m_offChartArrows[1]->start->setCoords(0.5, 0.055); // dearer plans: at the top edge
    m_offChartArrows[1]->end->setCoords(0.5, 0.005);
    connect(m_plot, &QCustomPlot::beforeReplot, this, &ParetoPlot::updateOffChart);
    keepTickLabelsApart(m_plot);
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
    // As many columns as the width holds, each as wide as its own widest entry (not all as wide as the
    // widest one): the legend then takes one row where it can, and the data area keeps the height.
    QCPLegend* legend = m_plot->legend;
    QList<int> widths;
    for (int i = 0; i < legend->elementCount(); ++i) {
        if (QCPLayoutElement* item = legend->elementAt(i)) { // a wrapped grid has empty cells
            widths << item->minimumOuterSizeHint().width();
        }
    }
    const int room = std::max(1, m_plot->width() - 20);
    int columns = 1;
    for (int n = static_cast<int>(widths.size()); n > 1; --n) {
        QList<int> columnWidths(n, 0);
        for (int i = 0; i < widths.size(); ++i) {
            columnWidths[i % n] = std::max(columnWidths[i % n], widths[i]); // columns first: entry i in column i % n
        }
        if (std::accumulate(columnWidths.begin(), columnWidths.end(), 0) + (n - 1) * legend->columnSpacing() <= room) {
            columns = n;
            break;
        }
    }
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
    for (QCPAxis* axis : {m_plot->xAxis, m_plot->yAxis}) {
        axis->setScaleType(m_log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    }
    setSpacedTicker(m_plot->xAxis, dayTickLabel);
    setSpacedTicker(m_plot->yAxis, dollarTickLabel);
}

void ParetoPlot::applyPalette()
{
    plot_style::applyPalette(m_plot, palette());
    // The front and the hover ring in the text colour: dark on light, light on dark.
    const QColor ink = palette().color(QPalette::WindowText);
    m_frontGraph->setPen(QPen(ink, 2.2));
    m_frontGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(ink, 1.6), palette().color(QPalette::Base), 8));
    m_hoverGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(ink, 1.5), Qt::NoBrush, 12));
    m_footnote->setTextColor(ink);
    for (QCPItemLine* arrow : m_offChartArrows) {
        arrow->setPen(QPen(ink, 2));
    }
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
    m_summaryText.clear();
}

ParetoPlot::Category& ParetoPlot::categoryFor(const QString& name, double order, const QColor& color)
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
        Category& c = categoryFor(categoryOf(r, m_dimension), categoryOrder(r, m_dimension), palette::colorOf(r, m_dimension));
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
    m_summaryText = m_filter ? tr("%1 of %2 feasible plans (filtered)").arg(formatCount(pointCount())).arg(formatCount(n))
                             : tr("%1 feasible plans").arg(formatCount(n));
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
        m_summaryText.clear();
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
    for (const Category& c : m_categories) { // the legend in value order; colours stay keyed to the values
        c.graph->removeFromLegend();
        c.graph->addToLegend();
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
        m_summaryText = tr("%1 feasible plans · %2 on the front").arg(formatCount(m_model->rowCount())).arg(keys.size());
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

std::vector<PlotPoint> ParetoPlot::drawnPoints() const
{
    std::vector<PlotPoint> points;
    points.reserve(m_points.size() + static_cast<std::size_t>(m_frontGraph->dataCount()));
    for (const Point& p : m_points) {
        points.push_back({p.days, p.cost});
    }
    for (auto it = m_frontGraph->data()->constBegin(); it != m_frontGraph->data()->constEnd(); ++it) {
        points.push_back({it->key, it->value});
    }
    return points;
}

void ParetoPlot::rescaleIfNotZoomed()
{
    if (m_userZoomed || m_points.empty()) {
        return;
    }
    const std::vector<PlotPoint> points = drawnPoints();
    const PlotRange r = m_showAll ? frameAll(points, m_log) : frameFront(points, m_log);
    m_plot->xAxis->setRange(r.x0, r.x1);
    m_plot->yAxis->setRange(r.y0, r.y1);
}

void ParetoPlot::setShowAll(bool all)
{
    if (m_showAllBox->isChecked() != all) {
        m_showAllBox->setChecked(all); // comes back here through the signal
        return;
    }
    if (m_showAll == all) {
        return;
    }
    m_showAll = all;
    m_userZoomed = false;
    rescaleIfNotZoomed();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    Q_EMIT showAllChanged(all);
}

void ParetoPlot::updateOffChart()
{
    const QCPRange xr = m_plot->xAxis->range();
    const QCPRange yr = m_plot->yAxis->range();
    int beyond = 0;
    bool slower = false;
    bool dearer = false;
    double maxDays = 0;
    double maxCost = 0;
    for (const Point& p : m_points) {
        if (!xr.contains(p.days) || !yr.contains(p.cost)) {
            ++beyond;
            slower = slower || p.days > xr.upper;
            dearer = dearer || p.cost > yr.upper;
        }
        maxDays = std::max(maxDays, p.days);
        maxCost = std::max(maxCost, p.cost);
    }
    m_offChart = beyond;
    m_offChartArrows[0]->setVisible(slower);
    m_offChartArrows[1]->setVisible(dearer);
    // The counts, then the plans beyond the axes; on a second line where one line would not fit.
    QString note = m_summaryText;
    if (beyond > 0) {
        QStringList reach;
        if (slower) {
            reach << tr("slowest %1").arg(formatDays(maxDays));
        }
        if (dearer) {
            reach << tr("dearest %1").arg(formatDollars(maxCost));
        }
        const QString off = tr("%1 beyond the axes (%2)").arg(formatCount(beyond), reach.join(QStringLiteral(", ")));
        const QString oneLine = note.isEmpty() ? off : note + QStringLiteral(" · ") + off;
        const bool fits = QFontMetrics(m_footnote->font()).horizontalAdvance(oneLine) + 16 <= m_plot->width();
        note = note.isEmpty() ? off : note + (fits ? QStringLiteral(" · ") : QStringLiteral("\n")) + off;
    }
    if (note == m_footnote->text()) {
        return;
    }
    m_footnote->setText(note);
    QCPLayoutGrid* layout = m_plot->plotLayout();
    const bool shown = layout->hasElement(layout->rowCount() - 1, 0) && layout->element(layout->rowCount() - 1, 0) == m_footnote;
    if (note.isEmpty() && shown) {
        layout->take(m_footnote);
        layout->simplify();
    } else if (!note.isEmpty() && !shown) {
        layout->addElement(layout->rowCount(), 0, m_footnote);
        layout->setRowStretchFactor(layout->rowCount() - 1, 0.001);
    }
}

QString ParetoPlot::chartNote() const
{
    return m_footnote->text();
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

QColor ParetoPlot::categoryColor(const QString& name) const
{
    for (const Category& c : m_categories) {
        if (c.name == name) {
            return c.graph->scatterStyle().brush().color();
        }
    }
    return {};
}

int ParetoPlot::frontPointCount() const
{
    return m_frontGraph->dataCount();
}

} // namespace vtrain::ui
