// SPDX-License-Identifier: MIT
#pragma once
// The pipeline timeline of one simulated plan: one row group per pipeline stage (compute lane plus the
// tensor, pipeline and data-parallel communication lanes). Wheel zooms about the cursor, dragging pans
// (horizontally in time, vertically through the stages), double-click shows the whole iteration, hovering
// shows a task's times. Drawing goes through level of detail, so 100,000 tasks stay smooth.
// Perfetto-style navigation: W/S zoom, A/D pan, F fits the selection, 0 the whole iteration; a click
// selects a task (taskSelected gives its details), Shift+drag selects a time range (its duration is
// drawn), a search outlines matching tasks; arrows show which pipeline send feeds which stage; the
// right-click menu copies and exports.
#include <memory>

#include <QAbstractScrollArea>

class QMenu;

#include "models/gantt_mapping.h"
#include "models/timeline_data.h"
#include "models/timeline_search.h"
#include "views/timeline_painter.h"

namespace vtrain {
struct SimulationResult;
}

namespace vtrain::ui {

class TimelineView : public QAbstractScrollArea {
    Q_OBJECT
public:
    explicit TimelineView(QWidget* parent = nullptr);

    void setResult(std::shared_ptr<const SimulationResult> result);
    void clear();
    // The time axis spans [0, endSeconds] instead of the own iteration (Compare: two plans on one axis).
    void setTimeExtent(double endSeconds);
    std::shared_ptr<const SimulationResult> result() const { return m_result; }
    const TimelineData& data() const { return m_data; }
    int stageCount() const { return m_data.stages; }
    const GanttMapping& mapping() const { return m_mapping; }

    // Renders the current time window with every stage, fitted to `size` (exports).
    void render(QPainter& painter, const QSize& size, const QString& title) const;
    // Height every row needs at its natural size, with ruler, legend and a title line.
    double naturalHeight() const;
    // Text of the tooltip for the task under `pos` (viewport coordinates); empty if none.
    QString describeAt(const QPoint& pos) const;
    // A task's description (tooltip and side panel); empty for an invalid one.
    QString describeTask(int row, int bar) const;

    // Selection by click (or search): its row and bar, -1 when none.
    void selectTask(int row, int bar);
    int selectedRow() const { return m_selRow; }
    int selectedBar() const { return m_selBar; }
    QString selectedDescription() const { return describeTask(m_selRow, m_selBar); }
    // A time range selected with Shift+drag (or set); empty when end <= start.
    void setRange(double startSeconds, double endSeconds);
    double rangeStart() const { return m_rangeStart; }
    double rangeEnd() const { return m_rangeEnd; }
    // Search (models/timeline_search.h): returns the number of matches and selects the first.
    int setSearch(const QString& query);
    int matchCount() const { return static_cast<int>(m_matches.size()); }
    int currentMatch() const { return m_matchIndex; }
    // The colour legend under the rows; Compare's two timelines leave it to the main one (room for stages).
    void setLegendVisible(bool visible);
    void setShowFlows(bool show);
    bool showFlows() const { return m_showFlows; }
    int flowCount() const { return static_cast<int>(m_flows.size()); }
    // The visible window as text ("12.5 ms → 40.1 ms (27.6 ms)").
    QString visibleRangeText() const;
    QMenu* buildContextMenu(const QPoint& pos); // for tests: the right-click menu at `pos`

public Q_SLOTS:
    void resetZoom();
    void zoomBy(double factor);
    void zoomTo(double startSeconds, double endSeconds);
    void panBy(double fractionOfWindow);
    // F: the selected task, else the time selection, else the whole iteration.
    void fitSelection();
    void nextMatch();
    void previousMatch();
    void clearSelection();

Q_SIGNALS:
    void windowChanged(double startSeconds, double endSeconds);
    void taskSelected(const QString& description); // empty when the selection is cleared
    void rangeChanged(double startSeconds, double endSeconds);
    void matchesChanged(int count, int current);
    void exportVisibleRequested();

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void scrollContentsBy(int dx, int dy) override;
    void keyPressEvent(QKeyEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;

private:
    void updateGeometryState();
    void showMatch();
    void ensureRowVisible(int row);
    // The data row under viewport y, or -1.
    int rowAtY(int y) const;

    std::shared_ptr<const SimulationResult> m_result;
    TimelineData m_data;
    TimelineLayout m_layout;
    std::vector<double> m_rowTops;
    GanttMapping m_mapping;
    QPoint m_dragLast;
    bool m_dragging = false;
    int m_hoverRow = -1;
    int m_hoverBar = -1;
    int m_selRow = -1;
    int m_selBar = -1;
    double m_rangeStart = 0;
    double m_rangeEnd = 0;
    bool m_rangeDragging = false;
    double m_rangeAnchor = 0;
    QPoint m_pressPos;
    std::vector<TimelineHit> m_matches;
    int m_matchIndex = -1;
    std::vector<PipelineFlow> m_flows;
    bool m_showFlows = true;
};

} // namespace vtrain::ui
