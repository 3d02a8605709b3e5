// SPDX-License-Identifier: MIT
#pragma once
// The Pareto chart: every feasible plan a point (training days vs cost), coloured by a chosen dimension
// (colours keyed to values, category_palette.h), the front as a step line drawn above everything else.
// The axes frame the front and the plans near it (pareto_frame.h) unless "Show all plans" is checked; a
// note under the chart counts the plans beyond the axes. Tick labels never touch (axis_tickers.h).
// Wraps QCustomPlot behind domain verbs so callers never touch graphs.
// Performance (after QCustomPlot's notes): one graph per colour category fed in batches, no per-point
// items, no antialiasing on the dense graphs, queued replots, and hover/selection markers on their own
// buffered layer so moving the mouse does not redraw a million points.
#include <array>
#include <functional>
#include <optional>
#include <vector>

#include <QColor>
#include <QPointF>
#include <QPointer>
#include <QTimer>
#include <QVector>
#include <QWidget>

#include "models/pareto_frame.h"
#include "models/plan_dimensions.h"
#include "vtrain/explorer.h"

class QCustomPlot;
class QCPGraph;
class QComboBox;
class QCheckBox;
class QLabel;
class QCPItemLine;
class QCPTextElement;

namespace vtrain::ui {

class PlanTableModel;

class ParetoPlot : public QWidget {
    Q_OBJECT
public:
    explicit ParetoPlot(QWidget* parent = nullptr);
    ~ParetoPlot() override;

    void setModel(PlanTableModel* model);
    void setColorDimension(ColorDimension dimension);
    ColorDimension colorDimension() const { return m_dimension; }
    void setLogAxes(bool log);
    bool logAxes() const { return m_log; }
    // Axes over every plan instead of the front and its neighbourhood (the default).
    void setShowAll(bool all);
    bool showsAll() const { return m_showAll; }
    // Shown plans outside the axes' ranges, and the note under the chart: the counts of plans and of the
    // front, and how many plans lie beyond the axes.
    int offChartCount() const { return m_offChart; }
    QString chartNote() const;
    void setTitle(const QString& title);
    QString title() const;
    // A banner over the chart when its points belong to other inputs than the editor's; empty hides it.
    void setStaleNote(const QString& note);
    QString staleNote() const;
    // The legend's and the data area's rectangles (customPlot() coordinates): the legend never covers data.
    QRect legendRect() const;
    QRect dataRect() const;

    // Only plans passing `filter` are drawn (the table's filter); an empty function shows every plan.
    void setPlanFilter(std::function<bool(const vtrain::PlanRow&)> filter);
    // The Compare tab's pinned plan A, marked with its own symbol; nullopt clears it.
    void setPinned(std::optional<QPointF> daysAndCost);
    std::optional<QPointF> pinned() const { return m_pinned; }

    // The plan (model row) marked as selected; -1 clears the mark.
    void setSelectedRow(int row);
    int selectedRow() const { return m_selectedRow; }

    QCustomPlot* customPlot() const { return m_plot; }
    // Brings the plot up to date with the model now (tests, export) instead of at the next refresh tick.
    void flush();
    int pointCount() const;
    int frontPointCount() const;
    int categoryCount() const { return static_cast<int>(m_categories.size()); }
    // The colour a category's points are drawn in ("tp 8", "b200-sxm-180gb"); invalid when none is shown.
    QColor categoryColor(const QString& name) const;
    // The selected plan's 80% band as (days, cost) end points; empty without a selection or a band.
    QVector<QPointF> selectedBand() const;
    // Where a row's point is drawn, in widget coordinates of customPlot(); for tests.
    QPoint pixelOfRow(int row) const;
    // The row whose point is nearest to `pos` (customPlot() coordinates) within `radius` pixels, or -1.
    int rowAt(const QPointF& pos, double radius = 8.0) const;

Q_SIGNALS:
    void rowClicked(int row);
    void colorDimensionChanged(vtrain::ui::ColorDimension dimension);
    void colorDimensionChosen(vtrain::ui::ColorDimension dimension); // by the user, in the plot's "Colour by" box
    void logAxesChanged(bool log);
    void showAllChanged(bool all);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    struct Point {
        double days;
        double cost;
        int row;
    };
    struct Category {
        QString name;
        double order = 0;
        QCPGraph* graph = nullptr;
    };

    void setupPlot();
    void clearPoints();
    void appendPending();
    void rebuildCategories(); // regroups every point (a new colour dimension)
    void sortCategories();    // orders legend and colours (tp 1, 2, 4, ...) without touching the points
    void updateFront();
    void updateMarkers();
    void rescaleIfNotZoomed();
    std::vector<PlotPoint> drawnPoints() const; // the shown plans and the front
    void updateOffChart();                      // the note under the chart, and arrows for plans beyond the axes
    void applyAxisScale();
    void applyPalette();
    void fitLegend(); // as many legend columns as the width holds, so no entry is cut
    Category& categoryFor(const QString& name, double order, const QColor& color);
    void ensureSortedIndex() const;

    QCustomPlot* m_plot = nullptr;
    QComboBox* m_colorBy = nullptr;
    QCheckBox* m_logBox = nullptr;
    QCheckBox* m_showAllBox = nullptr;
    QString m_summaryText; // "94,041 feasible plans · 5 on the front", the note's first part
    QLabel* m_staleNote = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPTextElement* m_footnote = nullptr;           // under the chart: plans beyond the axes
    std::array<QCPItemLine*, 2> m_offChartArrows{}; // at the right edge (slower plans), at the top (dearer)
    QPointer<PlanTableModel> m_model;
    ColorDimension m_dimension = ColorDimension::TensorParallel;
    bool m_log = false;
    bool m_showAll = false;
    bool m_userZoomed = false;
    int m_offChart = 0;
    std::vector<Category> m_categories;
    QCPGraph* m_frontGraph = nullptr;
    QCPGraph* m_selectedGraph = nullptr;
    QCPGraph* m_selectedBandGraph = nullptr; // where the selected plan's real (days, cost) falls: its 80% band
    bool m_legendChanged = false;
    QCPGraph* m_hoverGraph = nullptr;
    QCPGraph* m_pinnedGraph = nullptr;
    std::optional<QPointF> m_pinned;
    std::function<bool(const vtrain::PlanRow&)> m_filter;
    int m_appended = 0; // model rows already plotted
    int m_selectedRow = -1;
    int m_hoverRow = -1;
    mutable std::vector<Point> m_points; // for hit tests, sorted by days on demand
    mutable bool m_pointsSorted = true;
    QPoint m_pressPos;
    QTimer m_refresh; // coalesces streamed rows into a few replots per second
};

} // namespace vtrain::ui
